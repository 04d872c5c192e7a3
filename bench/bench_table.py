#!/usr/bin/env python3
"""Runs mlsys_bench and prints one Markdown table of the results.

Usage: bench/bench_table.py [--binary PATH] [--from-json FILE] [--save FILE] [--with-full] [--with-step]
                            [mlsys_bench args, e.g. --benchmark_filter=mlsys-2026-21
                             --benchmark_repetitions=3 --benchmark_min_time=0.2]

Unknown arguments go to mlsys_bench, which runs with --benchmark_format=json. With repetitions
the medians are used. One row per instance: full evaluations/s, the Fast vs Walk speedup of
costSubgraph on the largest subgraph, and per move kind the delta evaluations/s with a warm
("hit") and a cold ("miss") cache, written "hit / miss" (--with-full adds "hitfull", the hit
rate with a cache filled to 3/4 of its capacity, after "hit"; --with-step appends propose+evaluate
per second from BM_Step). Rates are per thread CPU second.
The binary defaults to $MLSYS_BENCH or <repo>/build/release/bench/mlsys_bench.
"""
import argparse
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib.common import BUILD_HINT, ROOT, natural_key  # noqa: E402

MOVES = ["granularity", "retain", "merge", "split", "move-op", "traversal", "recompute", "uncompute",
         "reorder"]


def si(x):
    if x is None:
        return "—"
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g}{suf}"
    return f"{x:.3g}"


def collect(doc):
    """run name -> row (the median aggregate if any, else the mean of the iterations)."""
    iters, medians = {}, {}
    for b in doc.get("benchmarks", []):
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = b
        else:
            iters.setdefault(name, []).append(b)
    rows = {}
    for name, bs in iters.items():
        if name in medians:
            rows[name] = medians[name]
            continue
        ok = [b for b in bs if not b.get("error_occurred")]
        if not ok:
            rows[name] = bs[0]
            continue
        row = dict(ok[0])
        for key, v in ok[0].items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                row[key] = sum(b.get(key, 0) for b in ok) / len(ok)
        rows[name] = row
    return rows


def rate(rows, name):
    r = rows.get(name)
    if r is None or r.get("error_occurred"):
        return None
    return r.get("items_per_second")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                 allow_abbrev=False)
    ap.add_argument("--binary", default=os.environ.get("MLSYS_BENCH",
                                                       os.path.join(ROOT, "build", "release", "bench", "mlsys_bench")))
    ap.add_argument("--from-json", help="read a saved mlsys_bench JSON instead of running it")
    ap.add_argument("--save", help="also write the raw JSON here")
    ap.add_argument("--with-full", action="store_true", help="add the hitfull (filled cache) rates")
    ap.add_argument("--with-step", action="store_true", help="add BM_Step (propose+evaluate) rates")
    args, rest = ap.parse_known_args()

    if args.from_json:
        with open(args.from_json) as f:
            text = f.read()
    else:
        if not os.path.exists(args.binary):
            sys.exit(f"bench_table: {args.binary} not found; {BUILD_HINT}")
        cmd = [args.binary, "--benchmark_format=json"] + rest
        print("bench_table: running " + " ".join(cmd), file=sys.stderr)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            sys.exit(f"bench_table: mlsys_bench exited with {proc.returncode}")
        text = proc.stdout
        if not text.strip():
            sys.exit("bench_table: mlsys_bench printed nothing (instance folder absent?)")
    if args.save:
        with open(args.save, "w") as f:
            f.write(text)
    doc = json.loads(text)
    rows = collect(doc)

    instances = sorted({n.split("/")[-1] for n in rows}, key=natural_key)
    ctx = doc.get("context", {})
    reps = max((b.get("repetitions", 1) for b in doc.get("benchmarks", [])), default=1)
    load = ctx.get("load_avg")
    load_s = ", load avg " + "/".join(f"{x:.1f}" for x in load) if load else ""
    print(f"mlsys_bench on {ctx.get('host_name', '?')}: {ctx.get('num_cpus', '?')} CPUs "
          f"@ {ctx.get('mhz_per_cpu', '?')} MHz{load_s}; {'median of ' + str(reps) + ' runs' if reps > 1 else '1 run'}; "
          f"rates per thread CPU second; move cells: delta evals/s cache hit"
          f"{' / hit (full cache)' if args.with_full else ''} / miss{' / propose+eval' if args.with_step else ''}\n")

    head = ["instance", "subgraphs", "full eval/s", "largest sg steps", "fast/s", "walk/s", "fast÷walk"] + MOVES
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    for inst in instances:
        full = rows.get(f"BM_FullEval/{inst}")
        fast = rate(rows, f"BM_SubgraphFast/{inst}")
        walk = rate(rows, f"BM_SubgraphWalk/{inst}")
        sgf = rows.get(f"BM_SubgraphFast/{inst}") or rows.get(f"BM_SubgraphWalk/{inst}") or {}
        steps = sgf.get("steps")
        speed = f"{fast / walk:.3g}×" if fast and walk else "—"
        cells = [inst,
                 f"{full['subgraphs']:.0f}" if full and "subgraphs" in full else "—",
                 si(rate(rows, f"BM_FullEval/{inst}")),
                 f"{steps:.0f}" if steps is not None else "—",
                 si(fast), si(walk), speed]
        for mv in MOVES:
            parts = [si(rate(rows, f"BM_Delta/{mv}/hit/{inst}"))]
            if args.with_full:
                parts.append(si(rate(rows, f"BM_Delta/{mv}/hitfull/{inst}")))
            parts.append(si(rate(rows, f"BM_Delta/{mv}/miss/{inst}")))
            if args.with_step:
                parts.append(si(rate(rows, f"BM_Step/{mv}/{inst}")))
            cells.append(" / ".join(parts) if any(p != "—" for p in parts) else "—")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
