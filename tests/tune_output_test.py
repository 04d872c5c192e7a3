#!/usr/bin/env python3
"""The tuner's output a person reads (issue 35, item 7): bench/tune.py rounds the values it
samples to the key's resolution and runs and writes the rounded values; trials tied at (or near)
the best score are raced on new seeds, as irace does, and the summary says how many were tied
and how the winner was chosen; the main command takes --trials; the end names optuna-dashboard.

    python3 tests/tune_output_test.py --mlsys build/release/mlsys [--tune bench/tune.py] [--only rounding,race,trials]

The helpers checked one by one live in bench/benchlib/ (round_value in tune_space, t_sf and
race in tune_race, dashboard_url in tune_common); the rest runs tune.py (in-process or not).

1. rounding: round_value on every kind of key (log float: 3 significant digits, linear float: a
   power-of-ten step, log int: 3 significant digits and still an int, linear int unchanged,
   categorical and bool untouched, the range kept), and on samples of every key of
   configs/tune-space.yaml; then for real (SQLite, a tiny instance, 0.2 s runs): the trials of a
   worker run with rounded values (their user attribute `evaluated`, the config files mlsys
   reads), the base config's values stay exact, and `--minutes 0 --out` writes those values: no
   number in the tuned lines or in the summary has more than 8 significant digits;
2. race: t_sf against a t table; race() with made-up runs (one clearly better configuration
   wins, and not the first; equal latencies, the faster one wins; no difference: the budget ends
   it and the summary says so; a failing one leaves; the budget in runs is kept); then for real,
   four trials tied at one score: the summary, race.md and the config's header say 4 tied and
   name the race's winner, the study keeps the race, and a rerun reuses it;
3. trials: `tune.py --help` lists --trials among the main command's options; `-j 3 --trials 5`
   starts 3 workers with --trials 2, 2, 1 (in-process, the processes not started) and `-j 4
   --trials 2` only 2; a real `tune.py --trials 2` (no --minutes) ends after exactly 2 trials and
   names the optuna-dashboard command for its study; `--minutes 0 --trials 3` is an error;
   dashboard_url drops a password.
Every check runs; the failures are listed at the end (exit 1). Exit 77 (CTest SKIP_RETURN_CODE)
with a message when optuna, yaml or sqlalchemy are missing. --tune checks another copy of
tune.py (e.g. git show HEAD:bench/tune.py, with bench/harness.py and bench/benchlib/ next to it).
"""
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "bench"))
import tune_test_util  # noqa: E402  (re-execs under Debian's python3 when this one lacks the packages)
from tune_test_util import FakePopen, run_main  # noqa: E402  (tune.main(argv) in-process)

say, check, failures = tune_test_util.checker("tune_output_test")


def need(module, *names):
    """The benchlib module (bench/benchlib/MODULE.py, as tune.py imported it) holding the helpers a
    step uses, or None (an older tune.py has none of them: each missing one fails)."""
    mod = sys.modules.get(f"benchlib.{module}")
    missing = [n for n in names if not hasattr(mod, n)]
    ok = check(not missing, f"benchlib.{module} has {', '.join(names)}"
               + (f" (missing {', '.join(missing)})" if missing else ""))
    return mod if ok else None


# ---------------------------------------------------------------- numbers

_NUMBER = re.compile(r"(?<![\w./:-])-?(\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w/])")


def significant_digits(token):
    """The significant digits of a number as written: 0.00112 -> 3, 16,284,057.6 -> 9, 138000 -> 6
    (an integer's trailing zeros count: the check is an upper bound)."""
    mantissa = re.split(r"[eE]", token.replace(",", "").lstrip("-"))[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits) if "." in mantissa else len(digits or "0")


def value_digits(x):
    """The significant digits of a number's value: 138000 -> 3, 0.00112 -> 3, 2.5 -> 2."""
    mantissa = re.split(r"[eE]", repr(float(x)).lstrip("-"))[0]
    return len(mantissa.replace(".", "").strip("0")) or 1


def long_numbers(text, limit=8):
    return [m.group(0) for m in _NUMBER.finditer(text) if significant_digits(m.group(0)) > limit]


# ---------------------------------------------------------------- a study on a tiny instance


def write_setup(mlsys, work):
    """base.yaml (the binary's own complete config) and space.yaml with one key of each kind the
    rounding treats apart: a log float, a linear float, a log int, a linear int, a categorical
    bool. Returns {key: spec} as written."""
    import yaml
    r = subprocess.run([mlsys, "solve", "--print-config"], capture_output=True, text=True, check=True)
    with open(os.path.join(work, "base.yaml"), "w") as f:
        f.write(r.stdout)

    def leaves(d, path=()):
        for k, v in (d or {}).items():
            if isinstance(v, dict):
                yield from leaves(v, path + (str(k),))
            else:
                yield ".".join(path + (str(k),)), v
    all_leaves = list(leaves(yaml.safe_load(r.stdout)))
    floats = [(k, v) for k, v in all_leaves if isinstance(v, float) and 0 < v < 1e6 and k.startswith(("sa.", "beam."))]
    ints = [(k, v) for k, v in all_leaves if type(v) is int and v >= 8 and k.startswith(("sa.", "beam.", "lns."))]
    bools = [(k, v) for k, v in all_leaves if isinstance(v, bool) and k.startswith(("lns.", "sa."))]
    (fl, fv), (gl, gv), (il, iv), (jl, jv) = floats[0], floats[1], ints[0], ints[1]
    space = {fl: {"type": "float", "range": [fv / 3, fv * 3], "log": True},
             gl: {"type": "float", "range": [0.0, round(gv * 2 + 1, 1)]},
             il: {"type": "int", "range": [max(1, iv // 4), iv * 4], "log": True},
             jl: {"type": "int", "range": [max(1, jv // 2), jv * 2]}}
    if bools:
        space[bools[0][0]] = {"type": "categorical", "choices": [False, True]}
    with open(os.path.join(work, "space.yaml"), "w") as f:
        for k, spec in space.items():
            f.write(f"{k}: {json.dumps(spec)}\n")
    return space


def spec_of(raw):
    """A space file entry as load_space gives it to the tuner."""
    if raw["type"] == "categorical":
        return {"type": "categorical", "choices": raw["choices"]}
    return {"type": raw["type"], "low": raw["range"][0], "high": raw["range"][1], "log": raw.get("log", False)}


# ---------------------------------------------------------------- 1. rounding


def check_rounding_unit():
    space_mod = need("tune_space", "round_value")
    if not space_mod:
        return
    rv = space_mod.round_value
    logf = {"type": "float", "low": 0.0002, "high": 0.02, "log": True}
    tiny = {"type": "float", "low": 1e-7, "high": 1e-4, "log": True}
    lin = {"type": "float", "low": 0.05, "high": 0.6, "log": False}
    lin3 = {"type": "float", "low": 0, "high": 3, "log": False}
    logi = {"type": "int", "low": 2000, "high": 200000, "log": True}
    lini = {"type": "int", "low": 6, "high": 20, "log": False}
    cases = [(0.0011240392704166145, logf, 0.00112), (5.223808382847406e-07, tiny, 5.22e-07),
             (0.019996, logf, 0.02), (0.27812345678, lin, 0.278), (0.30000000000000004, lin, 0.3),
             (2.4999999, lin3, 2.5), (0.0063181, lin3, 0.01), (137913, logi, 138000), (2001, logi, 2000),
             (14, lini, 14)]
    for v, spec, want in cases:
        got = rv(v, spec)
        check(got == want and type(got) is type(want) and repr(got) == repr(want),
              f"round_value({v!r}, {spec['type']}{' log' if spec['log'] else ''} [{spec['low']}, {spec['high']}]) "
              f"= {want!r} (got {got!r})")
    cat = {"type": "categorical", "choices": ["sa", "lns"]}
    check(rv("lns", cat) == "lns" and rv(True, {"type": "categorical", "choices": [False, True]}) is True,
          "categorical values (names, true/false) are not touched")
    edge = {"type": "float", "low": 0.00023449, "high": 0.5, "log": True}
    check(rv(0.0002345, edge) >= edge["low"], f"a rounded value stays in the range (got {rv(0.0002345, edge)!r})")

    import yaml
    with open(os.path.join(ROOT, "configs", "tune-space.yaml")) as f:
        space = {k: spec_of(v) for k, v in yaml.safe_load(f).items()}
    rng, bad = random.Random(7), []
    for key, spec in space.items():
        if spec["type"] == "categorical":
            continue
        for _ in range(200):
            lo, hi = spec["low"], spec["high"]
            v = math.exp(rng.uniform(math.log(lo), math.log(hi))) if spec["log"] else rng.uniform(lo, hi)
            v = int(round(v)) if spec["type"] == "int" else v
            r = rv(v, spec)
            ok = (lo <= r <= hi and type(r) is type(v) and rv(r, spec) == r and value_digits(r) <= 3
                  and abs(r - v) <= max(abs(v) * 0.006, (hi - lo) * 0.006, 0.5 if spec["type"] == "int" else 0))
            if not ok:
                bad.append(f"{key}: {v!r} -> {r!r}")
    check(not bad, f"every key of configs/tune-space.yaml, 200 samples each: rounded to <= 3 significant digits, "
                   f"inside the range, the same type, idempotent and within 0.6% (bad: {bad[:4]})")


def check_rounding_real(tune, mlsys, work, train, space_raw):
    import optuna
    import yaml
    space = {k: spec_of(v) for k, v in space_raw.items()}
    db = os.path.join(work, "round.db")
    url = "sqlite:///" + db
    setup = ["--base", os.path.join(work, "base.yaml"), "--space", os.path.join(work, "space.yaml"),
             "--seconds", "0.2", "--threads", "1", "--pruner", "none", "--study", "round", "--train", train,
             "--mlsys", mlsys]
    seen_cfgs = []
    wm = sys.modules.get("benchlib.tune_worker")
    if wm is not None:  # the config files the trials give mlsys: what Worker.objective writes
        orig = wm.config_text

        def spy(base_text, params, *a, **kw):
            seen_cfgs.append(dict(params))
            return orig(base_text, params, *a, **kw)
        wm.config_text = spy
    try:
        rc, out, err = run_main(tune, ["worker", "--storage", url, "--trials", "4"] + setup)
    finally:
        if wm is not None:
            wm.config_text = orig
    if not check(rc == 0, f"worker --trials 4 on SQLite exits 0 (exit {rc}): {err.strip()[-500:]}"):
        return
    trials = optuna.load_study(study_name="round", storage=url).get_trials(deepcopy=False)
    sampled = [t for t in trials if not t.user_attrs.get("base_config")]
    base = [t for t in trials if t.user_attrs.get("base_config")]
    rv = getattr(sys.modules.get("benchlib.tune_space"), "round_value", lambda v, spec: v)
    ev_ok = bool(sampled) and all(
        t.user_attrs.get("evaluated") == {k: rv(v, space[k]) for k, v in t.params.items()} for t in sampled)
    check(ev_ok, "each sampled trial ran with its values rounded (user attribute evaluated = round_value(params)): "
                 + "; ".join(f"{t.number}: {t.user_attrs.get('evaluated')}" for t in sampled[:2]))
    resolved = yaml.safe_load(open(os.path.join(work, "base.yaml")))

    def base_value(k):
        d = resolved
        for part in k.split("."):
            d = d[part]
        return d
    check(len(base) == 1 and base[0].user_attrs.get("evaluated", base[0].params) ==
          {k: base_value(k) for k in space}, "the base config's trial ran with the base values exactly")
    long_cfg = [f"{k}={v!r}" for p in seen_cfgs for k, v in p.items()
                if isinstance(v, float) and value_digits(v) > 3]
    check(len(seen_cfgs) >= 4 and not long_cfg,
          f"the config files mlsys ran hold the rounded values ({len(seen_cfgs)} written; long: {long_cfg[:3]})")

    out_yaml = os.path.join(work, "round-best.yaml")
    rc, out, err = run_main(tune, ["--minutes", "0", "--storage", url, "--out", out_yaml, "--race-runs", "0"]
                            + setup[:-4] + ["--mlsys", mlsys])
    if not check(rc == 0 and os.path.exists(out_yaml), f"--minutes 0 --out writes the config (exit {rc}): "
                                                       f"{err.strip()[-500:]}"):
        return
    text = open(out_yaml).read()
    chosen = yaml.safe_load(text)

    def written(k):
        d = chosen
        for part in k.split("."):
            d = d[part]
        return d
    tuned = [line.strip() for line in text.splitlines() if "# tuned" in line]
    # At the resolution: 3 significant digits, but for a linear int key (step 1: any integer).
    coarse = [k for k, sp in space.items() if sp["type"] == "float" or (sp["type"] == "int" and sp["log"])]
    check(len(tuned) == len(space) and all(value_digits(written(k)) <= 3 for k in coarse),
          f"the written config's tuned values are rounded: {[written(k) for k in space]}")
    study = optuna.load_study(study_name="round", storage=url)
    num = int(re.search(r"trial (\d+) of", text).group(1))
    t = study.trials[num]
    want = t.user_attrs.get("evaluated", t.params)
    check(all(written(k) == v for k, v in want.items()),
          f"the written values are those trial {num} ran with: {[(k, written(k), v) for k, v in want.items()]}")
    rc2, out2, err2 = run_main(tune, ["status", "--storage", url, "--study", "round", "--mlsys", mlsys])
    summary = out + err + out2 + err2 + "\n".join(line for line in text.splitlines() if line.startswith("#"))
    check(not long_numbers(summary), f"no number in the summary, status and the config's header has more than "
                                     f"8 significant digits: {long_numbers(summary)[:5]}")


# ---------------------------------------------------------------- 2. race


def check_race_unit():
    racing = need("tune_race", "t_sf", "race")
    if not racing:
        return
    table = [(2.015, 5, 0.05), (1.812, 10, 0.05), (2.228, 10, 0.025), (3.169, 10, 0.005), (1.645, 10 ** 6, 0.05),
             (0.0, 7, 0.5), (-1.812, 10, 0.95), (6.314, 1, 0.05)]
    bad = [(t, df, p, racing.t_sf(t, df)) for t, df, p in table if abs(racing.t_sf(t, df) - p) > 6e-4]
    check(not bad, f"t_sf matches a t table (one-sided p for t, df): bad {bad}")

    def blocks():
        i = 0
        while True:
            yield ("inst", i)
            i += 1

    def noise(c, b):
        return random.Random(hash((c, b[1])) & 0xFFFF).gauss(0, 0.004)

    # A clearly better configuration, third in the order: it wins, the others leave as worse.
    calls = []

    def run(c, b):
        calls.append((c, b))
        return (1.00 if c == 12 else 1.05) * math.exp(noise(c, b)), 0.5
    quiet = []
    w, rows, how = racing.race([3, 7, 12, 20], run, blocks(), 20, 2, say=quiet.append)
    check(w == 12 and all(rows[c]["result"].startswith("worse") for c in (3, 7, 20)) and "won" in how,
          f"race: the clearly better configuration (not the first) wins and the others are worse: winner {w}, {how}")
    check(len(calls) < 4 * 20, f"race: the worse ones leave early ({len(calls)} runs of at most 80)")
    # Equal latencies on every run: the one that reaches them sooner wins.
    w, rows, how = racing.race([1, 2, 3], lambda c, b: (1.0, (0.2 if c == 3 else 0.8) * math.exp(noise(c, b))),
                             blocks(), 20, 1, say=quiet.append)
    check(w == 3 and "later" in rows[1]["result"] + rows[2]["result"],
          f"race: on equal latencies the faster configuration wins: winner {w}, {how}; {rows}")
    # No difference at all: the budget ends the race, the first in the order is kept, and it says so.
    calls.clear()

    def same(c, b):
        calls.append(c)
        return 1.0, 0.5
    w, rows, how = racing.race([5, 6, 7], same, blocks(), 9, 3, say=quiet.append)
    check(w == 5 and len(calls) == 27 and "no clear winner" in how and "9 runs" in how,
          f"race: no difference: 9 runs each (27 calls: {len(calls)}), the first kept, the summary says so: {how}")
    # A configuration whose run fails leaves the race.
    RunError = sys.modules["benchlib.tune_common"].RunError

    def failing(c, b):
        if c == 2 and b[1] == 3:
            raise RunError("mlsys solve x exited 1")
        return 1.0, 0.5
    w, rows, how = racing.race([1, 2], failing, blocks(), 10, 1, say=quiet.append)
    check(w == 1 and "failed" in rows[2]["result"], f"race: a configuration whose run fails leaves: {rows[2]}")


def check_race_real(tune, mlsys, work, train):
    import optuna
    url = "sqlite:///" + os.path.join(work, "race.db")
    setup = ["--base", os.path.join(work, "base.yaml"), "--space", os.path.join(work, "space.yaml"),
             "--seconds", "0.2", "--threads", "1", "--pruner", "none"]
    common = ["--study", "race", "--train", train, "--mlsys", mlsys]
    rc, out, err = run_main(tune, ["worker", "--storage", url, "--trials", "1"] + setup + common)
    if not check(rc == 0, f"a worker creates the study and runs the base config (exit {rc}): {err.strip()[-400:]}"):
        return
    study = optuna.load_study(study_name="race", storage=url)
    base = study.trials[0]
    rng = random.Random(3)
    for _ in range(3):  # three more trials tied with the base config at its score, each another configuration
        params = {}
        for k, d in base.distributions.items():
            if isinstance(d, optuna.distributions.CategoricalDistribution):
                params[k] = rng.choice(d.choices)
            elif isinstance(d, optuna.distributions.IntDistribution):
                params[k] = rng.randint(d.low, d.high)
            else:
                params[k] = min(max(float(f"{rng.uniform(d.low, d.high):.3g}"), d.low), d.high)
        study.add_trial(optuna.trial.create_trial(params=params, distributions=base.distributions, value=base.value,
                                                  user_attrs={"evaluated": params}))
    out_yaml = os.path.join(work, "race-best.yaml")
    argv = ["--minutes", "0", "--storage", url, "--out", out_yaml, "--race-runs", "6", "-j", "2"] + common
    rc, out, err = run_main(tune, argv)
    if not check(rc == 0, f"--minutes 0 on 4 tied trials exits 0 (exit {rc}): {err.strip()[-600:]}"):
        return
    both = " ".join((out + err).split())
    m = re.search(r"Chosen: trial (\d+)", both)
    check(m and "4 trials at the best training score" in both and "raced all 4" in both,
          f"the summary says 4 trials were tied and that they were raced: {both[-700:]}")
    race_md = os.path.join(os.path.splitext(out_yaml)[0] + ".tune", "race.md")
    rows = [line for line in open(race_md).read().splitlines() if re.match(r"\| \d", line)] \
        if os.path.exists(race_md) else []
    check(len(rows) == 4, f"race.md has a row per tied configuration ({len(rows)})")
    header = " ".join(line for line in open(out_yaml).read().splitlines() if line.startswith("#")) \
        if os.path.exists(out_yaml) else ""
    stored = optuna.load_study(study_name="race", storage=url).user_attrs.get("race") or {}
    check(m and f"trial {m.group(1)} of" in header and "4 trials at the best" in header
          and stored.get("winner") == int(m.group(1)),
          f"the config's header names the race's winner and the tie, the study keeps the race: {header[:400]}")
    rc, out2, err2 = run_main(tune, argv)
    m2 = re.search(r"Chosen: trial (\d+)", " ".join(out2.split()))
    check(rc == 0 and "holds a race" in err2 and m and m2 and m2.group(1) == m.group(1),
          f"a rerun takes the race the study holds, with the same winner (exit {rc}): {err2.strip()[-300:]}")


# ---------------------------------------------------------------- 3. --trials, optuna-dashboard


def trials_of(argv):
    return [int(argv[i + 1]) for i, a in enumerate(argv) if a == "--trials"]


def check_init_dir(work):
    """--init-dir: every run on an instance with INIT_DIR/<stem>.json passes it as --init; the
    -j workers get the folder on their command line."""
    from benchlib import tune_worker
    init_dir = os.path.join(work, "inits")
    os.makedirs(init_dir, exist_ok=True)
    with open(os.path.join(init_dir, "a.json"), "w") as f:
        f.write("{}")
    seen = []

    class FakeMl:
        path = "mlsys"

        def solve(self, inst, out, **kw):
            seen.append(kw.get("extra"))
            return types.SimpleNamespace(killed=False, rc=0, stats={}, latency=10.0, lower_bound=5.0, wall_s=0.1)

    for inst in ("x/a.json", "x/b.json"):
        tune_worker.score_run(FakeMl(), inst, "cfg.yaml", 1, 1, 1, work, init_dir)
    tune_worker.score_run(FakeMl(), "x/a.json", "cfg.yaml", 1, 1, 1, work)
    check(seen == [("--init", os.path.join(init_dir, "a.json")), (), ()],
          f"score_run passes --init only for an instance with a warm start and only with --init-dir (got {seen})")
    argv = tune_worker.worker_argv(types.SimpleNamespace(study="s", train="t", heartbeat=10, pruner="none",
                                                         minutes=None, trials=None, init_dir=init_dir), FakeMl())
    check(argv[-2:] == ["--init-dir", init_dir], f"the -j workers get --init-dir (got {argv})")


def check_trials(tune, tune_py, mlsys, work, train):
    r = subprocess.run([sys.executable, tune_py, "--help"], capture_output=True, text=True)
    check(r.returncode == 0 and re.search(r"^\s+--trials\b", r.stdout, re.M),
          "tune.py --help lists --trials among the main command's options")

    fake = types.SimpleNamespace(**{k: getattr(subprocess, k) for k in dir(subprocess) if not k.startswith("__")})
    fake.Popen = FakePopen
    tune.subprocess = fake
    setup = ["--base", os.path.join(work, "base.yaml"), "--space", os.path.join(work, "space.yaml"),
             "--seconds", "0.2", "--threads", "1", "--pruner", "none", "--train", train, "--mlsys", mlsys]
    try:
        for jobs, n, want in ((3, 5, [2, 2, 1]), (4, 2, [1, 1])):
            FakePopen.calls = []
            url = "sqlite:///" + os.path.join(work, f"fake-{jobs}.db")
            rc, out, err = run_main(tune, ["--storage", url, "-j", str(jobs), "--trials", str(n), "--race-runs", "0",
                                           "--out", os.path.join(work, f"fake-{jobs}.yaml")] + setup)
            shares = [trials_of(argv) for argv, _ in FakePopen.calls]
            check(shares == [[s] for s in want],
                  f"-j {jobs} --trials {n} starts {len(want)} workers with --trials {want} (got {shares}; exit {rc}: "
                  f"{err.strip()[-300:]})")
    finally:
        tune.subprocess = subprocess

    out_yaml = os.path.join(work, "trials-best.yaml")
    db = os.path.join(work, "trials-best.tune", "study.db")
    r = subprocess.run([sys.executable, tune_py, "--trials", "2", "--out", out_yaml] + setup,
                       capture_output=True, text=True, timeout=300)
    if check(r.returncode == 0, f"tune.py --trials 2 (no --minutes) exits 0 (exit {r.returncode}): "
                                f"{r.stderr.strip()[-500:]}"):
        import optuna
        ts = optuna.load_study(study_name="mlsys-tune", storage="sqlite:///" + db).get_trials(deepcopy=False)
        check(len(ts) == 2 and all(t.state.is_finished() for t in ts),
              f"tune.py --trials 2 ran exactly 2 trials ({[(t.number, t.state.name) for t in ts]})")
        check(f"optuna-dashboard sqlite:///{db}" in r.stderr,
              f"the end names the optuna-dashboard command for the study: {r.stderr.strip().splitlines()[-1:]}")
    r = subprocess.run([sys.executable, tune_py, "--minutes", "0", "--trials", "3", "--out", out_yaml] + setup,
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 1 and "--trials" in r.stderr,
          f"--minutes 0 --trials 3 is an error naming --trials (exit {r.returncode}): {r.stderr.strip()[-200:]}")
    common = need("tune_common", "dashboard_url")
    if common:
        for url, want in (("postgresql://u:Zq7pw@h:5433/db", "postgresql://u@h:5433/db"),
                          ("postgresql://u@/db?host=/run/pg&password=Zq7pw", "postgresql://u@/db?host=/run/pg"),
                          ("sqlite:////tmp/a/study.db", "sqlite:////tmp/a/study.db")):
            check(common.dashboard_url(url) == want, f"dashboard_url({url}) = {want} (got {common.dashboard_url(url)})")


def main():
    ap = tune_test_util.arg_parser(__doc__)
    ap.add_argument("--tune", default=os.path.join(ROOT, "bench", "tune.py"), help="the tune.py to check")
    ap.add_argument("--only", default="rounding,race,trials", help="the parts to run (default all three)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    why = tune_test_util.missing_packages(sys.executable, ["optuna", "yaml", "sqlalchemy"])
    if why:
        say(f"SKIPPED: {why}")
        return SKIP
    tune_py, mlsys = os.path.abspath(args.tune), os.path.abspath(args.mlsys)
    work = tempfile.mkdtemp(prefix="mlsys-tune-output-")
    train, error = tune_test_util.make_train(mlsys, work)
    if error:
        check(False, error)
        steps = []
    else:
        space = write_setup(mlsys, work)
        tune = tune_test_util.load_tune(tune_py)
        parts = {"rounding": [("1a. rounding: round_value", check_rounding_unit),
                              ("1b. rounding: a real study", lambda: check_rounding_real(tune, mlsys, work, train,
                                                                                         space))],
                 "race": [("2a. race: t test and race()", check_race_unit),
                          ("2b. race: four tied trials", lambda: check_race_real(tune, mlsys, work, train))],
                 "trials": [("3. --trials and optuna-dashboard", lambda: check_trials(tune, tune_py, mlsys, work,
                                                                                      train)),
                            ("4. --init-dir", lambda: check_init_dir(work))]}
        steps = [s for part in (p.strip() for p in args.only.split(",")) if part for s in parts[part]]
    return tune_test_util.run_steps(steps, work, args.keep, failures, say, check)


if __name__ == "__main__":
    sys.exit(main())
