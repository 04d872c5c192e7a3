#!/usr/bin/env python3
"""Every phase keeps the deadline (issue 51): budgets, SIGTERM at random moments, `bound -s`.

    python3 bench/deadline_check.py [--mlsys BIN] [--kills 20] [--seconds 2] [--seed 1] [--out DIR] [--only TEXT]

Problems: issue 51's reproductions (the 19-op graph whose exact cover ran 41 s, the two-op graph
whose baseline walked 43 s with its --init, generated shared-weight-30 and transformer-30, a 2-op
problem with an --init of a million subgraphs), a fan-join of 20,000 ops (a tensor with 10,000
readers, whose search windows once ran past the budget) and every ../shared/benchmarks instance (each also
with an --init: the schedule a first 2 s run wrote). For each:
  - `solve -s S`: its wall time (goal: <= S + 0.2 s), and its best against its first schedule;
  - `bound -s 0.5`: its wall time (goal: <= 0.6 s);
  - `--kills` runs of `solve -s 10` sent SIGTERM at a uniform random moment in [0, 3] s: the time
    from the signal to the exit (goal: <= 0.2 s) and whether the output is valid (`evaluate`).
Prints Markdown tables (per problem: budget kept, worst exit after SIGTERM, every file valid) and a
summary; exit 1 when a goal is missed. Times are wall clock on this machine: run it on a quiet one.
"""
import argparse
import glob
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

G19 = ('{"widths":[' + ",".join(["1000"] * 22) + '],"heights":[' + ",".join(["1000"] * 22) + '],'
       '"inputs":[[1,2],[2,0],[2,1],[2,4],[2,3],[7,2],[0,1],[5,9],[7,10],[9,1],[6,9],[4,10],[8,12],[7,15],[12,2],'
       '[2,14],[13,2],[8,15],[2,13]],"outputs":[[3],[4],[5],[6],[7],[8],[9],[10],[11],[12],[13],[14],[15],[16],[17],'
       '[18],[19],[20],[21]],"base_costs":[5000,5000,500,5000,1000,1000,2000,1000,5000,2000,5000,5000,5000,5000,5000,'
       '1000,1000,5000,5000],"op_types":["MatMul","MatMul","Pointwise","MatMul","MatMul","MatMul","MatMul","MatMul",'
       '"MatMul","MatMul","MatMul","MatMul","MatMul","MatMul","MatMul","MatMul","MatMul","MatMul","MatMul"],'
       '"fast_memory_capacity":6000000,"slow_memory_bandwidth":10,"native_granularity":[128,128]}')
P2 = ('{"widths":[512,64,64,64],"heights":[512,512,512,512],"inputs":[[0,1],[2,1]],"outputs":[[2],[3]],'
      '"base_costs":[5000,100],"op_types":["MatMul","Pointwise"],"fast_memory_capacity":65536,'
      '"slow_memory_bandwidth":5,"native_granularity":[128,128]}')
P2_INIT = ('{"subgraphs":[[0,1]],"granularities":[[64,128,128]],"tensors_to_retain":[[]],"traversal_orders":[null],'
           '"subgraph_latencies":[0]}')


def fan_join(n):
    """A tensor read by about n / 2 Pointwise ops, whose outputs a tree of adds joins, each add
    reading the shared tensor again (the twenty-second session's adversary: a search window grown
    over that tensor's readers took tens of seconds without polling)."""
    w, h, ins, outs = [384], [640], [], []

    def op(inputs):
        w.append(384)
        h.append(640)
        ins.append(inputs)
        outs.append([len(w) - 1])
        return len(w) - 1

    shared = op([0])
    level = [op([shared]) for _ in range(max(2, n // 2))]
    while len(level) > 1:
        nxt = [op([level[i], level[i + 1], shared]) for i in range(0, len(level) - 1, 2)]
        level = nxt + ([level[-1]] if len(level) % 2 else [])
    k = len(ins)
    return json.dumps({"widths": w, "heights": h, "inputs": ins, "outputs": outs, "base_costs": [500] * k,
                       "op_types": ["Pointwise"] * k, "fast_memory_capacity": 50000, "slow_memory_bandwidth": 10,
                       "native_granularity": [128, 128]})


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def problems(args, work):
    """(name, problem path, init path or None)."""
    out = [("G19 (41 s cover)", write(os.path.join(work, "g19.json"), G19), None),
           ("two ops + init (43 s walk)", write(os.path.join(work, "p2.json"), P2),
            write(os.path.join(work, "p2_init.json"), P2_INIT))]
    out.append(("fan-join 20,000 ops (a tensor with 10,000 readers)",
                write(os.path.join(work, "fan_join.json"), fan_join(20000)), None))
    for fam in ("shared-weight", "transformer"):
        path = os.path.join(work, f"{fam}-30.json")
        subprocess.run([args.mlsys, "generate", "-f", fam, "-n", "30", "--seed", "1001", "-o", path], check=True)
        out.append((f"{fam}-30", path, None))
    big = os.path.join(work, "big_init.json")
    n = 500000
    with open(big, "w") as f:
        json.dump({"subgraphs": [[0], [1]] * n, "granularities": [[128, 128, 128], [128, 128, 1]] * n,
                   "tensors_to_retain": [[], []] * n, "traversal_orders": [None, None] * n,
                   "subgraph_latencies": [0, 0] * n}, f)
    out.append(("ex1 + 10^6-subgraph init", os.path.join(ROOT, "instances", "examples", "ex1.json"), big))
    shared = os.path.join(ROOT, "..", "shared", "benchmarks")
    if not os.path.isdir(shared):
        print(f"deadline_check: {shared} is absent: the contest instances are skipped", file=sys.stderr)
    for path in sorted(glob.glob(os.path.join(shared, "*.json"))):
        name = os.path.basename(path)[:-5]
        out.append((name, path, None))
        init = os.path.join(work, name + ".init.json")
        subprocess.run([args.mlsys, "solve", path, init, "-s", "2", "-q"], check=False)
        out.append((name + " + init", path, init))
    return out


def solve_cmd(args, problem, init, out, seconds):
    cmd = [args.mlsys, "solve", problem, out, "-s", str(seconds), "-q", "--stats", out + ".stats", "--trace",
           out + ".trace"]
    return cmd + (["--init", init] if init else [])


def valid(args, problem, out):
    r = subprocess.run([args.mlsys, "evaluate", problem, out, "--json"], capture_output=True, text=True)
    try:
        return r.returncode == 0 and json.loads(r.stdout)["valid"]
    except (ValueError, KeyError):
        return False


def timed(cmd):
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return time.monotonic() - t, r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mlsys", default=os.path.join(ROOT, "build", "release", "mlsys"))
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="only the problems whose name holds this text")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = args.out or tempfile.mkdtemp(prefix="deadline_check_")
    os.makedirs(work, exist_ok=True)
    failed = False
    print("| problem | solve -s %g: wall | best < first | bound -s 0.5: wall | SIGTERM: worst exit after | files valid |"
          % args.seconds)
    print("|---|--:|---|--:|--:|---|")
    for name, problem, init in problems(args, work):
        if args.only and args.only not in name:
            continue
        out = os.path.join(work, "out.json")
        wall, r = timed(solve_cmd(args, problem, init, out, args.seconds))
        try:
            st = json.load(open(out + ".stats"))
            rows = [line.split(",") for line in open(out + ".trace").read().split("\n")[1:]
                    if line and not line.startswith("#")]
            first = next(float(r[2]) for r in rows if r[1] == "first")
            better = "yes" if st["best_latency"] < first else ("proven optimal" if st["optimal"] else "no")
        except (OSError, ValueError, KeyError, StopIteration, IndexError):
            better = "?"
        bwall, _ = timed([args.mlsys, "bound", problem, "-s", "0.5"])
        worst, ok = 0.0, valid(args, problem, out)
        for _ in range(args.kills):
            kout = os.path.join(work, "kill.json")
            if os.path.exists(kout):
                os.remove(kout)
            p = subprocess.Popen(solve_cmd(args, problem, init, kout, 10), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, 3))
            t = time.monotonic()
            p.send_signal(signal.SIGTERM)
            p.wait()
            worst = max(worst, time.monotonic() - t)
            # A run killed before its first write may leave no file; one that wrote must hold a valid one.
            if os.path.exists(kout) and not valid(args, problem, kout):
                ok = False
        miss = wall > args.seconds + 0.2 or bwall > 0.6 or worst > 0.2 or not ok
        failed = failed or miss
        print(f"| {name} | {wall:.2f} s | {better} | {bwall:.2f} s | {worst:.3f} s | {'yes' if ok else 'NO'} |"
              + (" missed" if miss else ""))
    print()
    print("every goal met" if not failed else "some goal missed (marked)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
