#!/usr/bin/env python3
"""Run `mlsys solve` over a folder of instances, validate every output, and tabulate.

    python3 bench/harness.py                       # contest mode: mlsys's own budget, killed at each limit
    python3 bench/harness.py --seeds 3 --threads 2 --out build/harness/today
    python3 bench/harness.py --seconds 5 --config configs/server.yaml
    python3 bench/harness.py --compare build/harness/yesterday/results.csv --out build/harness/today
    python3 bench/harness.py --against NEW.csv --compare OLD.csv   # compare two earlier runs, run nothing
    python3 bench/harness.py --smoke               # 0.5 s per instance, 1 seed: a quick end-to-end check
    python3 bench/harness.py --dry-run             # print the commands only

Contest mode (no --seconds): mlsys picks its budget (inside the limit) and the harness sends SIGTERM at
the instance's time limit (time_limit_s from --targets, else the contest tier by op count), like the
contest grader; whatever is on disk then is scored. With --seconds S, mlsys gets --seconds S and a
watchdog sends SIGTERM at 1.2*S + 2 s. Runs are sequential unless -j N runs N solves at a time (each
with its --threads: keep N x threads <= cores, the harness warns otherwise).

Each run passes --stats/--trace to mlsys (when the binary supports them), and its output is checked
with `mlsys evaluate --json`. The harness also watches for the output file itself: `first_seen_s`
is when a schedule first appeared on disk, measured from outside. The bound column is `mlsys bound`
of the instance (with the --model options), computed once per binary, instance and model and kept
in --bound-cache; --targets gives the time limits and the contest best (not the bound).

Writes OUT/runs.csv (one row per run), OUT/results.csv (one row per instance), OUT/results.md
(a Markdown table with a summary), OUT/results.png (a chart of median / mlsys bound per instance,
when matplotlib is installed), and with --compare OUT/compare.md. Per-run files are in OUT/runs/.
Exit code: 0 if every run produced a valid schedule, 1 otherwise, 2 on usage errors.
Python 3 standard library; matplotlib (Debian python3-matplotlib) for the chart only.
"""
import argparse
import concurrent.futures
import csv
import importlib.util
import os
import signal
import sys

sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# (tests/tune_*_test.py import harness for reexec_for and natural_key)
from benchlib.common import (ROOT, SHARED, SHARED_BENCHMARKS, SHARED_TARGETS, DEFAULT_MLSYS,  # noqa: E402
                             contest_limit, count_ops, fmt, fnum, geomean, instance_paths, load_targets, median,
                             natural_key, oversubscribed, reexec_for, stem, write_csv)
from benchlib.mlsys import BoundCache, Mlsys, MlsysError  # noqa: E402

DEFAULT_BOUND_CACHE = os.path.join(ROOT, "build", "bound-cache.json")

# Columns of results.csv (the first ones are what --compare reads: instance, median).
RESULT_COLS = ["instance", "ops", "limit_s", "seeds", "valid", "median", "min", "max", "mlsys_bound", "ratio_bound",
               "contest_best", "ratio_contest", "first_write_s", "first_seen_s", "best_found_s", "evals_per_s",
               "evaluations", "wall_s", "killed", "warnings"]
RUN_COLS = ["instance", "seed", "rc", "killed", "wall_s", "first_seen_s", "valid", "latency", "rule", "reason",
            "warnings", "best_latency", "first_write_s", "best_found_s", "elapsed_s", "evaluations", "evals_per_s",
            "writes", "threads", "solution", "trace"]


def log(msg):
    print(f"harness: {msg}", file=sys.stderr, flush=True)


def solve_opts(args, ml, stats, trace, seed, name=None):
    """The options of one solve (Mlsys.solve_cmd's keywords): --stats and --trace when the binary has them,
    --init INIT_DIR/<name>.json when that file exists."""
    init = os.path.join(args.init_dir, name + ".json") if args.init_dir and name else None
    return {"seed": seed, "threads": args.threads, "seconds": args.seconds, "config": args.config,
            "stats": stats if ml.supports("--stats") else None, "trace": trace if ml.supports("--trace") else None,
            "extra": ("--init", init) if init and os.path.exists(init) else ()}


def plan_instance(args, inst, targets):
    """What the runs of one instance need: its limit, when to kill, the contest figure."""
    name = stem(inst)
    tg = targets.get(name, {})
    n_ops = count_ops(inst)
    limit = fnum(tg.get("time_limit_s")) or (contest_limit(n_ops) if n_ops is not None else 120.0)
    return {"inst": inst, "stem": name, "ops": n_ops, "limit": limit,
            "kill_at": args.seconds * 1.2 + 2 if args.seconds else limit,
            "cb": fnum(tg.get("contest_best")) if not args.model else None}  # targets.csv is under the default model


def run_one(args, ml, info, seed, rundir):
    """One solve of one instance, checked with mlsys evaluate: a runs.csv row."""
    name, inst = info["stem"], info["inst"]
    base = os.path.join(rundir, f"{name}-s{seed}")
    sol, stats, trace = base + ".json", base + ".stats.json", base + ".trace.csv"
    res = ml.solve(inst, sol, kill_at=info["kill_at"], poll=0.005, log=base + ".log",
                   **solve_opts(args, ml, stats, trace, seed, name))
    ev = ml.evaluate(inst, sol)
    run = {"instance": name, "seed": seed, "rc": res.rc, "killed": int(res.killed), "wall_s": round(res.wall_s, 4),
           "first_seen_s": round(res.first_seen_s, 4) if res.first_seen_s is not None else None,
           "valid": int(ev.valid), "latency": ev.latency, "rule": ev.rule, "reason": ev.reason,
           "warnings": ev.warnings, "solution": os.path.relpath(sol, args.out),
           "trace": os.path.relpath(trace, args.out) if os.path.exists(trace) else ""}
    for k in ("best_latency", "first_write_s", "best_found_s", "elapsed_s", "evaluations", "evals_per_s", "writes", "threads"):
        run[k] = res.stat(k)
    status = f"latency {fmt(ev.latency)}" if ev.valid else f"INVALID ({ev.rule}: {ev.reason})"
    log(f"{name} seed {seed}: {status}, wall {res.wall_s:.2f} s" + (" (killed at the limit)" if res.killed else "") +
        (f", rc {res.rc}" if res.rc not in (0, -signal.SIGTERM, 128 + signal.SIGTERM) else ""))
    return run


def summarise(bounds, ml, info, runs):
    """The results.csv row of one instance from its runs; the bound is `mlsys bound`'s (cached)."""
    lb = bounds.bound(ml, info["inst"])
    cb = info["cb"]
    lats = [r["latency"] for r in runs if r["valid"] and r["latency"] is not None]
    med = median(lats)

    def med_of(k):
        return median(fnum(r.get(k)) for r in runs)

    return {"instance": info["stem"], "ops": info["ops"], "limit_s": info["limit"], "seeds": len(runs),
            "valid": sum(r["valid"] for r in runs), "median": med, "min": min(lats) if lats else None,
            "max": max(lats) if lats else None, "mlsys_bound": lb, "ratio_bound": med / lb if med and lb else None,
            "contest_best": cb, "ratio_contest": med / cb if med and cb else None,
            "first_write_s": med_of("first_write_s"), "first_seen_s": med_of("first_seen_s"),
            "best_found_s": med_of("best_found_s"), "evals_per_s": med_of("evals_per_s"),
            "evaluations": med_of("evaluations"), "wall_s": med_of("wall_s"),
            "killed": sum(r["killed"] for r in runs), "warnings": sum(r["warnings"] for r in runs)}


def run_all(args, ml, infos, rundir):
    """Every (instance, seed) run, args.jobs at a time; (rows, runs) in instance order."""
    jobs = [(info, seed) for info in infos for seed in range(1, args.seeds + 1)]
    bounds = BoundCache(args.bound_cache)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        runs = list(ex.map(lambda j: run_one(args, ml, j[0], j[1], rundir), jobs))
        per = [[r for r in runs if r["instance"] == info["stem"]] for info in infos]
        rows = list(ex.map(lambda i: summarise(bounds, ml, infos[i], per[i]), range(len(infos))))
    return rows, runs


def chart(rows, path, header):
    """results.png: median / mlsys bound per instance (whiskers: min and max), contest best marked."""
    if importlib.util.find_spec("matplotlib") is None:
        log(f"no chart: {sys.executable} cannot import matplotlib (apt-get install python3-matplotlib)")
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in rows if r["ratio_bound"] is not None]
    if not rows:
        return
    y = range(len(rows))
    med = [r["ratio_bound"] for r in rows]
    lo = [m - r["min"] / r["mlsys_bound"] for m, r in zip(med, rows)]
    hi = [r["max"] / r["mlsys_bound"] - m for m, r in zip(med, rows)]
    fig, ax = plt.subplots(figsize=(9, 1.5 + 0.32 * len(rows)))
    ax.barh(y, [m - 1 for m in med], left=1, xerr=[lo, hi], color="#4c78a8", ecolor="#333333", capsize=2,
            label="median / mlsys bound (whiskers: min, max)")
    cb = [(i, r["contest_best"] / r["mlsys_bound"]) for i, r in enumerate(rows) if r["contest_best"] and r["mlsys_bound"]]
    if cb:
        ax.scatter([c for _, c in cb], [i for i, _ in cb], marker="|", s=200, color="#e45756", zorder=3,
                   label="contest best / mlsys bound")
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_yticks(list(y), [f"{r['instance']} ({r['valid']}/{r['seeds']})" for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("latency / mlsys bound (1 = provably optimal)")
    ax.set_title(header, fontsize=8)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def results_markdown(rows, header):
    lines = [header, "",
             "| instance | ops | limit s | valid | median | min | max | mlsys bound | med/bound | contest best | med/best "
             "| first write ms | best at s | evals/s |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        first = r["first_write_s"] if r["first_write_s"] is not None else r["first_seen_s"]
        beat = " ✓" if r["ratio_contest"] is not None and r["ratio_contest"] <= 1 else ""
        lines.append(f"| {r['instance']} | {fmt(r['ops'])} | {r['limit_s']:g} | {r['valid']}/{r['seeds']}"
                     f"{' (' + str(r['killed']) + ' killed)' if r['killed'] else ''} | {fmt(r['median'])} | {fmt(r['min'])} "
                     f"| {fmt(r['max'])} | {fmt(r['mlsys_bound'])} | {fmt(r['ratio_bound'])} | {fmt(r['contest_best'])} "
                     f"| {fmt(r['ratio_contest'])}{beat} | {fmt(first * 1000 if first is not None else None, 1)} "
                     f"| {fmt(r['best_found_s'], 2)} | {fmt(round(r['evals_per_s']) if r['evals_per_s'] is not None else None)} |")
    n_runs = sum(r["seeds"] for r in rows)
    n_valid = sum(r["valid"] for r in rows)
    with_cb = [r for r in rows if r["ratio_contest"] is not None]
    lines += ["", f"Valid: {n_valid}/{n_runs} runs. Geometric mean of median/bound: {fmt(geomean(r['ratio_bound'] for r in rows))}; "
              f"of median/contest best: {fmt(geomean(r['ratio_contest'] for r in rows))} over {len(with_cb)} instances, "
              f"{sum(r['ratio_contest'] <= 1 for r in with_cb)} at or below the contest best (✓)."]
    if any(r["first_write_s"] is None and r["first_seen_s"] is not None for r in rows):
        lines.append("First write: from mlsys --stats where available, else as observed by the harness.")
    return "\n".join(lines) + "\n"


def read_medians(path):
    with open(path, newline="") as f:
        return {r["instance"]: fnum(r.get("median")) for r in csv.DictReader(f)}


def compare_markdown(old_path, new, old_label="old", new_label="new"):
    """new: {instance: median}. Markdown with new/old per instance and the geometric mean."""
    old = read_medians(old_path)
    names = sorted(set(old) | set(new), key=natural_key)
    lines = [f"| instance | {old_label} median | {new_label} median | new/old |", "|---|--:|--:|--:|"]
    ratios = []
    for n in names:
        o, m = old.get(n), new.get(n)
        ratio = m / o if m and o else None
        if ratio is not None:
            ratios.append(ratio)
        mark = "" if ratio is None else (" better" if ratio < 1 - 1e-9 else " worse" if ratio > 1 + 1e-9 else " same")
        lines.append(f"| {n} | {fmt(o)} | {fmt(m)} | {fmt(ratio)}{mark} |")
    g = geomean(ratios)
    lines.append(f"| geometric mean | | | {fmt(g)} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--instances", default=SHARED_BENCHMARKS, help="folder of *.json instances (default ../shared/benchmarks)")
    ap.add_argument("--targets", default=SHARED_TARGETS,
                    help="CSV with benchmark,time_limit_s,contest_best (default ../shared/targets.csv)")
    ap.add_argument("--bound-cache", default=DEFAULT_BOUND_CACHE,
                    help="JSON file of `mlsys bound` results per binary, instance and model (default build/bound-cache.json)")
    ap.add_argument("--seconds", type=float, help="uniform budget per run (default: contest mode, see above)")
    ap.add_argument("--threads", type=int, default=2, help="mlsys --threads (default 2; 0 = all cores)")
    ap.add_argument("--seeds", type=int, default=1, help="run seeds 1..N per instance (default 1)")
    ap.add_argument("-j", "--jobs", type=int, default=1,
                    help="runs at a time (default 1); each solve still uses --threads, so keep j x threads <= cores")
    ap.add_argument("--config", help="YAML config passed to mlsys solve --config")
    ap.add_argument("--init-dir", metavar="DIR",
                    help="warm starts: DIR/<instance>.json, where it exists, is passed as mlsys solve --init")
    ap.add_argument("--model", action="append", help="KEY=VALUE passed to solve, evaluate and bound (repeatable)")
    ap.add_argument("--mlsys", default=DEFAULT_MLSYS, help="binary (default build/release/mlsys)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "harness"), help="output folder (default build/harness)")
    ap.add_argument("--compare", metavar="OLD.csv", help="an earlier results.csv: print new/old median ratios")
    ap.add_argument("--against", metavar="NEW.csv", help="with --compare: compare this results.csv instead of running")
    ap.add_argument("--only", help="comma-separated instance stems or substrings (e.g. mlsys-2026-1,2026-21)")
    ap.add_argument("--smoke", action="store_true", help="quick check: --seconds 0.5 --seeds 1 unless given")
    ap.add_argument("--dry-run", action="store_true", help="print the solve commands and exit")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("-j must be >= 1")

    if args.against:
        if not args.compare:
            ap.error("--against needs --compare OLD.csv")
        print(compare_markdown(args.compare, read_medians(args.against), "old", "new"), end="")
        return 0
    if args.smoke:
        args.seconds = args.seconds or 0.5
    if args.seconds is not None and not args.seconds > 0:
        ap.error("--seconds must be positive")
    if args.seeds < 1:
        ap.error("--seeds must be >= 1")
    if args.config and not os.path.exists(args.config):
        ap.error(f"--config {args.config}: no such file")
    if os.path.realpath(args.bound_cache).startswith(os.path.realpath(SHARED) + os.sep):
        ap.error(f"--bound-cache {args.bound_cache}: not under {SHARED} (the shared instances are read-only here)")
    if not os.path.isdir(args.instances):
        log(f"{args.instances} not found; nothing to run")
        return 0
    if not args.dry_run:
        reexec_for(["matplotlib"], "the chart of the results")
    try:
        ml = Mlsys(args.mlsys, args.model)
    except MlsysError as e:
        log(str(e))
        return 1
    args.out = os.path.abspath(args.out)
    rundir = os.path.join(args.out, "runs")
    if not args.dry_run:
        os.makedirs(rundir, exist_ok=True)
    if not ml.supports("--stats"):
        log("this mlsys has no --stats: first write / best at / evals/s columns stay blank")
    targets = load_targets(args.targets)
    insts = instance_paths(args.instances)
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        exact = [p for p in insts if stem(p) in keys]
        insts = exact if len(exact) == len(keys) else [p for p in insts if any(k == stem(p) or k in stem(p) for k in keys)]
    if not insts:
        log("no instances selected")
        return 1

    infos = [plan_instance(args, inst, targets) for inst in insts]
    if args.dry_run:
        for info in infos:
            for seed in range(1, args.seeds + 1):
                base = os.path.join(rundir, f"{info['stem']}-s{seed}")
                cmd = ml.solve_cmd(info["inst"], base + ".json",
                                   **solve_opts(args, ml, base + ".stats.json", base + ".trace.csv", seed,
                                                info["stem"]))
                print(" ".join(cmd) + f"    # SIGTERM at {info['kill_at']:g} s")
        return 0
    if oversubscribed(args.jobs, args.threads):
        log(oversubscribed(args.jobs, args.threads))
    rows, all_runs = run_all(args, ml, infos, rundir)

    write_csv(os.path.join(args.out, "runs.csv"), RUN_COLS, all_runs)
    write_csv(os.path.join(args.out, "results.csv"), RESULT_COLS, rows)
    budget = f"--seconds {args.seconds:g}" if args.seconds else "contest mode (mlsys default budget, SIGTERM at the limit)"
    header = (f"{ml.version}; {budget}; threads {args.threads}; seeds 1..{args.seeds}; "
              f"config {args.config or 'built-in defaults'}; model {', '.join(args.model) if args.model else 'default'}")
    md = results_markdown(rows, header)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(md)
    print(md, end="")
    if args.compare:
        cmp_md = compare_markdown(args.compare, {r["instance"]: r["median"] for r in rows})
        with open(os.path.join(args.out, "compare.md"), "w") as f:
            f.write(cmp_md)
        print("\n" + cmp_md, end="")
    png = os.path.join(args.out, "results.png")
    if os.path.exists(png):
        os.remove(png)  # (an earlier run's)
    chart(rows, png, header)
    log(f"wrote {os.path.join(args.out, 'results.csv')}, results.md, runs.csv" +
        (", results.png" if os.path.exists(png) else ""))
    return 0 if all(r["valid"] == r["seeds"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
