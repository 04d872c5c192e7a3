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
is when a schedule first appeared on disk, measured from outside.

Writes OUT/runs.csv (one row per run), OUT/results.csv (one row per instance), OUT/results.md
(a Markdown table with a summary), OUT/results.png (a chart of median / lower bound per instance,
when matplotlib is installed), and with --compare OUT/compare.md. Per-run files are in OUT/runs/.
Exit code: 0 if every run produced a valid schedule, 1 otherwise, 2 on usage errors.
Python 3 standard library; matplotlib (Debian python3-matplotlib) for the chart only.
"""
import argparse
import concurrent.futures
import csv
import importlib.util
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Columns of results.csv (the first ones are what --compare reads: instance, median).
RESULT_COLS = ["instance", "ops", "limit_s", "seeds", "valid", "median", "min", "max", "lower_bound", "ratio_lb",
               "contest_best", "ratio_contest", "first_write_s", "first_seen_s", "best_found_s", "evals_per_s",
               "evaluations", "wall_s", "killed", "warnings"]
RUN_COLS = ["instance", "seed", "rc", "killed", "wall_s", "first_seen_s", "valid", "latency", "rule", "reason",
            "warnings", "best_latency", "first_write_s", "best_found_s", "elapsed_s", "evaluations", "evals_per_s",
            "writes", "threads", "solution", "trace"]


def log(msg):
    print(f"harness: {msg}", file=sys.stderr, flush=True)


DEBIAN_PYTHON = "/usr/bin/python3"


def reexec_for(modules, why):
    """Returns the modules of `modules` this interpreter cannot import. When Debian's
    /usr/bin/python3 can import more of them (a pyenv or venv python3 earlier on PATH hides the
    Debian packages), re-executes the running script under it instead, once, with a note: so call
    it at the start, with every module the run will want."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if (not missing or os.environ.get("MLSYS_REEXECED") or not os.access(DEBIAN_PYTHON, os.X_OK)
            or os.path.realpath(sys.executable) == os.path.realpath(DEBIAN_PYTHON)):
        return missing
    probe = subprocess.run([DEBIAN_PYTHON, "-c", "import importlib.util, sys; print(sum(importlib.util.find_spec(m) "
                            "is None for m in sys.argv[1:]))"] + missing, capture_output=True, text=True)
    if probe.returncode != 0 or int(probe.stdout.strip() or len(missing)) >= len(missing):
        return missing
    print(f"{os.path.basename(sys.argv[0])}: {sys.executable} cannot import {', '.join(missing)} ({why}); "
          f"running under {DEBIAN_PYTHON}, which can", file=sys.stderr, flush=True)
    os.environ["MLSYS_REEXECED"] = "1"
    os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, os.path.abspath(sys.argv[0])] + sys.argv[1:])


def fnum(x):
    try:
        v = float(x)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def natural_key(path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", os.path.basename(path))]


def contest_limit(n_ops):
    """The contest time limit by instance size (mirrors engine/search/solve.cpp contestLimitSeconds)."""
    for n, s in ((5, 2), (20, 5), (32, 15), (63, 30), (103, 60)):
        if n_ops <= n:
            return float(s)
    return 120.0


def load_targets(path):
    if not path or not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        return {r["benchmark"]: r for r in csv.DictReader(f) if r.get("benchmark")}


def count_ops(path):
    try:
        with open(path) as f:
            return len(json.load(f).get("op_types", []))
    except (OSError, ValueError, AttributeError):
        return None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(v, nd=4):
    if v is None or v == "":
        return "—"
    if isinstance(v, float):
        if v == int(v) and abs(v) >= 100:
            return f"{int(v)}"
        return f"{v:.{nd}f}" if abs(v) < 100 else f"{v:.10g}"
    return str(v)


class Mlsys:
    """The binary under test, and which solve options it supports."""

    def __init__(self, path, model):
        self.path = path
        self.model = model or []
        try:
            h = subprocess.run([path, "solve", "--help"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            h = ""
        self.has_stats = "--stats" in h
        self.has_trace = "--trace" in h
        try:
            self.version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            self.version = "?"

    def model_args(self):
        out = []
        for kv in self.model:
            out += ["--model", kv]
        return out

    def bound(self, inst):
        r = subprocess.run([self.path, "bound", inst] + self.model_args(), capture_output=True, text=True)
        m = re.search(r"lower bound:\s*([0-9.eE+-]+)", r.stdout)
        return fnum(m.group(1)) if m else None

    def evaluate(self, inst, sol):
        """(valid, latency, rule, reason, n_warnings) of a schedule file."""
        if not os.path.exists(sol):
            return False, None, "missing", "no output file", 0
        r = subprocess.run([self.path, "evaluate", inst, sol, "--json"] + self.model_args(), capture_output=True, text=True)
        try:
            j = json.loads(r.stdout)
            return (bool(j.get("valid")) and r.returncode == 0, fnum(j.get("total_latency")), j.get("rule", ""),
                    j.get("reason", ""), len(j.get("warnings", [])))
        except ValueError:
            # Not parseable (e.g. an unescaped character): fall back to the fields we need.
            valid = re.search(r'"valid":\s*true', r.stdout) is not None and r.returncode == 0
            m = re.search(r'"total_latency":\s*([0-9.eE+-]+)', r.stdout)
            why = (r.stderr.strip().splitlines() or [""])[-1]
            return valid, fnum(m.group(1)) if m else None, "" if valid else "?", why, 0


def solve_cmd(args, ml, inst, sol, stats, trace, seed):
    cmd = [ml.path, "solve", inst, sol, "--seed", str(seed), "-q"]
    if args.threads is not None:
        cmd += ["--threads", str(args.threads)]
    if args.seconds:
        cmd += ["--seconds", f"{args.seconds:g}"]
    if args.config:
        cmd += ["--config", args.config]
    if ml.has_stats:
        cmd += ["--stats", stats]
    if ml.has_trace:
        cmd += ["--trace", trace]
    return cmd + ml.model_args()


def run_solve(cmd, sol, kill_at, logf):
    """Runs one solve; SIGTERM at kill_at seconds (SIGKILL 2 s later). Returns rc, wall, first_seen, killed."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=logf, stderr=logf, stdin=subprocess.DEVNULL)
    first_seen, killed, termed_at = None, False, None
    while True:
        try:
            rc = p.wait(timeout=0.005)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic() - t0
        if first_seen is None and os.path.exists(sol):
            first_seen = now
        if termed_at is None and now >= kill_at:
            p.send_signal(signal.SIGTERM)
            killed, termed_at = True, now
        elif termed_at is not None and now >= termed_at + 2:
            p.kill()
    wall = time.monotonic() - t0
    if first_seen is None and os.path.exists(sol):
        first_seen = wall  # appeared during the last poll interval
    return rc, wall, first_seen, killed


def plan_instance(args, inst, targets):
    """What the runs of one instance need: its limit, when to kill, the known bounds."""
    stem = os.path.splitext(os.path.basename(inst))[0]
    tg = targets.get(stem, {})
    n_ops = count_ops(inst)
    limit = fnum(tg.get("time_limit_s")) or (contest_limit(n_ops) if n_ops is not None else 120.0)
    return {"inst": inst, "stem": stem, "ops": n_ops, "limit": limit,
            "kill_at": args.seconds * 1.2 + 2 if args.seconds else limit,
            "lb": fnum(tg.get("lower_bound")) if not args.model else None,  # targets.csv is under the default model
            "cb": fnum(tg.get("contest_best")) if not args.model else None}


def run_one(args, ml, info, seed, rundir):
    """One solve of one instance, checked with mlsys evaluate: a runs.csv row."""
    stem, inst = info["stem"], info["inst"]
    base = os.path.join(rundir, f"{stem}-s{seed}")
    sol, stats, trace = base + ".json", base + ".stats.json", base + ".trace.csv"
    cmd = solve_cmd(args, ml, inst, sol, stats, trace, seed)
    for f in (sol, stats, trace):
        if os.path.exists(f):
            os.remove(f)
    with open(base + ".log", "w") as logf:
        rc, wall, first_seen, killed = run_solve(cmd, sol, info["kill_at"], logf)
    valid, lat, rule, reason, nwarn = ml.evaluate(inst, sol)
    st = {}
    if os.path.exists(stats):
        try:
            with open(stats) as f:
                st = json.load(f)
        except ValueError:
            st = {}
    run = {"instance": stem, "seed": seed, "rc": rc, "killed": int(killed), "wall_s": round(wall, 4),
           "first_seen_s": round(first_seen, 4) if first_seen is not None else None, "valid": int(valid),
           "latency": lat, "rule": rule, "reason": reason, "warnings": nwarn,
           "solution": os.path.relpath(sol, args.out), "trace": os.path.relpath(trace, args.out) if os.path.exists(trace) else ""}
    for k in ("best_latency", "first_write_s", "best_found_s", "elapsed_s", "evaluations", "evals_per_s", "writes", "threads"):
        run[k] = st.get(k)
    status = f"latency {fmt(lat)}" if valid else f"INVALID ({rule}: {reason})"
    log(f"{stem} seed {seed}: {status}, wall {wall:.2f} s" + (" (killed at the limit)" if killed else "") +
        (f", rc {rc}" if rc not in (0, -signal.SIGTERM, 128 + signal.SIGTERM) else ""))
    return run


def summarise(ml, info, runs):
    """The results.csv row of one instance from its runs."""
    lb = info["lb"] if info["lb"] is not None else ml.bound(info["inst"])
    cb = info["cb"]
    lats = [r["latency"] for r in runs if r["valid"] and r["latency"] is not None]
    med = median(lats)

    def med_of(k):
        return median(fnum(r.get(k)) for r in runs)

    return {"instance": info["stem"], "ops": info["ops"], "limit_s": info["limit"], "seeds": len(runs),
            "valid": sum(r["valid"] for r in runs), "median": med, "min": min(lats) if lats else None,
            "max": max(lats) if lats else None, "lower_bound": lb, "ratio_lb": med / lb if med and lb else None,
            "contest_best": cb, "ratio_contest": med / cb if med and cb else None,
            "first_write_s": med_of("first_write_s"), "first_seen_s": med_of("first_seen_s"),
            "best_found_s": med_of("best_found_s"), "evals_per_s": med_of("evals_per_s"),
            "evaluations": med_of("evaluations"), "wall_s": med_of("wall_s"),
            "killed": sum(r["killed"] for r in runs), "warnings": sum(r["warnings"] for r in runs)}


def run_all(args, ml, infos, rundir):
    """Every (instance, seed) run, args.jobs at a time; (rows, runs) in instance order."""
    jobs = [(info, seed) for info in infos for seed in range(1, args.seeds + 1)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        runs = list(ex.map(lambda j: run_one(args, ml, j[0], j[1], rundir), jobs))
        per = [[r for r in runs if r["instance"] == info["stem"]] for info in infos]
        rows = list(ex.map(lambda i: summarise(ml, infos[i], per[i]), range(len(infos))))
    return rows, runs


def oversubscribed(jobs, threads):
    """The warning when `jobs` solves of `threads` threads (0: all) at a time exceed the cores, else None."""
    cores = len(os.sched_getaffinity(0))
    total = jobs * (threads or cores)
    if total > cores:
        return (f"warning: -j {jobs} x --threads {threads or cores} = {total} threads on {cores} cores: "
                "runs compete for the CPU (fewer evaluations than alone, noisier results)")
    return None


def chart(rows, path, header):
    """results.png: median / lower bound per instance (whiskers: min and max), contest best marked."""
    if importlib.util.find_spec("matplotlib") is None:
        log(f"no chart: {sys.executable} cannot import matplotlib (apt-get install python3-matplotlib)")
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in rows if r["ratio_lb"] is not None]
    if not rows:
        return
    y = range(len(rows))
    med = [r["ratio_lb"] for r in rows]
    lo = [m - r["min"] / r["lower_bound"] for m, r in zip(med, rows)]
    hi = [r["max"] / r["lower_bound"] - m for m, r in zip(med, rows)]
    fig, ax = plt.subplots(figsize=(9, 1.5 + 0.32 * len(rows)))
    ax.barh(y, [m - 1 for m in med], left=1, xerr=[lo, hi], color="#4c78a8", ecolor="#333333", capsize=2,
            label="median / lower bound (whiskers: min, max)")
    cb = [(i, r["contest_best"] / r["lower_bound"]) for i, r in enumerate(rows) if r["contest_best"] and r["lower_bound"]]
    if cb:
        ax.scatter([c for _, c in cb], [i for i, _ in cb], marker="|", s=200, color="#e45756", zorder=3,
                   label="contest best / lower bound")
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_yticks(list(y), [f"{r['instance']} ({r['valid']}/{r['seeds']})" for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("latency / lower bound (1 = provably optimal)")
    ax.set_title(header, fontsize=8)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def write_csv(path, cols, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})


def results_markdown(rows, header):
    lines = [header, "",
             "| instance | ops | limit s | valid | median | min | max | lower bound | med/LB | contest best | med/best "
             "| first write ms | best at s | evals/s |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        first = r["first_write_s"] if r["first_write_s"] is not None else r["first_seen_s"]
        beat = " ✓" if r["ratio_contest"] is not None and r["ratio_contest"] <= 1 else ""
        lines.append(f"| {r['instance']} | {fmt(r['ops'])} | {r['limit_s']:g} | {r['valid']}/{r['seeds']}"
                     f"{' (' + str(r['killed']) + ' killed)' if r['killed'] else ''} | {fmt(r['median'])} | {fmt(r['min'])} "
                     f"| {fmt(r['max'])} | {fmt(r['lower_bound'])} | {fmt(r['ratio_lb'])} | {fmt(r['contest_best'])} "
                     f"| {fmt(r['ratio_contest'])}{beat} | {fmt(first * 1000 if first is not None else None, 1)} "
                     f"| {fmt(r['best_found_s'], 2)} | {fmt(round(r['evals_per_s']) if r['evals_per_s'] is not None else None)} |")
    n_runs = sum(r["seeds"] for r in rows)
    n_valid = sum(r["valid"] for r in rows)
    with_cb = [r for r in rows if r["ratio_contest"] is not None]
    lines += ["", f"Valid: {n_valid}/{n_runs} runs. Geometric mean of median/LB: {fmt(geomean(r['ratio_lb'] for r in rows))}; "
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
    ap.add_argument("--instances", default=os.path.join(ROOT, "..", "shared", "benchmarks"), help="folder of *.json instances")
    ap.add_argument("--targets", default=os.path.join(ROOT, "..", "shared", "targets.csv"),
                    help="CSV with benchmark,time_limit_s,lower_bound,contest_best (default ../shared/targets.csv)")
    ap.add_argument("--seconds", type=float, help="uniform budget per run (default: contest mode, see above)")
    ap.add_argument("--threads", type=int, default=2, help="mlsys --threads (default 2; 0 = all cores)")
    ap.add_argument("--seeds", type=int, default=1, help="run seeds 1..N per instance (default 1)")
    ap.add_argument("-j", "--jobs", type=int, default=1,
                    help="runs at a time (default 1); each solve still uses --threads, so keep j x threads <= cores")
    ap.add_argument("--config", help="YAML config passed to mlsys solve --config")
    ap.add_argument("--model", action="append", help="KEY=VALUE passed to solve, evaluate and bound (repeatable)")
    ap.add_argument("--mlsys", default=os.path.join(ROOT, "build", "release", "mlsys"), help="binary (default build/release/mlsys)")
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
    if not os.path.isdir(args.instances):
        log(f"{args.instances} not found; nothing to run")
        return 0
    if not args.dry_run:
        reexec_for(["matplotlib"], "the chart of the results")
    if not os.path.exists(args.mlsys):
        log(f"{args.mlsys} not found (build first: cmake --preset release && cmake --build --preset release)")
        return 1
    args.out = os.path.abspath(args.out)
    rundir = os.path.join(args.out, "runs")
    if not args.dry_run:
        os.makedirs(rundir, exist_ok=True)
    ml = Mlsys(args.mlsys, args.model)
    if not ml.has_stats:
        log("this mlsys has no --stats: first write / best at / evals/s columns stay blank")
    targets = load_targets(args.targets)
    insts = sorted((os.path.join(args.instances, f) for f in os.listdir(args.instances) if f.endswith(".json")), key=natural_key)
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        stem = lambda p: os.path.splitext(os.path.basename(p))[0]  # noqa: E731
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
                cmd = solve_cmd(args, ml, info["inst"], base + ".json", base + ".stats.json", base + ".trace.csv", seed)
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
