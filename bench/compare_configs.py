#!/usr/bin/env python3
"""Run bench/harness.py once per YAML config and print one comparison table.

    python3 bench/compare_configs.py configs/default.yaml my.yaml --seeds 3
    python3 bench/compare_configs.py builtin configs/server.yaml --seconds 5 --only mlsys-2026-9,mlsys-2026-21
    python3 bench/compare_configs.py a.yaml b.yaml --reuse      # re-tabulate earlier runs, run nothing

A config named `builtin` (or `-`) runs mlsys without --config. Every other option (--seconds,
--seeds, --threads, --only, --instances, --targets, --mlsys, --model, --smoke) is passed to the
harness unchanged. Each config's run goes to OUT/<config stem>/ (default OUT = build/compare);
the table (also written to OUT/compare.md) gives each config's median latency per instance, its
ratio to the first config, valid runs, and the best config per instance; the last row is the
geometric mean of the ratios. Exit code 1 if any run was invalid. Python 3 standard library only.
"""
import argparse
import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, HERE)
from benchlib.common import ROOT, fmt, fnum, geomean, natural_key  # noqa: E402


def label_of(cfg, used):
    base = "builtin" if cfg in ("builtin", "-") else os.path.splitext(os.path.basename(cfg))[0]
    label, i = base, 2
    while label in used:
        label, i = f"{base}-{i}", i + 1
    used.add(label)
    return label


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("configs", nargs="+", help="YAML config files (`builtin` for mlsys's built-in defaults)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "compare"), help="output folder (default build/compare)")
    ap.add_argument("--reuse", action="store_true", help="do not run; tabulate OUT/<label>/results.csv from earlier runs")
    args, passthrough = ap.parse_known_args()
    for bad in ("--config", "--compare", "--against", "--dry-run"):
        if any(a == bad or a.startswith(bad + "=") for a in passthrough):
            ap.error(f"{bad} cannot be passed through (one harness run per config)")
    for cfg in args.configs:
        if cfg not in ("builtin", "-") and not os.path.exists(cfg):
            ap.error(f"config {cfg}: no such file")

    used, runs, failed = set(), [], False
    for cfg in args.configs:
        label = label_of(cfg, used)
        out = os.path.join(args.out, label)
        if not args.reuse:
            cmd = [sys.executable, os.path.join(HERE, "harness.py"), "--out", out] + passthrough
            if cfg not in ("builtin", "-"):
                cmd += ["--config", cfg]
            print(f"compare_configs: {label}: {' '.join(cmd)}", file=sys.stderr, flush=True)
            rc = subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode
            if rc == 2:
                return 2
            failed |= rc != 0
        path = os.path.join(out, "results.csv")
        if not os.path.exists(path):
            print(f"compare_configs: {path} missing", file=sys.stderr)
            return 1
        with open(path, newline="") as f:
            runs.append((label, {r["instance"]: r for r in csv.DictReader(f)}))

    names = sorted({n for _, rows in runs for n in rows}, key=natural_key)
    base_label, base = runs[0]
    head = ["instance"] + [f"{label} median" + ("" if i == 0 else f" (/{base_label})") for i, (label, _) in enumerate(runs)]
    lines = ["| " + " | ".join(head + ["valid (per config)", "best"]) + " |", "|---|" + "--:|" * len(runs) + "---|---|"]
    ratios = {label: [] for label, _ in runs[1:]}
    for n in names:
        b = fnum(base.get(n, {}).get("median"))
        cells, valid, best = [], [], (None, None)
        for i, (label, rows) in enumerate(runs):
            r = rows.get(n, {})
            m = fnum(r.get("median"))
            cell = fmt(m)
            if i > 0 and m and b:
                ratios[label].append(m / b)
                cell += f" ({m / b:.4f})"
            cells.append(cell)
            valid.append(f"{r.get('valid', '—')}/{r.get('seeds', '—')}")
            if m is not None and (best[0] is None or m < best[0] - 1e-9 * abs(best[0])):
                best = (m, label)
            elif m is not None and best[0] is not None and abs(m - best[0]) <= 1e-9 * abs(best[0]):
                best = (best[0], best[1] + ", " + label)
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {' '.join(valid)} | {best[1] or '—'} |")
    geo = []
    for label, _ in runs[1:]:
        g = geomean(ratios[label])
        geo.append(f"{g:.4f}" if g is not None else "—")
    lines.append("| " + " | ".join(["geometric mean of ratios", "—"] + geo + ["", ""]) + " |")
    md = "\n".join(lines) + "\n"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "compare.md"), "w") as f:
        f.write(md)
    print(md, end="")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
