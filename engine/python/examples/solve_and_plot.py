# %% [markdown]
# # mlsys from Python: solve, watch it converge, edit a schedule by hand
# Run it as a script (`python3 engine/python/examples/solve_and_plot.py [PROBLEM.json]`) or cell by cell in a
# notebook (the `# %%` markers). It writes convergence.png in the working directory.

# %%
import os
import sys

import matplotlib

matplotlib.use("Agg")  # a file, not a window (remove in a notebook)
import matplotlib.pyplot as plt

import mlsys

here = os.path.dirname(os.path.abspath(__file__))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "..", "instances", "generated", "mixer-16.json")
problem = mlsys.Problem.from_file(path)
print(problem, "lower bound", round(mlsys.bound(problem), 2))

# %% Solve for a few seconds, recording every new best.
history = []
result = mlsys.solve(problem, seconds=3, threads=2,
                     callback=lambda imp: history.append((imp.seconds, imp.latency, imp.found_by)))
print(result)
print(f"best {result.latency:,.1f}  bound {result.bound:,.1f}  gap {100 * result.gap:.2f}%  "
      f"stop: {result.stop_reason}, {result.evaluations:,} evaluations")

# %% The convergence, as a step plot (log time: most improvements come early).
times = [max(t, 1e-3) for t, _, _ in history] + [result.seconds]
values = [v for _, v, _ in history] + [history[-1][1]]
plt.figure(figsize=(7, 4))
plt.step(times, values, where="post", label="best schedule")
plt.axhline(result.bound, color="gray", linestyle="--", label="lower bound")
plt.xscale("log")
plt.xlabel("seconds")
plt.ylabel("latency")
plt.title(problem.name)
plt.legend()
plt.tight_layout()
plt.savefig("convergence.png", dpi=100)
print("wrote convergence.png")

# %% Edit the schedule by hand: as a dict in the contest's format.
d = result.schedule.to_dict()
print("subgraph 0:", d["subgraphs"][0], "granularity", d["granularities"][0])
d["granularities"][0] = [d["granularities"][0][0] * 64, d["granularities"][0][1], d["granularities"][0][2]]
ev = mlsys.evaluate(problem, d)
print("after the edit: valid" if ev.valid else "after the edit: invalid")
for v in ev.violations:
    print(f"  {v.rule} (subgraph {v.subgraph}): {v.reason}")
