#!/usr/bin/env python3
"""Solve every problem of the model shelf and print a Markdown table of the results.

For each instances/models/*.json: `BIN solve P O -s S -t T --stats STATS.json -q`, then
`BIN evaluate P O` (it must say the schedule is valid). The table: model, ops (MatMul/Pointwise),
best latency, lower bound, gap % ((best - bound) / best), seconds to the best, valid.

The binary is rebuilt by others while you work? Copy it once and pass the copy with --bin.

Exit codes: 0 every schedule valid; 1 a solve failed or a schedule was not valid; 2 usage.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# make_models.py's order; other problems follow, by name
ORDER = ["resnet18", "resnet50", "mobilenet_v2", "vit_b_16", "encoder-s128", "encoder-s512",
         "decoder-s128", "decoder-s512"]


def default_bin() -> Path:
    for p in (REPO / "build" / "mlsys", REPO / "build" / "release" / "mlsys"):
        if p.exists():
            return p
    return REPO / "build" / "mlsys"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Example: python3 bench/models/shelf_table.py --bin /tmp/mlsys -s 10 -t 2")
    ap.add_argument("--bin", type=Path, default=default_bin(),
                    help="the mlsys binary (default: build/mlsys, else build/release/mlsys)")
    ap.add_argument("--instances", type=Path, default=REPO / "instances" / "models",
                    help="the shelf's problems (default: %(default)s)")
    ap.add_argument("-s", "--seconds", type=float, default=10, help="budget per solve (default 10)")
    ap.add_argument("-t", "--threads", type=int, default=2, help="threads per solve (default 2)")
    ap.add_argument("--seed", type=int, default=1, help="solve seed (default 1)")
    ap.add_argument("--only", help="comma-separated model names (file stems)")
    ap.add_argument("--out-dir", type=Path,
                    help="keep the schedules and stats here (default: a temporary directory)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the rows as JSON")
    a = ap.parse_args()

    if not a.bin.exists():
        ap.error(f"no binary at {a.bin} (build it, or pass --bin)")
    problems = sorted(a.instances.glob("*.json"),
                      key=lambda p: (ORDER.index(p.stem) if p.stem in ORDER else len(ORDER), p.stem))
    if a.only:
        want = {n.strip() for n in a.only.split(",")}
        problems = [p for p in problems if p.stem in want]
    if not problems:
        print(f"shelf_table: no problems in {a.instances} (run bench/models/make_models.py first)",
              file=sys.stderr)
        return 1

    tmp = tempfile.TemporaryDirectory(prefix="mlsys-shelf-")
    out_dir = a.out_dir or Path(tmp.name)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows, bad = [], 0
    for p in problems:
        problem = json.loads(p.read_text())
        kinds = collections.Counter(problem.get("op_types", []))
        row = {"model": p.stem, "ops": len(problem.get("op_types", [])),
               "matmul": kinds.get("MatMul", 0), "pointwise": kinds.get("Pointwise", 0)}
        rows.append(row)
        sched, stats = out_dir / f"{p.stem}.schedule.json", out_dir / f"{p.stem}.stats.json"
        cmd = [str(a.bin), "solve", str(p), str(sched), "-s", str(a.seconds), "-t", str(a.threads),
               "--seed", str(a.seed), "--stats", str(stats), "-q"]
        t0 = time.perf_counter()
        solve = subprocess.run(cmd, capture_output=True, text=True)
        row["wall_s"] = time.perf_counter() - t0
        if solve.returncode != 0 or not stats.exists():
            row["valid"] = f"solve exit {solve.returncode}: {(solve.stderr.strip().splitlines() or [''])[-1][:200]}"
            bad += 1
            continue
        s = json.loads(stats.read_text())
        row.update(best=s.get("best_latency"), bound=s.get("lower_bound"),
                   best_s=s.get("best_found_s"), stop=s.get("stop_reason"))
        if row["best"] and row["bound"] is not None:
            row["gap_pct"] = 100.0 * (row["best"] - row["bound"]) / row["best"]
        ev = subprocess.run([str(a.bin), "evaluate", str(p), str(sched)], capture_output=True, text=True)
        ok = ev.returncode == 0 and "valid: yes" in ev.stdout
        row["valid"] = "yes" if ok else f"NO (exit {ev.returncode})"
        bad += not ok
        print(f"{p.stem}: done in {row['wall_s']:.1f} s", file=sys.stderr)

    def num(v, spec):
        return "-" if v is None else spec.format(v)

    print("| model | ops (MatMul/Pointwise) | best latency | bound | gap % | time of best (s) | valid |")
    print("|---|--:|--:|--:|--:|--:|---|")
    for r in rows:
        print(f"| {r['model']} | {r['ops']} ({r['matmul']}/{r['pointwise']}) | {num(r.get('best'), '{:,.0f}')}"
              f" | {num(r.get('bound'), '{:,.0f}')} | {num(r.get('gap_pct'), '{:.2f}')}"
              f" | {num(r.get('best_s'), '{:.2f}')} | {r['valid']} |")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")
    tmp.cleanup()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
