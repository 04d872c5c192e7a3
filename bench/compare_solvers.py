#!/usr/bin/env python3
"""Compare `mlsys solve` with other solvers of the same problem, side by side, on generated graphs.

What it does:
  1. Generates graphs with `mlsys generate --family F --size N --seed S` for every family and size
     (default: the 5 families at 100, 200, 500 and 1,000 ops, generator seed 7001, a seed nobody
     tuned on) into DIR/problems/F-nNNNN-sS.json.
  2. On each graph, one run at a time (never two at once, so that no run takes CPU from another):
       MLSYS solve PROBLEM OUT -s SECONDS -t 1 [--model K=V ...]
     then every solver of the --solvers file, each with the same wall-clock limit. Every run is
     its own process group; at SECONDS + GRACE the group gets SIGTERM, one second later SIGKILL.
     As in the contest harness, whatever file the run left at that moment is what counts.
  3. Checks EVERY output, ours included, with `mlsys evaluate PROBLEM OUT --json [--model ...]`:
     the evaluator implements shared/spec/cost-model.md and is the only judge. A solver's own
     claim (its printed total, its subgraph_latencies) is never used.
  4. Prints a Markdown table (graph, ops, mlsys, each solver, mlsys / best other valid) and a
     summary, and writes one CSV row per (graph, solver) to --out (default DIR/results.csv) and
     the table to DIR/results.md.

A cell of the table is the evaluator's total latency of that run's output (the best in the row
in bold) or:
  invalid  an output file exists but is not a valid schedule (the CSV gives the evaluator's
           first violated rule and its reason);
  silent   no output file, and the run was killed at the limit;
  crash    no output file, and the run ended by itself (any exit code) or could not start.

Summary: graphs where mlsys is strictly best (below every other valid latency by more than a
relative 1e-9), tied with the best other, worse; the geometric mean of mlsys / best other valid
over the graphs where any other solver was valid (below 1: mlsys better); per solver its
valid / invalid / silent / crash counts and the invalid outputs' rules.

The solvers file is a JSON list; each entry:
  {"name": "winner",                                   short name, a table column
   "command": "/tmp/others/winner/build/mlsys {problem} {out}",
   "cwd": "/tmp/others/winner",                        optional; default: the current folder
   "env": {"GOMAXPROCS": "1"}}                         optional; added to the environment
"command" is a string (split like a shell line, no shell runs) or a list of arguments, with the
placeholders {problem} and {out} (absolute paths) and {seconds} (the limit, e.g. 10). A relative
"cwd" is taken from the solvers file's folder. bench/solvers.example.json is an example: point
its paths at your own builds. Give every solver one thread so that the comparison is fair.

Run (from the repository root; about (SECONDS + GRACE) x (solvers + 1) x graphs at most):
  python3 bench/compare_solvers.py --solvers my-solvers.json
  python3 bench/compare_solvers.py --solvers my-solvers.json --sizes 100,200 --families cnn,random \\
      --seconds 5 --dir /tmp/cmp --out /tmp/cmp/results.csv
  python3 bench/compare_solvers.py --solvers my-solvers.json --model matmul_compute=native_depth

Options: --solvers FILE (required), --dir DIR (default build/compare-solvers), --families LIST,
--sizes LIST, --seed S (7001), --seconds S (10), --grace S (1.0), --mlsys PATH (default
build/release/mlsys), --model K=V (repeatable; passed to solve and evaluate), --only NAMES
(solvers of the file to run, comma-separated), --out CSV, --instances FOLDER (every *.json
problem there instead of generated graphs, e.g. ../shared/benchmarks; read in place).

Standard library only. Exit code 0 once the table is written (whatever the results), 2 on a
usage error (bad solvers file, no mlsys binary).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = ["transformer", "cnn", "mixer", "random", "gemm-chain"]
SIZES = [100, 200, 500, 1000]
TIE = 1e-9  # relative tolerance of a tie
KILL_WAIT_S = 1.0  # SIGTERM, then SIGKILL this much later


def die(message: str) -> None:
    print(f"compare_solvers: {message}", file=sys.stderr)
    sys.exit(2)


def load_solvers(path: Path, only: list[str] | None) -> list[dict]:
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        die(f"cannot read the solvers file {path}: {err}")
    if not isinstance(entries, list):
        die(f"{path}: the solvers file must hold a JSON list")
    solvers = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "name" not in entry or "command" not in entry:
            die(f"{path}: entry {i} needs a name and a command")
        name = str(entry["name"])
        if name == "mlsys" or any(s["name"] == name for s in solvers):
            die(f"{path}: entry {i}: the name {name!r} is taken")
        command = entry["command"]
        if isinstance(command, str):
            command = shlex.split(command)
        if not isinstance(command, list) or not command:
            die(f"{path}: entry {i}: command must be a string or a list of arguments")
        cwd = entry.get("cwd")
        if cwd is not None:
            cwd = Path(cwd)
            if not cwd.is_absolute():
                cwd = (path.parent / cwd).resolve()
        env = {str(k): str(v) for k, v in (entry.get("env") or {}).items()}
        try:
            for arg in command:
                str(arg).format(problem="p", out="o", seconds="1")
        except (KeyError, IndexError, ValueError) as err:
            die(f"{path}: entry {i}: bad placeholder in the command ({err!r}); the placeholders "
                "are {problem}, {out} and {seconds}, write a literal brace as {{ or }}")
        solvers.append({"name": name, "command": [str(a) for a in command], "cwd": cwd, "env": env})
    if only:
        unknown = set(only) - {s["name"] for s in solvers}
        if unknown:
            die(f"--only: no solver named {', '.join(sorted(unknown))} in {path}")
        solvers = [s for s in solvers if s["name"] in only]
    return solvers


def fmt_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


def generate(mlsys: Path, family: str, size: int, seed: int, folder: Path) -> Path:
    path = folder / f"{family}-n{size:05d}-s{seed}.json"
    done = subprocess.run([str(mlsys), "generate", "--family", family, "--size", str(size),
                           "--seed", str(seed), "-o", str(path)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        die(f"mlsys generate --family {family} --size {size} failed: {done.stderr.strip()}")
    return path


def run_limited(args: list[str], cwd: Path | None, env: dict, limit_s: float,
                log_path: Path) -> dict:
    """Runs args in its own process group; SIGTERM at limit_s, SIGKILL 1 s later."""
    full_env = dict(os.environ)
    full_env.update(env)
    start = time.monotonic()
    with open(log_path, "wb") as log:
        try:
            proc = subprocess.Popen(args, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        except OSError as err:
            log.write(f"cannot start: {err}\n".encode())
            return {"exit": "no-start", "killed": False, "wall_s": 0.0,
                    "note": f"cannot start: {err}"}
        killed = False
        try:
            code = proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            killed = True
            signal_group(proc.pid, signal.SIGTERM)
            try:
                code = proc.wait(timeout=KILL_WAIT_S)
            except subprocess.TimeoutExpired:
                signal_group(proc.pid, signal.SIGKILL)
                code = proc.wait()
        wall = time.monotonic() - start
        signal_group(proc.pid, signal.SIGKILL)  # whatever the run left behind in its group
    exit_text = f"signal {-code}" if code < 0 else str(code)
    return {"exit": exit_text, "killed": killed, "wall_s": wall, "note": ""}


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def evaluate(mlsys: Path, problem: Path, out: Path, model: list[str]) -> dict:
    args = [str(mlsys), "evaluate", str(problem), str(out), "--json"]
    for option in model:
        args += ["--model", option]
    done = subprocess.run(args, capture_output=True, text=True)
    try:
        result = json.loads(done.stdout)
    except ValueError:
        reason = (done.stderr.strip().splitlines() or ["no verdict"])[-1]
        return {"valid": False, "latency": None, "rule": "", "reason": reason}
    if result.get("valid") is True:
        return {"valid": True, "latency": float(result["total_latency"]), "rule": "",
                "reason": ""}
    return {"valid": False, "latency": None, "rule": str(result.get("rule", "")),
            "reason": str(result.get("reason", ""))}


def run_one(name: str, args: list[str], cwd: Path | None, env: dict, problem: Path,
            out: Path, log: Path, mlsys: Path, opts) -> dict:
    if out.exists():
        out.unlink()
    run = run_limited(args, cwd, env, opts.seconds + opts.grace, log)
    row = {"solver": name, "exit": run["exit"], "killed": int(run["killed"]),
           "wall_s": f"{run['wall_s']:.2f}", "latency": "", "rule": "", "reason": run["note"],
           "output": str(out)}
    if out.exists():
        verdict = evaluate(mlsys, problem, out, opts.model)
        if verdict["valid"]:
            row["status"] = "valid"
            row["latency"] = repr(verdict["latency"])
        else:
            row["status"] = "invalid"
            row["rule"], row["reason"] = verdict["rule"], verdict["reason"]
    else:
        row["status"] = "silent" if run["killed"] else "crash"
        if not row["reason"]:
            row["reason"] = ("no output at the limit" if run["killed"]
                             else f"ended (exit {run['exit']}) without an output")
    return row


def fmt_latency(value: float) -> str:
    return f"{value:,.0f}" if value >= 1000 else f"{value:.1f}"


def cell(row: dict, best: float | None) -> str:
    if row["status"] != "valid":
        return row["status"]
    value = float(row["latency"])
    text = fmt_latency(value)
    return f"**{text}**" if best is not None and value <= best * (1 + TIE) else text


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def report(graphs: list[dict], names: list[str], opts) -> str:
    header = ["graph", "ops", "mlsys"] + names + ["mlsys / best other"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    better = ties = worse = no_other = mlsys_bad = 0
    ratios = []
    for g in graphs:
        rows = g["rows"]
        valid = {n: float(r["latency"]) for n, r in rows.items() if r["status"] == "valid"}
        best = min(valid.values()) if valid else None
        others = [v for n, v in valid.items() if n != "mlsys"]
        ours = valid.get("mlsys")
        if not others:
            ratio_text = "—"
            no_other += 1
            if ours is None:
                mlsys_bad += 1
        elif ours is None:
            ratio_text = "mlsys " + rows["mlsys"]["status"]
            mlsys_bad += 1
            worse += 1
        else:
            ratio = ours / min(others)
            ratios.append(ratio)
            ratio_text = f"{ratio:.4f}"
            if ours < min(others) * (1 - TIE):
                better += 1
            elif ours <= min(others) * (1 + TIE):
                ties += 1
            else:
                worse += 1
        cells = [g["name"], str(g["ops"]), cell(rows["mlsys"], best)]
        cells += [cell(rows[n], best) for n in names] + [ratio_text]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    with_other = len(graphs) - no_other
    mean = geomean(ratios)
    source = (f"instances from {opts.instances}" if opts.instances
              else f"generator seed {opts.seed}")
    lines.append(f"Graphs: {len(graphs)}; limit {fmt_seconds(opts.seconds)} s per run "
                 f"(+{opts.grace:g} s grace), one run at a time, mlsys with -t 1; "
                 f"{source}; model: "
                 f"{' '.join(opts.model) if opts.model else 'default'}.")
    lines.append(f"mlsys strictly best on {better} of the {with_other} graphs where another "
                 f"solver was valid, tied on {ties}, worse on {worse}"
                 + (f" ({mlsys_bad} where mlsys itself was not valid)" if mlsys_bad else "")
                 + f"; no other solver valid on {no_other}.")
    lines.append("Geomean of mlsys / best other valid over those graphs: "
                 + (f"{mean:.4f}" if mean is not None else "— (none)") + ".")
    lines.append("")
    lines.append("| solver | valid | invalid | silent | crash | invalid outputs' rules | "
                 "geomean mlsys / solver where both valid |")
    lines.append("|---|---|---|---|---|---|---|")
    for n in ["mlsys"] + names:
        counts = {"valid": 0, "invalid": 0, "silent": 0, "crash": 0}
        rules: dict[str, int] = {}
        pair = []
        for g in graphs:
            r = g["rows"][n]
            counts[r["status"]] += 1
            if r["status"] == "invalid":
                key = r["rule"] or "unreadable"
                rules[key] = rules.get(key, 0) + 1
            ours = g["rows"]["mlsys"]
            if n != "mlsys" and r["status"] == "valid" and ours["status"] == "valid":
                pair.append(float(ours["latency"]) / float(r["latency"]))
        rule_text = ", ".join(f"{k} x{v}" for k, v in sorted(rules.items())) or "—"
        pair_mean = geomean(pair)
        pair_text = "—" if n == "mlsys" or pair_mean is None else f"{pair_mean:.4f} ({len(pair)})"
        lines.append(f"| {n} | {counts['valid']} | {counts['invalid']} | {counts['silent']} | "
                     f"{counts['crash']} | {rule_text} | {pair_text} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Compare mlsys with other solvers on generated graphs (see the docstring).")
    parser.add_argument("--solvers", required=True, type=Path, help="JSON list of solvers")
    parser.add_argument("--dir", type=Path, default=ROOT / "build" / "compare-solvers")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--seed", type=int, default=7001, help="generator seed")
    parser.add_argument("--seconds", type=float, default=10.0, help="wall-clock limit per run")
    parser.add_argument("--grace", type=float, default=1.0,
                        help="seconds after the limit before SIGTERM")
    parser.add_argument("--mlsys", type=Path, default=ROOT / "build" / "release" / "mlsys")
    parser.add_argument("--model", action="append", default=[], metavar="K=V",
                        help="model option for solve and evaluate (repeatable)")
    parser.add_argument("--only", default="", help="solvers of the file to run, a,b,...")
    parser.add_argument("--out", type=Path, help="CSV (default DIR/results.csv)")
    parser.add_argument("--instances", type=Path,
                        help="use every *.json problem in this folder instead of generating")
    opts = parser.parse_args()

    mlsys = opts.mlsys.resolve()
    if not os.access(mlsys, os.X_OK):
        die(f"no mlsys binary at {mlsys} (build it, or give --mlsys)")
    if opts.seconds <= 0 or opts.grace < 0:
        die("--seconds must be positive and --grace not negative")
    solvers = load_solvers(opts.solvers.resolve(),
                           [s for s in opts.only.split(",") if s] or None)
    families = [f for f in opts.families.split(",") if f]
    try:
        sizes = [int(s) for s in opts.sizes.split(",") if s]
    except ValueError:
        die(f"--sizes: not a list of integers: {opts.sizes}")
    folder = opts.dir.resolve()
    for sub in ("problems", "out", "logs"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    csv_path = (opts.out or folder / "results.csv").resolve()
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    names = [s["name"] for s in solvers]
    seconds_text = fmt_seconds(opts.seconds)

    our_args = ["solve", "{problem}", "{out}", "-s", "{seconds}", "-t", "1", "-q"]
    for option in opts.model:
        our_args += ["--model", option]
    everyone = [{"name": "mlsys", "command": [str(mlsys)] + our_args, "cwd": None, "env": {}}]
    everyone += solvers

    fields = ["graph", "family", "size", "seed", "ops", "solver", "status", "latency", "exit",
              "killed", "wall_s", "rule", "reason", "output"]
    graphs = []
    if opts.instances:
        jobs = [("instance", 0, p.resolve()) for p in sorted(opts.instances.glob("*.json"))]
        if not jobs:
            die(f"--instances: no *.json in {opts.instances}")
    else:
        jobs = [(f, s, None) for f in families for s in sizes]
    total = len(jobs)
    started = time.monotonic()
    with open(csv_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for index, (family, size, given) in enumerate(jobs, start=1):
            problem = given or generate(mlsys, family, size, opts.seed, folder / "problems")
            ops = len(json.loads(problem.read_text())["op_types"])
            size = size or ops
            graph = {"name": problem.stem, "ops": ops, "rows": {}}
            parts = []
            for solver in everyone:
                name = solver["name"]
                for sub in ("out", "logs"):
                    (folder / sub / name).mkdir(exist_ok=True)
                out = folder / "out" / name / f"{problem.stem}.json"
                log = folder / "logs" / name / f"{problem.stem}.txt"
                args = [a.format(problem=str(problem), out=str(out), seconds=seconds_text)
                        for a in solver["command"]]
                row = run_one(name, args, solver["cwd"], solver["env"], problem, out, log,
                              mlsys, opts)
                graph["rows"][name] = row
                row.update({"graph": problem.stem, "family": family, "size": size,
                            "seed": opts.seed, "ops": ops})
                writer.writerow(row)
                handle.flush()
                shown = fmt_latency(float(row["latency"])) if row["latency"] else row["status"]
                parts.append(f"{name} {shown} ({row['wall_s']} s)")
            graphs.append(graph)
            print(f"[{index}/{total}] {problem.stem} ({ops} ops): " + ", ".join(parts),
                  file=sys.stderr, flush=True)

    table = report(graphs, names, opts)
    (folder / "results.md").write_text(table)
    print(table)
    print(f"CSV: {csv_path}; table: {folder / 'results.md'}; outputs: {folder / 'out'}; "
          f"took {time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
