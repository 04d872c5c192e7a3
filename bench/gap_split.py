#!/usr/bin/env python3
"""Where a schedule's gap to the bound lies: per fusion component of the bound (`mlsys bound
--json`), the schedule's latency spent on the component's ops against the component's bound, and
which argument set that bound (`cover`: the cheapest cover by part floors, exact over the parts it
priced; `floors`/`share`/...: the arguments for components too large to cover).

    python3 bench/gap_split.py PROBLEM.json SCHEDULE.json [--bin build/release/mlsys] [-s 10] [--top 5]

A subgraph whose ops span several components (the bound's components are the graph's fusion
components, so this is rare) is split between them in proportion to their op counts. Prints the
components with the largest gaps and a summary: the gap (latency - bound) in components set by the
cover and in the others. A large gap in a component the cover set means the search leaves it or the
part floors are weak there; in a component set by the floors it means the bound cannot tell (the
long runs of bench/midsize.py --set large say which).

With --estimate K (needs build/release/bench/mlsys_relaxation_estimate, or --estimate-bin): per
component too large for the cover, the cover's linear relaxation over its valid parts of at most K
ops (NOT a bound: an upper limit of what the cover's relaxation could certify there; see
bench/relaxation_estimate.cpp). The gap then splits into (estimate - bound), at most what a complete
relaxation could add to the bound, and (latency - estimate), left to the search or to the
relaxation's integrality gap whatever the bound does.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("problem")
    ap.add_argument("schedule")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "release", "mlsys"))
    ap.add_argument("-s", "--seconds", type=float, default=10, help="the bound's budget (default 10)")
    ap.add_argument("--top", type=int, default=5, help="components listed (default 5)")
    ap.add_argument("--estimate", type=int, default=0, metavar="K",
                    help="also the relaxation over parts of at most K ops per large component (not a bound)")
    ap.add_argument("--estimate-bin", default=os.path.join(ROOT, "build", "release", "bench", "mlsys_relaxation_estimate"))
    ap.add_argument("--estimate-seconds", type=float, default=600, help="the estimate's budget (default 600)")
    a = ap.parse_args()
    r = subprocess.run([a.bin, "bound", a.problem, "-s", str(a.seconds), "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"gap_split: mlsys bound failed: {r.stderr.strip()}")
    b = json.loads(r.stdout)
    with open(a.schedule) as f:
        s = json.load(f)
    comps = b["components"]
    comp_of = {o: i for i, c in enumerate(comps) for o in c["ops"]}
    cost = [0.0] * len(comps)
    for ops, lat in zip(s["subgraphs"], s["subgraph_latencies"]):
        share = {}
        for o in ops:
            share[comp_of[o]] = share.get(comp_of[o], 0) + 1
        for c, n in share.items():
            cost[c] += lat * n / len(ops)
    total, bound = sum(cost), b["lower_bound"]
    # The bound adds the traffic floor's slack and rounding outside the components: report it apart.
    rows = sorted(range(len(comps)), key=lambda i: -(cost[i] - comps[i]["value"]))
    print(f"{os.path.basename(a.problem)}: latency {total:,.0f}, bound {bound:,.0f} "
          f"(latency / bound {total / bound:.4f}), {len(comps)} components")
    print("| component | ops | latency | bound | gap share | set by |")
    print("|---:|---:|---:|---:|---:|---|")
    gap = max(total - bound, 1e-9)
    for i in rows[:a.top]:
        c = comps[i]
        print(f"| {i} | {len(c['ops'])} | {cost[i]:,.0f} | {c['value']:,.0f} | "
              f"{(cost[i] - c['value']) / gap:.1%} | {c['set_by']} |")
    by = {}
    for i, c in enumerate(comps):
        kind = "cover" if c["set_by"] == "cover" else "other"
        by[kind] = by.get(kind, 0) + cost[i] - c["value"]
    print(f"gap in components set by the cover: {by.get('cover', 0) / gap:.1%}; "
          f"by other arguments (floors, shares, LP): {by.get('other', 0) / gap:.1%}")
    if a.estimate:
        r = subprocess.run([a.estimate_bin, a.problem, "--part-ops", str(a.estimate), "--bound-seconds",
                            str(a.seconds), "--seconds", str(a.estimate_seconds)], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"gap_split: {a.estimate_bin} failed: {r.stderr.strip()}")
        est = {c["first_op"]: c["estimate"] for c in json.loads(r.stdout)["components"]}
        print(f"\nThe relaxation over parts of at most {a.estimate} ops (an estimate, not a bound), per component:")
        print("| component | ops | latency | bound | estimate | latency / estimate |")
        print("|---:|---:|---:|---:|---:|---:|")
        recover = left = 0.0
        for i in rows:
            c = comps[i]
            e = est.get(c["ops"][0])
            v = max(c["value"], e) if e is not None else c["value"]
            recover += v - c["value"]
            left += cost[i] - v
            if e is not None:
                print(f"| {i} | {len(c['ops'])} | {cost[i]:,.0f} | {c['value']:,.0f} | {e:,.0f} | {cost[i] / e:.4f} |")
        print(f"latency / (bound with the estimates) {total / (bound + recover):.4f}; of the gap, "
              f"{recover / gap:.1%} at most recoverable by a complete relaxation, "
              f"{left / gap:.1%} left to the search or the relaxation's integrality gap")


if __name__ == "__main__":
    main()
