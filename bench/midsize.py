#!/usr/bin/env python3
"""Mid-size benchmark: a fixed set of 60 generated graphs (20..150 ops), solved per seed, compared.

The graph set is fixed and deterministic: for every family in
  transformer, mixer, gemm-chain, cnn, random
and every requested size at index i = 0..11 of
  20, 30, 40, 50, 60, 75, 90, 100, 110, 120, 135, 150
the graph is `mlsys generate --family F --size N --seed i+1`, written to DIR/F-nNNN-sSS.json
(e.g. cnn-n075-s06.json). The generator's output depends only on (family, size, seed);
`--size` is approximate (transformer graphs come in whole blocks: size 20 gives 14 ops), the
actual op count is in the `ops` column. Files already in DIR are reused, never regenerated, so
keep one DIR for every run you want to compare (each CSV row also carries the graph's sha1).
Order everywhere is family-major in the list above, then size.

Subcommands:

  generate  write the graphs into DIR (also done by `run`).

  run       for every seed, then every graph (seed-major, so a partial run covers as many
            graphs as possible):
              MLSYS solve GRAPH OUT.json --seconds S --threads T --seed SEED --stats STATS.json
              MLSYS evaluate GRAPH OUT.json --json
            and append one CSV row (flushed at once) with: graph, family, size, gen_seed, ops,
            graph_sha1, seed, threads, seconds, best_latency, lower_bound, gap, best_found_s,
            elapsed_s, evaluations, stop_reason, exit_code, eval_latency, wall_s, status.
            status is `ok`, `MISMATCH` (the evaluator's total_latency differs from the stats'
            best_latency), or `ERROR: ...` (non-zero exit, timeout, no stats, invalid schedule).
            Rows already in the CSV for the same (graph, seed, threads, seconds) are skipped
            (resume); `--retry-errors` re-runs those whose status is not ok (the new row is
            appended; compare uses the last row). Schedules, stats and solve logs are kept in
            --workdir (default OUT.csv.d/). Progress goes to stderr.

  compare   BASE.csv NEW.csv: per graph, the median over seeds of best_latency in each file
            (rows with status ok only), a Markdown table
              graph | ops | bound | base | new | new/base | seeds | flag
            flag: WORSE    new > base * (1 + tol)
                  BETTER   new < base * (1 - 1e-9)
                  AT-BOUND base is within 1e-9 (relative) of its lower bound
            and a summary: graphs worse, better among those not at their bound, not at bound,
            and the criterion:
              default:       never worse by more than tol (default 0.1%), strictly better on at
                             least half of the graphs not at their bound;
              --label-a/-b:  (e.g. 1 thread vs 2 threads) B <= A on every graph (tol default
                             1e-9, i.e. float noise only), B strictly better on at least 1/3 of
                             the graphs not at their bound.
            `--check` makes the exit code 1 when the criterion does not hold.

  scale     T.csv [--one ONE.csv] [--one-twice ONE2.csv]: issue 53's table of a run with T
            threads: per graph latency / bound, when the best came (share of the budget), against 1
            thread at the same budget and at twice it; the geomean, the graphs above 1.10, the
            count whose last improvement came before 80% of the budget, how often T beats 1.

            With --estimate K (and --dir, where the graphs are): per graph also the bound's
            relaxation over parts of at most K ops (build/release/bench/mlsys_relaxation_estimate;
            NOT a bound, an upper limit of what that relaxation could certify) and latency / it.

  --set large (before the subcommand) switches to 15 graphs: every family at 200, 1,000 and
            5,000 ops, generator seed 9001 (named F-nNNNN-s9001).

Examples:
  bench/midsize.py --set large run --seconds 30 --threads 2 --out /tmp/large_t2.csv
  bench/midsize.py --set large run --seconds 30 --threads 1 --out /tmp/large_t1.csv
  bench/midsize.py --set large scale /tmp/large_t2.csv --one /tmp/large_t1.csv
  bench/midsize.py run --mlsys build/release/mlsys --seconds 30 --threads 2 --seeds 1 \\
      --dir /tmp/midsize --out /tmp/midsize_new_s1.csv
  bench/midsize.py run --mlsys build/release/mlsys --seconds 2 --threads 2 --seeds 1,2,3 \\
      --only '^cnn-n0[23]' --out /tmp/quick.csv
  bench/midsize.py compare /tmp/midsize_base_s1.csv /tmp/midsize_new_s1.csv
  bench/midsize.py compare t1.csv t2.csv --label-a 1thread --label-b 2threads
"""
import argparse
import concurrent.futures
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib.common import DEFAULT_MLSYS, FAMILIES, file_sha1, fnum as to_float, load_problem, parse_seeds  # noqa: E402
from benchlib.mlsys import Mlsys, MlsysError  # noqa: E402

SIZES = [20, 30, 40, 50, 60, 75, 90, 100, 110, 120, 135, 150]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIR = os.path.join(tempfile.gettempdir(), "mlsys-midsize")
COLUMNS = ["graph", "family", "size", "gen_seed", "ops", "graph_sha1", "seed", "threads", "seconds",
           "best_latency", "lower_bound", "gap", "best_found_s", "elapsed_s", "evaluations",
           "stop_reason", "exit_code", "eval_latency", "wall_s", "status"]
REL_EPS = 1e-9


# The large set (issue 53, whole models at speed): every family at 200, 1,000 and 5,000 ops, from a
# generator seed no tuning has used.
LARGE_FAMILIES = ["transformer", "cnn", "mixer", "random", "gemm-chain"]
LARGE_SIZES = [200, 1000, 5000]
LARGE_SEED = 9001


def graph_set(which="mid"):
    """The fixed list of (name, family, requested size, generator seed), in benchmark order."""
    if which == "large":
        return [(f"{fam}-n{n:04d}-s{LARGE_SEED}", fam, n, LARGE_SEED) for fam in LARGE_FAMILIES for n in LARGE_SIZES]
    out = []
    for fam in FAMILIES:
        for i, n in enumerate(SIZES):
            seed = i + 1
            out.append((f"{fam}-n{n:03d}-s{seed:02d}", fam, n, seed))
    return out


def use_set(which):
    """Switch every subcommand to graph set `which` (mid: the 60 graphs; large: 15 of 200-5,000 ops)."""
    global GRAPHS, ORDER
    GRAPHS = graph_set(which)
    ORDER = {g[0]: i for i, g in enumerate(GRAPHS)}


use_set("mid")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def check_binary(path):
    try:
        return Mlsys(path)
    except MlsysError:
        sys.exit(f"midsize: mlsys binary not found or not executable: {path!r}\n"
                 f"  build it, e.g.: cmake --preset release && cmake --build --preset release\n"
                 f"  and pass --mlsys PATH")


def select(only):
    if not only:
        return list(GRAPHS)
    try:
        rx = re.compile(only)
    except re.error as e:
        sys.exit(f"midsize: bad --only pattern {only!r}: {e}")
    sel = [g for g in GRAPHS if rx.search(g[0])]
    if not sel:
        sys.exit(f"midsize: --only {only!r} matches no graph (names look like cnn-n075-s06)")
    return sel


def ensure_graphs(mlsys, gdir, graphs):
    """Generate the missing graph files; return {name: (path, ops, sha1)}."""
    os.makedirs(gdir, exist_ok=True)
    info, made = {}, 0
    for name, fam, n, seed in graphs:
        path = os.path.join(gdir, name + ".json")
        prob = load_problem(path) if os.path.exists(path) else None
        if prob is None:
            try:
                mlsys.generate(fam, n, seed, path)
            except MlsysError as e:
                sys.exit(f"midsize: generate failed for {name}: {e}")
            prob = load_problem(path)
            if prob is None:
                sys.exit(f"midsize: generated file {path} is not a problem")
            made += 1
        info[name] = (path, len(prob["op_types"]), file_sha1(path)[:12])
    shas = {}
    for name, (_, _, sha) in info.items():
        if sha in shas:
            log(f"midsize: note: {name} is identical to {shas[sha]}")
        shas.setdefault(sha, name)
    log(f"midsize: {len(info)} graphs in {gdir} ({made} generated, {len(info) - made} reused)")
    return info


def seeds_of(text):
    try:
        return parse_seeds(text)
    except ValueError as e:
        sys.exit(f"midsize: --seeds {e}")


def fmt_num(x):
    if x is None or x == "":
        return ""
    if isinstance(x, float):
        return repr(x)
    return str(x)


def read_csv(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        missing = [c for c in ("graph", "seed", "best_latency", "status") if c not in (rd.fieldnames or [])]
        if missing:
            sys.exit(f"midsize: {path} is not a midsize CSV (missing columns {missing})")
        return list(rd)


def num_key(x):
    """Canonical text of a number for the resume key (2 and 2.0 are the same budget)."""
    v = to_float(x)
    return repr(v) if v is not None else str(x)


def run_one(mlsys, work, gpath, name, seed, threads, seconds):
    base = os.path.join(work, f"{name}.t{threads}.seed{seed}")
    out_json, stats_json = base + ".out.json", base + ".stats.json"
    row = {"exit_code": "", "status": "ok"}
    res = mlsys.solve(gpath, out_json, seconds=seconds, threads=threads, seed=seed, stats=stats_json, quiet=False,
                      kill_at=2 * seconds + 60, log=base + ".log", log_cmd=True)
    row["exit_code"] = "timeout" if res.killed else res.rc
    row["wall_s"] = round(res.wall_s, 3)
    errors = []
    if row["exit_code"] != 0:
        errors.append(f"solve exit {row['exit_code']}")
    if res.stats is None:
        errors.append("no stats")
    if res.stats:
        for k in ("best_latency", "lower_bound", "gap", "best_found_s", "elapsed_s", "evaluations",
                  "stop_reason"):
            row[k] = res.stats.get(k, "")
    best = to_float(row.get("best_latency"))
    if os.path.exists(out_json):
        ev = mlsys.evaluate(gpath, out_json)
        lat = to_float(ev.doc.get("total_latency"))
        row["eval_latency"] = ev.doc.get("total_latency", "")
        if ev.error:
            errors.append(f"evaluate failed: {ev.error}")
        elif ev.rc != 0 or not ev.doc.get("valid", False):
            errors.append(f"evaluate exit {ev.rc}, valid={ev.doc.get('valid')}")
        elif best is not None and lat is not None and abs(lat - best) > REL_EPS * max(1.0, abs(best)):
            row["status"] = "MISMATCH"
        elif best is None:
            errors.append("no best_latency in stats")
    else:
        errors.append("no schedule written")
    if errors:
        row["status"] = ("MISMATCH; " if row["status"] == "MISMATCH" else "") + "ERROR: " + "; ".join(errors)
    return row


def cmd_generate(args):
    mlsys = check_binary(args.mlsys)
    ensure_graphs(mlsys, args.dir, select(args.only))


def cmd_run(args):
    mlsys = check_binary(args.mlsys)
    seeds = seeds_of(args.seeds)
    if args.seconds <= 0 or args.threads < 0 or args.jobs < 1:
        sys.exit("midsize: need --seconds > 0, --threads >= 0, -j >= 1")
    graphs = select(args.only)
    info = ensure_graphs(mlsys, args.dir, graphs)
    work = args.workdir or (args.out + ".d")
    os.makedirs(work, exist_ok=True)

    existing = read_csv(args.out)
    if existing:
        with open(args.out, newline="") as f:
            header = next(csv.reader(f))
        if header != COLUMNS:
            sys.exit(f"midsize: {args.out} has different columns than this script writes; use another --out")
    configs = {(r.get("threads"), num_key(r.get("seconds"))) for r in existing}
    this_cfg = (str(args.threads), num_key(args.seconds))
    if configs - {this_cfg}:
        log(f"midsize: warning: {args.out} also has rows for (threads, seconds) {sorted(configs - {this_cfg})}; "
            f"compare will mix them")
    last = {}
    for r in existing:
        last[(r["graph"], str(r["seed"]), r.get("threads"), num_key(r.get("seconds")))] = r
    todo = []
    for seed in seeds:
        for name, fam, n, gseed in graphs:
            prev = last.get((name, str(seed), str(args.threads), num_key(args.seconds)))
            if prev is not None and (prev["status"] == "ok" or not args.retry_errors):
                continue
            todo.append((seed, name, fam, n, gseed))
    skipped = len(seeds) * len(graphs) - len(todo)
    est = len(todo) * args.seconds / args.jobs
    log(f"midsize: {len(todo)} runs to do ({skipped} already in {args.out}), "
        f"~{est / 60:.0f} min at {args.seconds:g} s each, -j {args.jobs}; binary {mlsys.path}")

    new_file = not existing
    fh = open(args.out, "a", newline="")
    wr = csv.DictWriter(fh, fieldnames=COLUMNS)
    if new_file:
        wr.writeheader()
        fh.flush()
    lock = threading.Lock()
    done = [0]
    bad = [0]
    t_start = time.monotonic()

    def job(item):
        seed, name, fam, n, gseed = item
        gpath, ops, sha = info[name]
        row = run_one(mlsys, work, gpath, name, seed, args.threads, args.seconds)
        row.update({"graph": name, "family": fam, "size": n, "gen_seed": gseed, "ops": ops, "graph_sha1": sha,
                    "seed": seed, "threads": args.threads, "seconds": fmt_num(args.seconds)})
        with lock:
            wr.writerow({c: fmt_num(row.get(c, "")) for c in COLUMNS})
            fh.flush()
            os.fsync(fh.fileno())
            done[0] += 1
            if row["status"] != "ok":
                bad[0] += 1
            el = time.monotonic() - t_start
            eta = el / done[0] * (len(todo) - done[0])
            gap = to_float(row.get("gap"))
            gap_s = f"{100 * gap:.2f}%" if gap is not None else "?"
            log(f"[{done[0]}/{len(todo)}] {name} ({ops} ops) seed {seed}: best {row.get('best_latency', '?')} "
                f"bound {row.get('lower_bound', '?')} gap {gap_s} found {row.get('best_found_s', '?')} s "
                f"stop {row.get('stop_reason', '?')} wall {row['wall_s']} s  {row['status']}  "
                f"(eta {eta / 60:.0f} min)")

    try:
        if args.jobs == 1:
            for item in todo:
                job(item)
        else:
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
                for f in [ex.submit(job, item) for item in todo]:
                    f.result()
    except KeyboardInterrupt:
        log("midsize: interrupted; the CSV holds every finished row, rerun the same command to resume")
        sys.exit(130)
    finally:
        fh.close()
    log(f"midsize: done, {done[0]} rows written to {args.out}, {bad[0]} not ok")


def per_graph(path):
    """{graph: dict(ops, bound, median, n, seeds)} over the ok rows (the last row per graph and seed)."""
    rows = read_csv(path)
    last, bad = {}, []
    for r in rows:
        last[(r["graph"], r["seed"])] = r
    cfgs = sorted({(r.get("threads", ""), r.get("seconds", "")) for r in last.values()})
    groups = {}
    for (g, s), r in last.items():
        if r["status"] != "ok" or to_float(r["best_latency"]) is None:
            bad.append(f"{g} seed {s}: {r['status']}")
            continue
        groups.setdefault(g, []).append(r)
    out = {}
    for g, rs in groups.items():
        bounds = [b for b in (to_float(r.get("lower_bound")) for r in rs) if b is not None]
        out[g] = {"ops": rs[0].get("ops", ""), "bound": max(bounds) if bounds else None,
                  "median": statistics.median(to_float(r["best_latency"]) for r in rs), "n": len(rs),
                  "sha": {r.get("graph_sha1", "") for r in rs}}
    return out, bad, cfgs


def fmt_lat(x):
    return "" if x is None else f"{x:.1f}"


def cmd_compare(args):
    labeled = args.label_a is not None or args.label_b is not None
    la = args.label_a or ("A" if labeled else "base")
    lb = args.label_b or ("B" if labeled else "new")
    tol = args.tol if args.tol is not None else (REL_EPS if labeled else 0.001)
    for p in (args.a, args.b):
        if not os.path.exists(p):
            sys.exit(f"midsize: no such file {p}")
    A, bad_a, cfg_a = per_graph(args.a)
    B, bad_b, cfg_b = per_graph(args.b)
    print(f"{la}: {args.a}  (threads, seconds) {cfg_a}")
    print(f"{lb}: {args.b}  (threads, seconds) {cfg_b}")
    print()
    notes = 0
    for lab, bad in ((la, bad_a), (lb, bad_b)):
        for m in bad:
            print(f"- excluded from {lab}: {m}")
            notes += 1
    common = sorted(set(A) & set(B), key=lambda g: (ORDER.get(g, len(ORDER)), g))
    for lab, only in ((la, set(A) - set(B)), (lb, set(B) - set(A))):
        if only:
            print(f"- only in {lab} (skipped): {', '.join(sorted(only, key=lambda g: (ORDER.get(g, 1e9), g)))}")
            notes += 1
    if not common:
        sys.exit("midsize: no graph in common")
    for g in common:
        if A[g]["sha"] != B[g]["sha"]:
            print(f"- warning: {g} has different graph files ({A[g]['sha']} vs {B[g]['sha']}); use the same --dir")
            notes += 1
    if notes:
        print()
    print(f"| graph | ops | bound | {la} | {lb} | {lb}/{la} | seeds | flag |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    worse = better = not_at = 0
    ratios = []
    for g in common:
        a, b = A[g], B[g]
        bound = a["bound"] if a["bound"] is not None else b["bound"]
        av, bv = a["median"], b["median"]
        ratio = bv / av if av > 0 else float("nan")
        if av > 0 and bv > 0:
            ratios.append(ratio)
        flags = []
        at_bound = bound is not None and av - bound <= REL_EPS * abs(av)
        if at_bound:
            flags.append("AT-BOUND")
        else:
            not_at += 1
        if bv > av * (1 + tol):
            flags.append("WORSE")
            worse += 1
        elif bv < av * (1 - REL_EPS):
            flags.append("BETTER")
            if not at_bound:
                better += 1
        print(f"| {g} | {a['ops']} | {fmt_lat(bound)} | {fmt_lat(av)} | {fmt_lat(bv)} | {ratio:.5f} | "
              f"{a['n']}/{b['n']} | {' '.join(flags)} |")
    print()
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else float("nan")
    at = len(common) - not_at
    print(f"graphs compared: {len(common)}; at their bound ({la}): {at}; not at bound: {not_at}")
    print(f"worse ({lb} > {la} x (1 + {tol:g})): {worse}")
    print(f"better ({lb} < {la}) among those not at bound: {better} of {not_at}")
    print(f"geomean {lb}/{la}: {geo:.5f}")
    if labeled:
        need = math.ceil(not_at / 3)
        ok = worse == 0 and better >= need
        crit = (f"{lb} <= {la} on every graph (tol {tol:g}) and strictly better on >= 1/3 of those "
                f"not at bound (>= {need})")
    else:
        need = math.ceil(not_at / 2)
        ok = worse == 0 and better >= need
        crit = (f"never worse by more than {100 * tol:g}%, strictly better on at least half of those "
                f"not at their bound (>= {need})")
    print(f"criterion: {crit}: {'HOLDS' if ok else 'FAILS'}")
    if bad_a or bad_b:
        print(f"note: {len(bad_a)} + {len(bad_b)} rows excluded (errors or mismatches), see above")
    if args.check and not ok:
        sys.exit(1)


def rows_by_graph(path):
    """{graph: the last ok row per graph and seed, as a list}; every row read."""
    last = {}
    for r in read_csv(path):
        last[(r["graph"], r["seed"])] = r
    out = {}
    for (g, _), r in last.items():
        if r["status"] == "ok" and to_float(r["best_latency"]) is not None:
            out.setdefault(g, []).append(r)
    return out


def cmd_scale(args):
    """The table of issue 53 from a run with T threads (and optionally one with 1 thread, same budget,
    and one with 1 thread at twice the budget): per graph latency / bound, when the best came (share
    of the budget), and whether T threads beat 1."""
    T = rows_by_graph(args.csv)
    one = rows_by_graph(args.one) if args.one else {}
    twice = rows_by_graph(args.one_twice) if args.one_twice else {}
    med = lambda rs, k: statistics.median(to_float(r[k]) for r in rs)  # noqa: E731
    graphs = sorted(T, key=lambda g: (ORDER.get(g, len(ORDER)), g))
    if not graphs:
        sys.exit(f"midsize: no ok row in {args.csv}")
    head = "| graph | ops | latency | bound | latency / bound | best at (share of budget) |"
    sep = "|---|---:|---:|---:|---:|---:|"
    if one:
        head += " 1 thread | T beats 1 |"
        sep += "---:|---|"
    if twice:
        head += " 1 thread at 2x | T reaches it |"
        sep += "---:|---|"
    if args.estimate:
        head += f" estimate (parts <= {args.estimate} ops, not a bound) | latency / estimate |"
        sep += "---:|---:|"
    print(head)
    print(sep)
    ratios, early, n, beats, not_at, reach, reach_n, by_est = [], 0, 0, 0, 0, 0, 0, []
    for g in graphs:
        rs = T[g]
        lat, bound = med(rs, "best_latency"), max(to_float(r["lower_bound"]) or 0 for r in rs)
        share = med(rs, "best_found_s") / max(1e-9, med(rs, "seconds"))
        ratio = lat / bound if bound > 0 else float("inf")
        ratios.append(ratio)
        early += share <= 0.8
        n += 1
        at = bound > 0 and lat - bound <= REL_EPS * lat
        row = f"| {g} | {rs[0]['ops']} | {lat:,.0f} | {bound:,.0f} | {ratio:.4f} | {share:.0%} |"
        if one:
            if g in one:
                l1 = med(one[g], "best_latency")
                ok = lat < l1 * (1 - REL_EPS)
                not_at += not at
                beats += ok and not at
                row += f" {l1:,.0f} | {'at bound' if at else ('yes' if ok else 'NO')} |"
            else:
                row += " | |"
        if twice:
            if g in twice:
                l2 = med(twice[g], "best_latency")
                reach_n += 1
                reach += lat <= l2 * (1 + REL_EPS)
                row += f" {l2:,.0f} | {'yes' if lat <= l2 * (1 + REL_EPS) else 'no'} |"
            else:
                row += " | |"
        if args.estimate:
            # bench/relaxation_estimate.cpp: the bound's relaxation over the parts of at most K ops of
            # every large component (an upper limit of what that relaxation could certify).
            r = subprocess.run([args.estimate_bin, os.path.join(args.dir, g + ".json"), "--part-ops",
                                str(args.estimate), "--seconds", "600"], capture_output=True, text=True)
            if r.returncode == 0:
                est = max(json.loads(r.stdout)["with_estimates"], bound)
                by_est.append(lat / est)
                row += f" {est:,.0f} | {lat / est:.4f} |"
            else:
                row += " (failed) | |"
        print(row)
    finite = [r for r in ratios if math.isfinite(r)]
    geo = math.exp(sum(math.log(r) for r in finite) / len(finite)) if finite else float("nan")
    print()
    print(f"graphs: {n}; geomean(latency / bound) {geo:.4f}; above 1.10: {sum(r > 1.10 for r in ratios)}; "
          f"worst {max(ratios):.4f}")
    print(f"last improvement before 80% of the budget: {early} of {n}")
    if one:
        print(f"T threads strictly better than 1 thread at the same budget: {beats} of {not_at} not at their bound")
    if twice:
        print(f"T threads at S reach 1 thread at 2S: {reach} of {reach_n}")
    if by_est:
        ge = math.exp(sum(math.log(r) for r in by_est) / len(by_est))
        print(f"geomean(latency / estimate) {ge:.4f}; above 1.10: {sum(r > 1.10 for r in by_est)}; above 1.05: "
              f"{sum(r > 1.05 for r in by_est)} (the estimate is not a bound: it says how much of each gap a "
              "complete relaxation could at most recover)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=["mid", "large"], default="mid",
                    help="the graph set: mid (60 graphs of 20-150 ops, the default) or large (5 families x "
                         "200, 1,000, 5,000 ops, generator seed 9001)")
    sub = ap.add_subparsers(dest="cmd", required=True)

    g = sub.add_parser("generate", help="write the 60 graphs into --dir")
    g.add_argument("--mlsys", default=DEFAULT_MLSYS, help="mlsys binary (default: build/release/mlsys)")
    g.add_argument("--dir", default=DEFAULT_DIR, help=f"graph directory (default {DEFAULT_DIR}); files reused")
    g.add_argument("--only", default=None, help="regex on graph names, e.g. '^cnn' or 'n0[23]0'")
    g.set_defaults(func=cmd_generate)

    r = sub.add_parser("run", help="solve every graph for every seed, append rows to a CSV")
    r.add_argument("--mlsys", default=DEFAULT_MLSYS, help="mlsys binary (default: build/release/mlsys)")
    r.add_argument("--dir", default=DEFAULT_DIR, help=f"graph directory (default {DEFAULT_DIR}); files reused")
    r.add_argument("--seconds", type=float, default=30, help="solve budget per run (default 30)")
    r.add_argument("--threads", type=int, default=2, help="solve --threads (default 2)")
    r.add_argument("--seeds", default="1", help="solve seeds, e.g. 1 or 1,2,3 or 1-3 (default 1)")
    r.add_argument("--out", required=True, help="CSV to append to (resumed if it exists)")
    r.add_argument("--only", default=None, help="regex on graph names, e.g. '^cnn' or 'n0[23]0'")
    r.add_argument("-j", "--jobs", type=int, default=1, help="concurrent solves (default 1)")
    r.add_argument("--workdir", default=None, help="schedules, stats, logs (default OUT.d/)")
    r.add_argument("--retry-errors", action="store_true", help="re-run rows whose status is not ok")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("compare", help="median per graph of two CSVs, Markdown table and criterion")
    c.add_argument("a", metavar="BASE.csv")
    c.add_argument("b", metavar="NEW.csv")
    c.add_argument("--tol", type=float, default=None,
                   help="relative tolerance for WORSE (default 0.001; 1e-9 with --label-a/--label-b)")
    c.add_argument("--label-a", default=None, help="name of the first file (switches to the A-vs-B criterion)")
    c.add_argument("--label-b", default=None, help="name of the second file")
    c.add_argument("--check", action="store_true", help="exit 1 when the criterion fails")
    c.set_defaults(func=cmd_compare)

    k = sub.add_parser("scale", help="the issue-53 table of one run (T threads), against 1 thread if given")
    k.add_argument("csv", metavar="T.csv")
    k.add_argument("--one", default=None, metavar="ONE.csv", help="the same graphs and budget with 1 thread")
    k.add_argument("--one-twice", default=None, metavar="ONE2.csv", help="1 thread at twice the budget")
    k.add_argument("--estimate", type=int, default=0, metavar="K",
                   help="also the relaxation estimate over parts of at most K ops (bench/relaxation_estimate.cpp)")
    k.add_argument("--estimate-bin", default=os.path.join(ROOT, "build", "release", "bench", "mlsys_relaxation_estimate"))
    k.add_argument("--dir", default=DEFAULT_DIR, help=f"graph directory (default {DEFAULT_DIR})")
    k.set_defaults(func=cmd_scale)

    args = ap.parse_args()
    use_set(args.set)
    args.func(args)


if __name__ == "__main__":
    main()
