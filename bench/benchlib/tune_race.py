"""bench/tune.py: the trials tied at (or near) the best training score raced on new seeds, as
irace races: a one-sided paired t-test puts out the configurations worse than the leader. choose
gives the trial whose configuration is written (and writes race.md)."""
import concurrent.futures
import json
import math
import os
import random
import shutil
import statistics
import tempfile

from .common import fnum
from .tune_common import RunError, log, optuna
from .tune_space import config_text, evaluated_params
from .tune_study import training_paths
from .tune_worker import score_run

RACE_FIRST_TEST = 5  # irace's firstTest: the first elimination test after this many runs each
RACE_ALPHA = 0.05
MIN_TIME = 1e-3  # seconds: the floor of a time to best before its log is taken


def _betacf(a, b, x):
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for aa in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf(t, df):
    """P(T > t) for Student's t with df degrees of freedom."""
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return tail if t > 0 else 1.0 - tail


def worse_p(diffs):
    """The p-value of a one-sided paired t-test that the differences are above 0 on average
    (None with fewer than two)."""
    n = len(diffs)
    if n < 2:
        return None
    m, sd = statistics.fmean(diffs), statistics.stdev(diffs)
    if sd <= 1e-12 * max(1.0, abs(m)):
        return 0.0 if m > 1e-12 else 1.0
    return t_sf(m / (sd / math.sqrt(n)), n - 1)


def _mean(xs):
    return statistics.fmean(xs) if xs else 0.0


def race_order(results):
    """How the race ranks a configuration: mean log latency/LB, then mean log time to the best."""
    times = [t for _, t in results if t is not None]
    return (_mean([r for r, _ in results]), _mean(times) if len(times) == len(results) else 0.0)


def compare(a, b):
    """(p, what): is configuration a worse than b on the same runs? Latency/LB first; on equal
    latencies in every run, the time it took to reach them."""
    dr = [x[0] - y[0] for x, y in zip(a, b)]
    if any(abs(d) > 1e-12 for d in dr):
        return worse_p(dr), "latency/LB"
    dt = [x[1] - y[1] for x, y in zip(a, b) if x[1] is not None and y[1] is not None]
    if dr and len(dt) == len(dr):
        return worse_p(dt), "the same latencies, reached later"
    return None, ""


def race(cands, run, blocks, runs_each, jobs, say=log):
    """Races the configurations `cands` (ids, the preferred first), as irace does: every round
    runs each one still in the race on the same new block(s) (`blocks` yields them; run(id,
    block) gives (latency/LB, seconds to the best or None), or raises RunError, which puts that
    one out). From RACE_FIRST_TEST runs on, after every round, a configuration worse than the
    leader by a one-sided paired t-test (p < RACE_ALPHA; irace's "t-test") leaves the race. It
    ends when one is left or after runs_each runs. Returns (winner or None, rows, how): rows
    {id: {"runs", "ratio", "time", "result"}}, how the winner was chosen."""
    alive, data, out, done = list(cands), {c: [] for c in cands}, {}, 0
    while len(alive) > 1 and done < runs_each:
        k = min(max(1, jobs // len(alive)), runs_each - done)
        todo = [(c, b) for b in [next(blocks) for _ in range(k)] for c in alive]

        def one(job):
            try:
                ratio, secs = run(*job)
                return (math.log(ratio), math.log(max(secs, MIN_TIME)) if secs is not None else None)
            except RunError as e:
                return str(e)

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            got = list(ex.map(one, todo))
        for (c, _), r in zip(todo, got):
            if isinstance(r, str) and c not in out:
                out[c] = f"out after {done} runs: a run failed ({r})"
                say(f"race: trial {c} {out[c]}")
        for (c, _), r in zip(todo, got):
            if c not in out:
                data[c].append(r)
        alive = [c for c in alive if c not in out]
        done += k
        if done >= RACE_FIRST_TEST and len(alive) > 1:
            lead = min(alive, key=lambda c: race_order(data[c]))
            for c in alive:
                p, what = compare(data[c], data[lead]) if c != lead else (None, "")
                if p is not None and p < RACE_ALPHA:
                    out[c] = f"worse than trial {lead} after {done} runs ({what}, p = {p:.2g})"
                    say(f"race: trial {c} {out[c]}")
            alive = [c for c in alive if c not in out]
    rows = {}
    for c in cands:
        rs = data[c]
        times = [t for _, t in rs if t is not None]
        rows[c] = {"runs": len(rs), "ratio": math.exp(_mean([r for r, _ in rs])) if rs else None,
                   "time": math.exp(_mean(times)) if rs and len(times) == len(rs) else None,
                   "result": out.get(c, "")}
    if not alive:
        return None, rows, f"every configuration failed a run: no winner ({done} runs)"
    winner = min(alive, key=lambda c: race_order(data[c]))
    worse = sum(1 for c in cands if out.get(c, "").startswith("worse"))
    failed = sum(1 for c in cands if out.get(c, "").startswith("out"))
    others = [f"{worse} worse (one-sided paired t-test, p < {RACE_ALPHA:g})"] if worse else []
    others += [f"{failed} failed a run"] if failed else []
    others += [f"{len(alive) - 1} not significantly worse"] if len(alive) > 1 else []
    of = f"of the other {len(cands) - 1}, " + ", ".join(others)
    if len(alive) == 1:
        rows[winner]["result"] = "won"
        return winner, rows, f"trial {winner} won after {done} runs ({of})"
    same = len({tuple(r for r, _ in data[c]) for c in alive}) == 1
    for c in alive:
        rows[c]["result"] = "chosen: best mean" if c == winner else "not significantly worse"
    return winner, rows, (f"no clear winner after {done} runs each (--race-runs; {of}); trial {winner} has "
                          + ("the same latencies as these in every run, reached soonest (geometric mean of the "
                             "time to the best)" if same else "the lowest geometric mean of latency/LB over the race"))


def race_blocks(names, first_seed):
    """The race's runs: every training instance (a shuffled order per seed) with seeds not used
    in training, first_seed, first_seed + 1, ..."""
    seed = first_seed
    while True:
        order = sorted(names)
        random.Random(seed).shuffle(order)
        for name in order:
            yield name, seed
        seed += 1


class _Keep:
    """An Mlsys whose solve() keeps its result (score_run returns no time to the best)."""

    def __init__(self, ml):
        self.ml, self.res = ml, None

    def solve(self, *a, **kw):
        self.res = self.ml.solve(*a, **kw)
        return self.res


def choose(args, ml, study, setup, workdir):
    """The trial whose configuration is written: the one at the best training score or, when
    several are tied at it or near it (--race-within), the winner of a race between them on new
    seeds (--race-runs, --race-max). Returns {"trial", "params", "why"} and writes race.md."""
    space = setup["space"]
    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    best = min(t.value for t in done)
    near = sorted((t for t in done if t.value <= best + abs(best) * args.race_within),
                  key=lambda t: (t.value, not t.user_attrs.get("base_config"), t.number))
    tied = sum(1 for t in near if t.value == best)
    groups = {}
    for t in near:  # distinct configurations (trials of the same rounded values are one)
        groups.setdefault(json.dumps(evaluated_params(t, space), sort_keys=True), []).append(t)
    reps = [g[0] for g in groups.values()]
    within = f"{args.race_within * 100:.3g}%"
    what = f"{tied} trial{'s' * (tied != 1)} at the best training score {best:.5f}"
    if len(near) > tied:
        what += f", {len(near)} within {within} of it"
    if len(near) > 1:
        what += f" ({len(reps)} distinct configuration{'s' * (len(reps) != 1)})"

    def pick(t, why):
        log(f"chose trial {t.number}: {why}")
        return {"trial": t, "params": evaluated_params(t, space), "why": why}

    if len(near) == 1:
        return pick(near[0], f"the best training score {best:.5f}, no other trial within {within} of it")
    if len(reps) == 1:
        return pick(reps[0], f"{what}: one configuration, the first trial of it")
    if not args.race_runs:
        return pick(reps[0], f"{what}; no race (--race-runs 0): the first of them")
    if not args.train:
        return pick(reps[0], f"{what}; no race (it needs --train): the first of them")
    cands = reps[:args.race_max]
    key = {"candidates": [t.number for t in cands], "runs": args.race_runs}
    stored = study.user_attrs.get("race")
    if isinstance(stored, dict) and stored.get("key") == key:
        log(f"race: the study holds a race of these {len(cands)} configurations: its result")
        by = {t.number: t for t in cands}
        winner = by[stored["winner"]]
        write_race_md(workdir, cands, {int(k): v for k, v in stored["rows"].items()}, stored["why"])
        return {"trial": winner, "params": evaluated_params(winner, space), "why": stored["why"]}
    paths = training_paths(setup, args.train)
    first_seed = max(setup["seeds"]) + 1
    capped = f"the first {len(cands)} (--race-max)" if len(cands) < len(reps) else f"all {len(cands)}"
    log(f"{what}: racing {capped} on the {len(paths)} training instances with new seeds {first_seed}.., at most "
        f"{args.race_runs} runs each (at most {len(cands) * args.race_runs * setup['seconds'] / args.jobs / 60:.1f} "
        f"min, {args.jobs} at a time)")
    scratch = tempfile.mkdtemp(prefix="race-", dir=workdir)
    try:
        cfgs = {}
        for t in cands:
            cfgs[t.number] = os.path.join(scratch, f"trial-{t.number}.yaml")
            with open(cfgs[t.number], "w") as f:
                f.write(config_text(setup["base_yaml"], evaluated_params(t, space)))

        def run(number, block):
            name, seed = block
            spy = _Keep(ml)
            r = score_run(spy, paths[name], cfgs[number], setup["seconds"], setup["threads"], seed, scratch,
                          getattr(args, "init_dir", None))
            return r["ratio"], fnum(spy.res.stat("best_found_s"))

        winner, rows, how = race([t.number for t in cands], run, race_blocks(paths, first_seed), args.race_runs,
                                 args.jobs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if winner is None:
        return pick(reps[0], f"{what}; {how}: the first of them")
    why = f"{what}; raced {capped} on new seeds: {how}"
    study.set_user_attr("race", {"key": key, "winner": winner, "why": why, "rows": rows})
    write_race_md(workdir, cands, rows, why)
    return pick(next(t for t in cands if t.number == winner), why)


def write_race_md(workdir, cands, rows, why):
    lines = ["| trial | training score | race runs | latency/LB (race) | time to best (race) | result |",
             "|--:|--:|--:|--:|--:|---|"]
    for t in cands:
        r = rows[t.number]
        name = f"{t.number} (base config)" if t.user_attrs.get("base_config") else str(t.number)
        ratio = f"{r['ratio']:.5f}" if r["ratio"] is not None else "—"
        secs = f"{r['time']:.3g} s" if r["time"] is not None else "—"
        lines.append(f"| {name} | {t.value:.5f} | {r['runs']} | {ratio} | {secs} | {r['result']} |")
    text = "\n".join(["Race between the tied trials (geometric means over the race's runs).", ""] + lines) + "\n"
    with open(os.path.join(workdir, "race.md"), "w") as f:
        f.write(text)
    print(text)
