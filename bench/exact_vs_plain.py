#!/usr/bin/env python3
"""--exact against a run without it, at equal budget (issue 36, item 3).

    python3 bench/exact_vs_plain.py [--mlsys build/release/mlsys] [--seeds 3] [--threads 2] [--out DIR]

Instances: the shared benchmarks (../shared/benchmarks; skipped with a message when absent) and 20
generated graphs of 10-20 ops (five families x sizes 10, 13, 16, 20, seed 1). Each instance runs
with and without --exact, interleaved per seed, at its contest limit (mlsys's own budget inside it)
for graphs of up to 20 ops; above 20 ops the exact solver declines at once ("too large"), so those
run at --seconds 3 to show that the flag costs nothing there. Every output is checked with
`mlsys evaluate`. Prints a Markdown table: median latency of each, their ratio, and whether --exact
was worse (ratio > 1 + 1e-9); exit 1 if any run was invalid.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "benchmarks")
FAMILIES = ["transformer", "mixer", "gemm-chain", "cnn", "random"]


def ops_of(path):
    with open(path) as f:
        return len(json.load(f)["op_types"])


def run(ml, inst, out, seed, threads, exact, seconds):
    stats = out + ".stats.json"
    cmd = [ml, "solve", inst, out, "--seed", str(seed), "--threads", str(threads), "--stats", stats]
    if seconds:
        cmd += ["--seconds", str(seconds)]
    if exact:
        cmd.append("--exact")
    r = subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300)
    ev = subprocess.run([ml, "evaluate", inst, out, "--json"], capture_output=True, text=True)
    if ev.returncode != 0:
        return None, None
    with open(stats) as f:
        st = json.load(f)
    # The exact solver completed (optimal over its own space).
    st["exact_completed"] = "exact solver: optimal" in r.stderr
    return json.loads(ev.stdout)["total_latency"], st


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mlsys", default=os.path.join(ROOT, "build", "release", "mlsys"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="", help="comma-separated instance names to run")
    args = ap.parse_args()
    work = args.out or tempfile.mkdtemp(prefix="exact-vs-plain-")
    os.makedirs(work, exist_ok=True)
    insts = []
    if os.path.isdir(SHARED):
        insts += sorted(os.path.join(SHARED, f) for f in os.listdir(SHARED) if f.endswith(".json"))
    else:
        print(f"exact_vs_plain: {SHARED} is absent: generated graphs only", file=sys.stderr)
    for fam in FAMILIES:
        for n in (10, 13, 16, 20):
            p = os.path.join(work, f"{fam}-n{n:03d}.json")
            if not os.path.exists(p):
                subprocess.run([args.mlsys, "generate", "--family", fam, "--size", str(n), "--seed", "1", "-o", p], check=True)
            insts.append(p)
    if args.only:
        keep = set(args.only.split(","))
        insts = [p for p in insts if os.path.splitext(os.path.basename(p))[0] in keep]
    print("| instance | ops | budget | plain (median) | --exact (median) | exact/plain | exact solver completed | worse |")
    print("|---|--:|---|--:|--:|--:|---|---|")
    bad = worse = 0
    for inst in insts:
        name = os.path.splitext(os.path.basename(inst))[0]
        n = ops_of(inst)
        seconds = None if n <= 20 else 3
        lat = {False: [], True: []}
        proved = []
        for seed in range(1, args.seeds + 1):
            for exact in (False, True):
                out = os.path.join(work, f"{name}.s{seed}.{'exact' if exact else 'plain'}.json")
                total, st = run(args.mlsys, inst, out, seed, args.threads, exact, seconds)
                if total is None:
                    bad += 1
                    continue
                lat[exact].append(total)
                if exact:
                    proved.append(st["exact_completed"])
        mp, me = statistics.median(lat[False]), statistics.median(lat[True])
        w = me > mp * (1 + 1e-9)
        worse += w
        print(f"| {name} | {n} | {'contest' if seconds is None else f'{seconds} s'} | {mp:,.2f} | {me:,.2f} | {me / mp:.5f} | "
              f"{sum(proved)}/{len(proved)} | {'**yes**' if w else 'no'} |", flush=True)
    print(f"\n{len(insts)} instances, {args.seeds} seeds, {args.threads} threads: --exact worse on {worse}; invalid runs: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
