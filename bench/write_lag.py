#!/usr/bin/env python3
"""How far behind the search is the output file? Runs `mlsys solve --trace` on every instance
and polls the output every --poll seconds; for each improvement in the trace (found at t), the
lag is the first poll at which the file holds that latency or better, minus t. Passes when every
lag is <= write_interval_s + poll (the writer's throttle plus the polling granularity).

    python3 bench/write_lag.py [--seconds 10] [--poll 0.05] [--mlsys build/release/mlsys]
                               [--instances ../shared/benchmarks] [--write-interval 0.1]
Prints a Markdown table; exit 0 if all pass, 1 otherwise."""
import argparse, csv, glob, json, os, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--seconds", type=float, default=10)
ap.add_argument("--poll", type=float, default=0.05)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--mlsys", default="build/release/mlsys")
ap.add_argument("--instances", default="../shared/benchmarks")
ap.add_argument("--write-interval", type=float, default=0.1)
a = ap.parse_args()
files = sorted(glob.glob(os.path.join(a.instances, "*.json")))
if not files:
    print(f"write_lag: no instances in {a.instances}; skipping"); sys.exit(0)
limit = a.write_interval + a.poll
tmp = tempfile.mkdtemp()
print(f"| instance | improvements | max lag (s) | within {limit:.2f} s |")
print("|---|---|---|---|")
ok_all = True
for f in files:
    name = os.path.basename(f)[:-5]
    out, trace = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + ".csv")
    t0 = time.monotonic()
    p = subprocess.Popen([a.mlsys, "solve", f, out, "--seconds", str(a.seconds), "--threads", str(a.threads),
                          "-q", "--trace", trace])
    polls = []  # (time since spawn, latency on disk)
    while p.poll() is None:
        try:
            polls.append((time.monotonic() - t0, sum(json.load(open(out))["subgraph_latencies"])))
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(a.poll)
    polls.append((time.monotonic() - t0, sum(json.load(open(out))["subgraph_latencies"])))
    rows = [(float(r[0]), float(r[2])) for r in list(csv.reader(open(trace)))[1:]]
    worst = 0.0
    for t, lat in rows:
        seen = next((pt for pt, pl in polls if pt >= t and pl <= lat * (1 + 1e-12)), None)
        worst = max(worst, (seen if seen is not None else float("inf")) - t)
    ok = worst <= limit
    ok_all &= ok
    print(f"| {name} | {len(rows)} | {worst:.3f} | {'yes' if ok else 'NO'} |")
sys.exit(0 if ok_all else 1)
