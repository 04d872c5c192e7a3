#!/usr/bin/env python3
"""The Python module against the command line (issue 34): on each instance, `mlsys solve` and
`mlsys.solve` with the same seconds, threads and seed, alternating which goes first; prints one
Markdown table (the latency of each, their ratio) and the median ratio.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python_vs_cli.py \\
        [--mlsys build/release/mlsys] [--instances ../shared/benchmarks] [--seconds S | --contest] \\
        [--threads 2] [--seed 1]

--contest uses each instance's contest limit less 10% (the CLI's default budget); the Python run
gets the same number. The Python run is a child process (one interpreter per run, as the CLI)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib.common import contest_limit, count_ops, instance_paths, median  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(mlsys, inst, seconds, threads, seed, tmp):
    out, stats = os.path.join(tmp, "out.json"), os.path.join(tmp, "stats.json")
    subprocess.run([mlsys, "solve", inst, out, "--seconds", str(seconds), "--threads", str(threads), "--seed",
                    str(seed), "-q", "--stats", stats], check=True)
    with open(stats) as f:
        return json.load(f)["best_latency"]


def run_python(inst, seconds, threads, seed):
    code = ("import mlsys, sys, json; r = mlsys.solve(sys.argv[1], seconds=float(sys.argv[2]), "
            "threads=int(sys.argv[3]), seed=int(sys.argv[4])); "
            "assert mlsys.evaluate(sys.argv[1], r.schedule).valid; print(json.dumps(r.latency))")
    out = subprocess.run([sys.executable, "-c", code, inst, str(seconds), str(threads), str(seed)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mlsys", default=os.path.join(ROOT, "build", "release", "mlsys"))
    ap.add_argument("--instances", default=os.path.join(os.path.dirname(ROOT), "shared", "benchmarks"))
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--seconds", type=float, default=5.0)
    g.add_argument("--contest", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    insts = instance_paths(a.instances)
    if not insts:
        sys.exit(f"python_vs_cli: no instances in {a.instances}")
    print(f"| instance | seconds | CLI | Python | Python / CLI |\n|---|--:|--:|--:|--:|")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, inst in enumerate(insts):
            secs = round(contest_limit(count_ops(inst)) * 0.9, 2) if a.contest else a.seconds
            if i % 2 == 0:
                cli = run_cli(a.mlsys, inst, secs, a.threads, a.seed, tmp)
                py = run_python(inst, secs, a.threads, a.seed)
            else:
                py = run_python(inst, secs, a.threads, a.seed)
                cli = run_cli(a.mlsys, inst, secs, a.threads, a.seed, tmp)
            ratios.append(py / cli)
            name = os.path.basename(inst)[:-5]
            print(f"| {name} | {secs:g} | {cli:,.1f} | {py:,.1f} | {py / cli:.4f} |", flush=True)
    print(f"\nmedian Python / CLI: {median(ratios):.4f}; Python better on "
          f"{sum(r < 1 - 1e-9 for r in ratios)}, equal on {sum(abs(r - 1) <= 1e-9 for r in ratios)}, "
          f"worse on {sum(r > 1 + 1e-9 for r in ratios)} of {len(ratios)}")


if __name__ == "__main__":
    main()
