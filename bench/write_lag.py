#!/usr/bin/env python3
"""How far behind the search is the output file? Runs `mlsys solve --trace` on every instance
and polls the output every --poll seconds; for each improvement in the trace (found at t), the
lag is the first poll at which the file holds that latency or better, minus t. Passes when every
lag is <= write_interval_s + poll (the writer's throttle plus the polling granularity).

    python3 bench/write_lag.py [--seconds 10] [--poll 0.05] [--mlsys build/release/mlsys]
                               [--instances ../shared/benchmarks] [--write-interval 0.1]
Prints a Markdown table; exit 0 if all pass, 1 otherwise."""
import argparse
import csv
import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib.common import DEFAULT_MLSYS, SHARED_BENCHMARKS, instance_paths, stem  # noqa: E402
from benchlib.mlsys import Mlsys, MlsysError  # noqa: E402


def on_disk(path):
    """The latency of the schedule in `path`, or None while there is none (or it is being replaced)."""
    try:
        with open(path) as f:
            return sum(json.load(f)["subgraph_latencies"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--poll", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mlsys", default=DEFAULT_MLSYS)
    ap.add_argument("--instances", default=SHARED_BENCHMARKS)
    ap.add_argument("--write-interval", type=float, default=0.1)
    a = ap.parse_args()
    files = instance_paths(a.instances)
    if not files:
        print(f"write_lag: no instances in {a.instances}; skipping")
        return 0
    try:
        ml = Mlsys(a.mlsys)
    except MlsysError as e:
        sys.exit(f"write_lag: {e}")
    limit = a.write_interval + a.poll
    tmp = tempfile.mkdtemp()
    print(f"| instance | improvements | max lag (s) | within {limit:.2f} s |")
    print("|---|---|---|---|")
    ok_all = True
    for f in files:
        name = stem(f)
        out, trace = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + ".csv")
        polls = []  # (time since spawn, latency on disk)

        def look(t, out=out, polls=polls):
            lat = on_disk(out)
            if lat is not None:
                polls.append((t, lat))

        look(0.0)
        res = ml.solve(f, out, seconds=a.seconds, threads=a.threads, trace=trace, poll=a.poll, on_poll=look)
        look(res.wall_s)
        with open(trace) as tf:
            rows = [(float(r[0]), float(r[2])) for r in list(csv.reader(tf))[1:]]
        worst = 0.0
        for t, lat in rows:
            seen = next((pt for pt, pl in polls if pt >= t and pl <= lat * (1 + 1e-12)), None)
            worst = max(worst, (seen if seen is not None else float("inf")) - t)
        ok = worst <= limit
        ok_all &= ok
        print(f"| {name} | {len(rows)} | {worst:.3f} | {'yes' if ok else 'NO'} |", flush=True)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
