#!/usr/bin/env python3
"""The exact solver (engine/exact/exact.h) over generated graphs, against `mlsys solve`.

For every family, requested size and seed: generate the problem (`mlsys generate`), run the exact
solver (`mlsys_exact`, bench/exact_main.cpp) with a time limit, run `mlsys solve` for a short
budget, price its schedule with `mlsys evaluate --json`, and print one row:

  family, size (requested), ops (actual), seed, proven optimal within the limit, exact time,
  exact latency, solve latency, ratio solve/exact, flag

flag: MISS  `solve` is worse than the exact optimum (a search miss to fix);
      SOLVE-BELOW-CERTIFICATE (--full-space) `solve` is below the exact solver's lower bound over
            the spec's whole space: a bug in one of them;
      BOUND-ABOVE-OPTIMUM `mlsys bound` is above a proven optimum: a bug in the bound;
      BELOW `solve` is better than the exact figure: its schedule lies outside the exact
            solver's space (e.g. a tile side that is not the smallest for its count), or the
            exact run was stopped before proving;
      DUP   the generator gave the same graph as an earlier row (transformer and mixer graphs
            have a minimum size, so small sizes coincide); not run again.

Build both binaries first (the exact tool is in the bench directory):

  cmake -S . -B build/exact-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DMLSYS_BUILD_BENCH=ON \\
        -DMLSYS_BUILD_TESTS=OFF && cmake --build build/exact-bench --target mlsys mlsys_exact

Examples:
  bench/exact_sweep.py                                  # 5 seeds, sizes 3-7, 10 s limit
  bench/exact_sweep.py --sizes 8-10 --seeds 2           # how far it gets on larger graphs
  bench/exact_sweep.py --families random --sizes 3-5 --limit 30 --solve-seconds 1
  bench/exact_sweep.py --full-space --model k_limit=reduction   # the certificate, grader's reading
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib.common import FAMILIES, ROOT, count_ops, file_sha1, parse_seeds  # noqa: E402
from benchlib.mlsys import Mlsys, MlsysError  # noqa: E402


def run(cmd, timeout):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--sizes", default="3-7", help="requested sizes, e.g. 3-7 or 8,9,10")
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N per family and size")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--limit", type=float, default=10, help="exact solver time limit, seconds")
    ap.add_argument("--solve-seconds", type=float, default=2, help="`mlsys solve` budget")
    ap.add_argument("--mlsys", default=os.path.join(ROOT, "build", "exact-bench", "mlsys"))
    ap.add_argument("--exact", default=os.path.join(ROOT, "build", "exact-bench", "bench", "mlsys_exact"))
    ap.add_argument("--workdir", default=None, help="keep problems and schedules here (default: a temp dir)")
    ap.add_argument("--json", default=None, help="also write the rows as JSON to this file")
    ap.add_argument("--full-space", action="store_true",
                    help="the exact solver over the spec's whole space (every side, every order): a certificate")
    ap.add_argument("--model", action="append", default=[], metavar="K=V",
                    help="a model option for every tool (repeatable), e.g. k_limit=reduction")
    ap.add_argument("--cover-limit", type=int, default=None, metavar="N",
                    help="also run `mlsys bound --cover-limit N` (the large-component arguments on small graphs) "
                         "and flag it above the exact schedule or the solve: column 'bnd@N'")
    ap.add_argument("--share-parts", type=int, default=None, metavar="N",
                    help="with --cover-limit: also pass --share-parts N to that bound")
    ap.add_argument("--lp-parts", type=int, default=None, metavar="N",
                    help="with --cover-limit: also pass --lp-parts N to that bound (0: the share bound alone)")
    ap.add_argument("--reuse", action="store_true",
                    help="reuse the exact solver's results kept in --workdir (STEM.exact-stats.json) instead of "
                         "running it again: re-checks bounds against earlier sweeps")
    args = ap.parse_args()

    for b in (args.mlsys, args.exact):
        if not os.access(b, os.X_OK):
            sys.exit(f"missing binary {b} (see the build command in --help)")
    try:
        sizes = parse_seeds(args.sizes)
    except ValueError as e:
        sys.exit(f"--sizes {e}")
    ml = Mlsys(args.mlsys, model=args.model)
    exact_extra = (["--full-space"] if args.full_space else []) + [a for kv in args.model for a in ("--model", kv)]
    work = args.workdir or tempfile.mkdtemp(prefix="exact-sweep-")
    os.makedirs(work, exist_ok=True)

    hdr = (f"{'family':<12} {'size':>4} {'ops':>4} {'seed':>4} {'proven':>6} {'time_s':>8} {'exact':>18} {'solve':>18} {'ratio':>8} {'opt/bnd':>8}"
           + (f" {'bnd@' + str(args.cover_limit):>8}" if args.cover_limit is not None else "") + "  flag")
    print(hdr)
    print("-" * len(hdr))
    rows, seen = [], {}
    for fam in args.families.split(","):
        for size in sizes:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                stem = f"{fam}-{size}-s{seed}"
                prob = os.path.join(work, stem + ".json")
                try:
                    ml.generate(fam, size, seed, prob, timeout=60)
                except MlsysError as e:
                    print(f"{stem}: generate failed: {e}")
                    continue
                ops = count_ops(prob)
                digest = file_sha1(prob)
                if digest in seen:
                    print(f"{fam:<12} {size:>4} {ops:>4} {seed:>4} {'':>6} {'':>8} {'':>18} {'':>18} {'':>8}  DUP of {seen[digest]}")
                    continue
                seen[digest] = stem
                ex_out = os.path.join(work, stem + ".exact.json")
                stats = os.path.join(work, stem + ".exact-stats.json")
                t0 = time.time()
                if args.reuse and os.path.exists(stats):
                    with open(stats) as f:
                        ex = json.load(f)
                else:
                    r = run([args.exact, prob, ex_out, "--seconds", str(args.limit)] + exact_extra, args.limit + 120)
                    try:
                        ex = json.loads(r.stdout)
                    except ValueError:
                        print(f"{stem}: mlsys_exact failed ({r.returncode}): {r.stderr.strip()}")
                        continue
                    with open(stats, "w") as f:
                        json.dump(ex, f)
                wall = time.time() - t0
                so_out = os.path.join(work, stem + ".solve.json")
                res = ml.solve(prob, so_out, seconds=args.solve_seconds, kill_at=args.solve_seconds + 60)
                solve = None
                if res.rc == 0 and not res.killed:
                    ev = ml.evaluate(prob, so_out, timeout=120)
                    if ev.valid:
                        solve = ev.latency
                bound = ml.bound(prob, timeout=120)
                exact = ex["latency"] if ex.get("found") else None
                low = None
                if args.cover_limit is not None:
                    low = ml.bound(prob, timeout=120, extra=["--cover-limit", str(args.cover_limit)]
                                   + (["--share-parts", str(args.share_parts)] if args.share_parts is not None else [])
                                   + (["--lp-parts", str(args.lp_parts)] if args.lp_parts is not None else []))
                    if low is not None and exact is not None and low > exact * (1 + 1e-9):
                        flag_low = " LOWCOVER-BOUND-ABOVE-EXACT"
                    elif low is not None and solve is not None and low > solve * (1 + 1e-9):
                        flag_low = " LOWCOVER-BOUND-ABOVE-SOLVE"
                    else:
                        flag_low = ""
                ratio = solve / exact if (solve is not None and exact) else None
                flag = ""
                if ratio is not None and solve > exact * (1 + 1e-12):
                    flag = "MISS"
                elif ratio is not None and solve < exact * (1 - 1e-12):
                    flag = "BELOW"
                if bound is not None and exact is not None and ex["proven_optimal"] and bound > exact * (1 + 1e-9):
                    flag += " BOUND-ABOVE-OPTIMUM"
                if bound is not None and solve is not None and bound > solve * (1 + 1e-9):
                    flag += " BOUND-ABOVE-SOLVE"
                if ex.get("lb_violations"):
                    flag += " LB-VIOLATION"
                if args.cover_limit is not None:
                    flag += flag_low
                # Over the whole space no valid schedule costs less than the exact lower bound.
                if args.full_space and solve is not None and ex.get("found") and solve < ex["lower_bound"] * (1 - 1e-9):
                    flag += " SOLVE-BELOW-CERTIFICATE"
                if args.full_space and bound is not None and ex["proven_optimal"] and bound > exact * (1 + 1e-9):
                    flag += " (a bug: the spec's optimum is below the bound)"
                row = dict(family=fam, size=size, ops=ops, seed=seed, proven=ex["proven_optimal"], status=ex.get("stop_reason"),
                           seconds=ex["seconds"],
                           wall=wall, exact=exact, lower_bound=ex.get("lower_bound"), bound=bound, bound_low_cover=low,
                           solve=solve, ratio=ratio, flag=flag.strip(),
                           states_expanded=ex.get("states_expanded"), configs_priced=ex.get("configs_priced"))
                rows.append(row)
                fmt = lambda v: f"{v:.10g}" if isinstance(v, (int, float)) else "-"
                print(f"{fam:<12} {size:>4} {ops:>4} {seed:>4} {('yes' if row['proven'] else 'no'):>6} {row['seconds']:>8.3f} "
                      f"{fmt(exact):>18} {fmt(solve):>18} {(f'{ratio:.4f}' if ratio else '-'):>8} {(f'{exact / bound:.4f}' if (exact and bound) else '-'):>8}"
                      + (f" {(f'{exact / low:.4f}' if (exact and low) else '-'):>8}" if args.cover_limit is not None else "")
                      + f"  {row['flag']}", flush=True)

    # Summary per family and actual op count.
    print()
    print(f"{'family':<12} {'ops':>4} {'graphs':>6} {'proven':>6} {'max_s':>8} {'mean_s':>8} {'misses':>6} {'worst':>8}")
    groups = {}
    for r in rows:
        groups.setdefault((r["family"], r["ops"]), []).append(r)
    for (fam, ops), g in sorted(groups.items()):
        proven = sum(1 for r in g if r["proven"])
        misses = [r for r in g if r["flag"].startswith("MISS")]
        worst = max((r["ratio"] for r in g if r["ratio"]), default=None)
        print(f"{fam:<12} {ops:>4} {len(g):>6} {proven:>6} {max(r['seconds'] for r in g):>8.3f} "
              f"{sum(r['seconds'] for r in g) / len(g):>8.3f} {len(misses):>6} {(f'{worst:.4f}' if worst else '-'):>8}")
    total_proven = sum(1 for r in rows if r["proven"])
    bounded = [r for r in rows if r.get("status") == "bounded"]
    if bounded:
        gaps = [r["exact"] / r["lower_bound"] for r in bounded if r["lower_bound"]]
        print(f"bounded (search complete, a gap between the schedule and the certificate): {len(bounded)}; "
              f"largest gap {max(gaps) - 1:.4%}" if gaps else "")
    tight = [r["exact"] / r["bound"] for r in rows if r["proven"] and r["exact"] and r.get("bound")]
    if tight:
        print(f"bound: {sum(1 for r in rows if 'BOUND-ABOVE' in r['flag'])} graphs with the bound above the optimum or solve; "
              f"optimum / bound geomean {math.exp(sum(math.log(x) for x in tight) / len(tight)):.4f}, "
              f"max {max(tight):.4f}, at the bound {sum(1 for x in tight if x <= 1 + 1e-9)}/{len(tight)}")
    if args.cover_limit is not None:
        lows = [r["exact"] / r["bound_low_cover"] for r in rows if r["exact"] and r.get("bound_low_cover")]
        print(f"bound --cover-limit {args.cover_limit}: {sum(1 for r in rows if 'LOWCOVER' in r['flag'])} graphs above the "
              f"exact schedule or solve" + (f"; exact / bound geomean {math.exp(sum(math.log(x) for x in lows) / len(lows)):.4f}"
                                              if lows else ""))
    print(f"\n{total_proven}/{len(rows)} proven optimal within {args.limit:g} s; "
          f"{sum(1 for r in rows if r['flag'].startswith('MISS'))} graphs where solve ({args.solve_seconds:g} s) is worse")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
