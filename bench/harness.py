#!/usr/bin/env python3
"""Run `mlsys solve` over a folder of instances, validate every output, and tabulate.

    python3 bench/harness.py                       # mlsys's contest budgets, 1 seed
    python3 bench/harness.py --seeds 3 --threads 2 --out runs/today
    python3 bench/harness.py --seconds 5 --config configs/server.yaml
    python3 bench/harness.py --compare runs/yesterday/results.csv --out runs/today

Runs are sequential (the machine has few cores). Each run passes --stats/--trace to mlsys and is
validated with `mlsys evaluate --json`. Writes OUT/results.csv (one row per instance) and
OUT/results.md (a Markdown table); --compare OLD.csv prints per-instance ratios new/old.
Python 3 standard library only.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_targets(path):
    if not path or not os.path.exists(path):
        return {}
    with open(path) as f:
        return {r["benchmark"]: r for r in csv.DictReader(f)}


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def run_one(args, inst, seconds, seed, outdir):
    stem = os.path.splitext(os.path.basename(inst))[0]
    out = os.path.join(outdir, f"{stem}-s{seed}.json")
    stats = os.path.join(outdir, f"{stem}-s{seed}.stats.json")
    trace = os.path.join(outdir, f"{stem}-s{seed}.trace.csv")
    cmd = [args.mlsys, "solve", inst, out, "--threads", str(args.threads), "--seed", str(seed),
           "--stats", stats, "--trace", trace, "-q"]
    if seconds:
        cmd += ["--seconds", str(seconds)]
    if args.config:
        cmd += ["--config", args.config]
    t0 = time.monotonic()
    rc = subprocess.run(cmd).returncode
    wall = time.monotonic() - t0
    st = {}
    if os.path.exists(stats):
        with open(stats) as f:
            st = json.load(f)
    ev = subprocess.run([args.mlsys, "evaluate", inst, out, "--json"], capture_output=True, text=True)
    valid, latency = False, None
    try:
        j = json.loads(ev.stdout)
        valid, latency = j["valid"] and ev.returncode == 0, j["total_latency"]
    except (ValueError, KeyError):
        pass
    return {"rc": rc, "wall": wall, "valid": valid, "latency": latency, **st}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", default=os.path.join(ROOT, "..", "shared", "benchmarks"))
    ap.add_argument("--targets", default=os.path.join(ROOT, "..", "shared", "targets.csv"),
                    help="CSV with benchmark,time_limit_s,lower_bound,contest_best")
    ap.add_argument("--seconds", type=float, help="uniform budget (default: mlsys's contest default, "
                    "inside each instance's time limit)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--config")
    ap.add_argument("--mlsys", default=os.path.join(ROOT, "build", "release", "mlsys"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "harness"))
    ap.add_argument("--compare", help="an earlier results.csv: print new/old median ratios")
    ap.add_argument("--only", help="comma-separated instance stems")
    args = ap.parse_args()

    if not os.path.isdir(args.instances):
        print(f"harness: {args.instances} not found; nothing to run", file=sys.stderr)
        return 0
    if not os.path.exists(args.mlsys):
        print(f"harness: {args.mlsys} not found (build first)", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    targets = load_targets(args.targets)
    insts = sorted((os.path.join(args.instances, f) for f in os.listdir(args.instances) if f.endswith(".json")),
                   key=lambda p: [int(t) if t.isdigit() else t for t in os.path.basename(p).replace("-", " ").replace(".", " ").split()])
    if args.only:
        keep = set(args.only.split(","))
        insts = [p for p in insts if os.path.splitext(os.path.basename(p))[0] in keep]

    rows = []
    for inst in insts:
        stem = os.path.splitext(os.path.basename(inst))[0]
        tg = targets.get(stem, {})
        # No --seconds: mlsys's own default budget, which sits inside the contest limit.
        seconds = args.seconds
        runs = [run_one(args, inst, seconds, s, args.out) for s in range(1, args.seeds + 1)]
        lats = [r["latency"] for r in runs if r["valid"] and r["latency"] is not None]
        med = statistics.median(lats) if lats else None
        lb, cb = fnum(tg.get("lower_bound")), fnum(tg.get("contest_best"))
        def med_of(k):
            v = [r[k] for r in runs if k in r]
            return statistics.median(v) if v else None
        row = {
            "instance": stem, "seeds": len(runs), "valid": sum(r["valid"] for r in runs),
            "median": med, "min": min(lats) if lats else None, "max": max(lats) if lats else None,
            "lower_bound": lb, "ratio_lb": med / lb if med and lb else None,
            "contest_best": cb, "ratio_contest": med / cb if med and cb else None,
            "first_write_s": med_of("first_write_s"), "best_found_s": med_of("best_found_s"),
            "evals_per_s": med_of("evals_per_s"), "wall_s": statistics.median(r["wall"] for r in runs),
        }
        rows.append(row)
        print(f"{stem}: median {med} valid {row['valid']}/{len(runs)}", file=sys.stderr)

    cols = list(rows[0].keys()) if rows else []
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)

    def fmt(v, nd=4):
        if v is None:
            return "—"
        if isinstance(v, float):
            return f"{v:.{nd}f}" if abs(v) < 100 else f"{v:.10g}"
        return str(v)

    lines = ["| instance | valid | median | min | max | lower_bound | ratio | contest_best | ratio | first write s | best at s | evals/s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['instance']} | {r['valid']}/{r['seeds']} | {fmt(r['median'])} | {fmt(r['min'])} | {fmt(r['max'])} | "
                     f"{fmt(r['lower_bound'])} | {fmt(r['ratio_lb'])} | {fmt(r['contest_best'])} | {fmt(r['ratio_contest'])} | "
                     f"{fmt(r['first_write_s'])} | {fmt(r['best_found_s'], 2)} | {fmt(r['evals_per_s'], 0)} |")
    md = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(md)
    print(md)

    if args.compare:
        with open(args.compare) as f:
            old = {r["instance"]: fnum(r["median"]) for r in csv.DictReader(f)}
        print("| instance | old median | new median | new/old |\n|---|---|---|---|")
        for r in rows:
            o = old.get(r["instance"])
            ratio = r["median"] / o if r["median"] and o else None
            print(f"| {r['instance']} | {fmt(o)} | {fmt(r['median'])} | {fmt(ratio)} |")
    return 0 if all(r["valid"] == r["seeds"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
