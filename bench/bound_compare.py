#!/usr/bin/env python3
"""The lower bound of two mlsys binaries, problem by problem: which values moved, and by how much.

    python3 bench/bound_compare.py --old OLD_BIN --new NEW_BIN [--sizes 4,8,14,24,40] [--seeds 1,2,3]
                                   [--models default,k_limit=reduction,matmul_compute=native_depth]
                                   [--seconds 10] [--jobs 2]

Problems: every ../shared/benchmarks/*.json (skipped with a message when absent), instances/generated,
and `mlsys generate` of every family at each size and seed (written under build/bound_compare/).
Prints a Markdown table of every problem whose bound differs (old, new, change) and a summary line
per model; exit 0. A change is expected only where an argument was found unsound (issue 50: a
bound that is sound today stays byte-identical), so every row needs a reason.
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILIES = ["transformer", "mixer", "gemm-chain", "cnn", "random", "odd-k", "shared-weight"]


def bound(binary, problem, model, seconds):
    cmd = [binary, "bound", problem, "--json", "-s", str(seconds), "-t", "1"]
    if model != "default":
        cmd += ["--model", model]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout)["lower_bound"]


def problems(args):
    out = []
    shared = os.path.join(ROOT, "..", "shared", "benchmarks")
    if os.path.isdir(shared):
        out += sorted(glob.glob(os.path.join(shared, "*.json")))
    else:
        print(f"bound_compare: {shared} is absent: the contest instances are skipped", file=sys.stderr)
    out += sorted(glob.glob(os.path.join(ROOT, "instances", "generated", "*.json")))
    gen = os.path.join(ROOT, "build", "bound_compare")
    os.makedirs(gen, exist_ok=True)
    for fam in FAMILIES:
        for n in args.sizes:
            for s in args.seeds:
                path = os.path.join(gen, f"{fam}-{n}-s{s}.json")
                if not os.path.exists(path):
                    subprocess.run([args.new, "generate", "-f", fam, "-n", str(n), "--seed", str(s), "-o", path],
                                   check=True)
                out.append(path)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--sizes", default="4,8,14,24,40")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--models", default="default,k_limit=reduction,matmul_compute=native_depth")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    args.sizes = [int(x) for x in args.sizes.split(",")]
    args.seeds = [int(x) for x in args.seeds.split(",")]
    probs = problems(args)
    models = args.models.split(",")
    jobs = [(p, m) for m in models for p in probs]
    with cf.ThreadPoolExecutor(args.jobs) as ex:
        olds = list(ex.map(lambda j: bound(args.old, j[0], j[1], args.seconds), jobs))
        news = list(ex.map(lambda j: bound(args.new, j[0], j[1], args.seconds), jobs))
    print("| problem | model | old bound | new bound | change |")
    print("|---|---|--:|--:|--:|")
    summary = {m: [0, 0, 0, 0] for m in models}  # same, lower, higher, failed
    for (p, m), o, n in zip(jobs, olds, news):
        s = summary[m]
        if o is None or n is None:
            s[3] += 1
            print(f"| {os.path.basename(p)} | {m} | {o} | {n} | failed |")
            continue
        if o == n:
            s[0] += 1
            continue
        s[1 if n < o else 2] += 1
        print(f"| {os.path.basename(p)} | {m} | {o:,.6f} | {n:,.6f} | {100 * (n - o) / o:+.4f}% |")
    print()
    for m, (same, lower, higher, failed) in summary.items():
        print(f"{m}: {same} identical, {lower} lower, {higher} higher, {failed} failed (of {same + lower + higher + failed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
