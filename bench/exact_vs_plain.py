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
import os
import statistics
import sys
import tempfile

sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib.common import DEFAULT_MLSYS, FAMILIES, SHARED_BENCHMARKS, count_ops, instance_paths, stem  # noqa: E402
from benchlib.mlsys import Mlsys, MlsysError  # noqa: E402


def run(ml, inst, out, seed, threads, exact, seconds):
    """(latency, stats) of one solve checked by evaluate; (None, None) when its output is invalid."""
    res = ml.solve(inst, out, seed=seed, threads=threads, seconds=seconds, exact=exact, quiet=False,
                   stats=out + ".stats.json", kill_at=300)
    ev = ml.evaluate(inst, out)
    if ev.rc != 0 or ev.latency is None or res.stats is None:
        return None, None
    # The exact solver completed (optimal over its own space).
    res.stats["exact_completed"] = "exact solver: optimal" in res.stderr
    return ev.latency, res.stats


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mlsys", default=DEFAULT_MLSYS)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default="", help="comma-separated instance names to run")
    args = ap.parse_args()
    try:
        ml = Mlsys(args.mlsys)
    except MlsysError as e:
        sys.exit(f"exact_vs_plain: {e}")
    work = args.out or tempfile.mkdtemp(prefix="exact-vs-plain-")
    os.makedirs(work, exist_ok=True)
    insts = instance_paths(SHARED_BENCHMARKS)
    if not insts:
        print(f"exact_vs_plain: {SHARED_BENCHMARKS} is absent: generated graphs only", file=sys.stderr)
    for fam in FAMILIES:
        for n in (10, 13, 16, 20):
            p = os.path.join(work, f"{fam}-n{n:03d}.json")
            if not os.path.exists(p):
                try:
                    ml.generate(fam, n, 1, p)
                except MlsysError as e:
                    sys.exit(f"exact_vs_plain: {e}")
            insts.append(p)
    if args.only:
        keep = set(args.only.split(","))
        insts = [p for p in insts if stem(p) in keep]
    print("| instance | ops | budget | plain (median) | --exact (median) | exact/plain | exact solver completed | worse |")
    print("|---|--:|---|--:|--:|--:|---|---|")
    bad = worse = 0
    for inst in insts:
        name = stem(inst)
        n = count_ops(inst)
        seconds = None if n <= 20 else 3
        lat = {False: [], True: []}
        proved = []
        for seed in range(1, args.seeds + 1):
            for exact in (False, True):
                out = os.path.join(work, f"{name}.s{seed}.{'exact' if exact else 'plain'}.json")
                total, st = run(ml, inst, out, seed, args.threads, exact, seconds)
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
