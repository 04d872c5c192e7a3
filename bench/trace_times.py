#!/usr/bin/env python3
"""When each phase's result came, from the traces of harness runs: before against after.

    python3 bench/trace_times.py OLD_OUT NEW_OUT [--label-old A --label-new B]

OLD_OUT and NEW_OUT are `bench/harness.py --out` folders (their runs/*.trace.csv and runs.csv).
Per instance and seed: the first write, the baseline (the trace's `baseline` row, the best after
the baseline construction), the first improvement on the first schedule (any row below it), and
the latency at the deadline (runs.csv, the evaluated output), old and new, their ratio, and the
wall time of the run (shorter where it ended proven optimal).
Prints a Markdown table and the medians; times are seconds from the process start.
"""
import argparse
import csv
import glob
import os
import statistics
import sys


def trace_times(path):
    rows = []
    with open(path) as f:
        for r in csv.reader(f):
            if not r or r[0] == "seconds":
                continue
            try:
                rows.append((float(r[0]), r[1], float(r[2])))
            except (ValueError, IndexError):
                continue
    first = next(((t, lat) for t, w, lat in rows if w == "first"), None)
    base = next((t for t, w, _ in rows if w == "baseline"), None)
    improve = next((t for t, w, lat in rows if first and lat < first[1] * (1 - 1e-12)), None)
    return {"first": first[0] if first else None, "baseline": base, "improve": improve}


def load(folder):
    out = {}
    with open(os.path.join(folder, "runs.csv")) as f:
        for r in csv.DictReader(f):
            key = (r["instance"], r["seed"])
            tr = glob.glob(os.path.join(folder, "runs", f"{r['instance']}-s{r['seed']}.trace.csv"))
            t = trace_times(tr[0]) if tr else {"first": None, "baseline": None, "improve": None}
            try:
                t["latency"] = float(r["latency"]) if r["valid"] in ("True", "true", "1") else None
            except ValueError:
                t["latency"] = None
            try:
                t["wall"] = float(r["wall_s"])
            except (KeyError, ValueError):
                t["wall"] = None
            out[key] = t
    return out


def fmt(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--label-old", default="before")
    ap.add_argument("--label-new", default="after")
    a = ap.parse_args()
    old, new = load(a.old), load(a.new)
    o, n = a.label_old, a.label_new
    print(f"| instance | first write {o} / {n} | baseline {o} / {n} | first improvement {o} / {n} "
          f"| latency {o} | latency {n} | {n} / {o} | wall {o} / {n} |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    ratios, late = [], []
    for key in sorted(set(old) & set(new)):
        x, y = old[key], new[key]
        ratio = y["latency"] / x["latency"] if x["latency"] and y["latency"] else None
        if ratio:
            ratios.append(ratio)
        if y["baseline"] is not None and y["first"] is not None:
            late.append(y["baseline"] - y["first"])
        print(f"| {key[0]} | {fmt(x['first'])} / {fmt(y['first'])} | {fmt(x['baseline'])} / {fmt(y['baseline'])} "
              f"| {fmt(x['improve'])} / {fmt(y['improve'])} | {fmt(x['latency'], 1)} | {fmt(y['latency'], 1)} "
              f"| {fmt(ratio, 4)} | {fmt(x['wall'], 2)} / {fmt(y['wall'], 2)} |")
    if ratios:
        g = statistics.geometric_mean(ratios)
        print(f"\ngeomean latency {n} / {o}: {g:.4f} over {len(ratios)} runs; worst {max(ratios):.4f}")
    if late:
        print(f"baseline after the first write ({n}): median {statistics.median(late):.3f} s, max {max(late):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
