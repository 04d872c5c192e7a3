#!/usr/bin/env python3
"""Tune mlsys's search config with Optuna: which values of the keys in a space file make
`mlsys solve` reach schedules closest to the lower bound on a training set.

One machine (the study lives in SQLite next to the output; rerun the same command to resume):

    python3 bench/tune.py make-sets --train build/tuning/train --valid build/tuning/valid
    python3 bench/tune.py --train build/tuning/train --valid build/tuning/valid --minutes 20 -j 2 --out build/tuning/best.yaml

Several machines (one PostgreSQL database shared by every worker; the instances are the same
files on every machine, checked by SHA-1):

    python3 bench/tune.py --train T --valid V --minutes 60 -j 8 --storage postgresql://user@host/db --out best.yaml
    python3 bench/tune.py worker --train T --minutes 60 -j 8 --storage postgresql://user@host/db   # on the others

The database password: best in ~/.pgpass or PGPASSWORD (libpq reads them; the URL then has none).
A password in the URL works too; to keep it off the command line (which `ps` shows to every
user), give the URL in the environment variable MLSYS_TUNE_STORAGE instead of --storage.
Messages show the URL with the password masked (postgresql://user:***@host/db), and the worker
processes of -j N get the URL through MLSYS_TUNE_STORAGE, never on their command line.

Subcommands:
  (none)     tune for --minutes, or for --trials trials in all, whichever ends first, with -j
             worker processes; then write the best configuration as a complete YAML config
             (--out, accepted by `mlsys solve -c`), the pictures and the validation table
             (--valid: the best config against the base config on held-out instances).
             --minutes 0 only does the second part, from the study as it is.
  worker     only run trials against --storage (or $MLSYS_TUNE_STORAGE) until its --minutes or
             its --trials (per process); no output files.
  make-sets  generate training and validation instances with `mlsys generate` (disjoint seeds).
  status     print the study: trials per state and per worker, the best trial.

How a configuration is scored: the base config (--base, default configs/default.yaml) with the
sampled values of the space's keys (--space, default configs/tune-space.yaml) is run as
`mlsys solve INST OUT --seconds S --threads T --seed K -c CFG --stats ST` on every training
instance x seed (--seeds); each run scores best_latency / lower_bound from its stats, the trial's
value is the geometric mean (lower is better, 1 = at the bound everywhere). The runs go in a
fixed shuffled order; after each, the running geometric mean is reported and the pruner (median
of the other trials at the same run, --pruner) stops configurations that are behind. The first
trial of a new study is the base config itself. Sampler: TPE (multivariate, constant liar, so
parallel workers do not sample the same point). A sampled value runs, and is written, at its
key's resolution: 3 significant digits on a log scale (0.00123, 138000), else a power-of-ten step
giving 100 to 999 steps over the range (0.001 on [0.05, 0.6]), integers as integers; a value equal
to the base config's stays as it is. The trial's user attribute `evaluated` holds these values.

Ties: the trials whose score is within --race-within of the best (several often are) are raced
as irace races: up to --race-max distinct configurations run on the training instances with
seeds the training did not use, round by round; from the 5th run on, one that a one-sided paired
t-test (p < 0.05) finds worse than the leader (on latency / lower bound; on equal latencies, on
the time to reach them) leaves. The race ends with one left or after --race-runs runs each (the
best mean wins). It runs after --minutes; the summary and the config's header say how many
trials were tied and how the winner was chosen (race.md: the table), and the study keeps the
result, so rerunning with --minutes 0 does not race again.

The study stores its setup (base config, space, seconds, threads, seeds, the training
instances' SHA-1 and the run order); a worker joining it adopts that setup, and options that
contradict it are errors. Workers send a heartbeat (--heartbeat); a trial whose worker died
(SIGKILL, power loss) is marked FAIL by the next worker that starts a trial and queued once more.

Files next to --out (in --workdir, default OUT_STEM.tune/): study.db (SQLite, when no --storage),
history.png (optimisation history), importance.png (parameter importances, fANOVA),
intermediate.png (running score per run), race.md (the race, when there was one), validation.csv
(one row per run), validation.md (the table printed at the end). The last line names the
optuna-dashboard command that browses the study (optuna-dashboard is a pip package, not in Debian).

Needs Debian's python3-optuna, python3-yaml, python3-matplotlib and python3-sklearn (the
pictures), python3-psycopg2 (PostgreSQL storage).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap

sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import tune_study, tune_worker  # noqa: E402
from benchlib.common import DEFAULT_MLSYS, FAMILIES, ROOT, oversubscribed  # noqa: E402
from benchlib.mlsys import MlsysError  # noqa: E402
from benchlib.tune_common import (DEFAULT_BASE, DEFAULT_SPACE, DEFAULT_STUDY, STORAGE_ENV, TuneError,  # noqa: E402
                                  dashboard_hint, list_instances, log, mask_url, mlsys_of, need_optuna, optuna,
                                  scrub)
from benchlib.tune_race import choose  # noqa: E402
from benchlib.tune_results import pictures, trial_counts, validate, write_config  # noqa: E402
from benchlib.tune_space import evaluated_params  # noqa: E402
from benchlib.tune_study import new_setup, storage_for  # noqa: E402
from benchlib.tune_worker import Worker, worker_argv  # noqa: E402

# The study's storage is opened with storage_for and the worker processes are started with
# subprocess.Popen, both looked up here at the call: tests/tune_secrets_test.py replaces
# tune.storage_for and tune.subprocess to watch them (mask_url is read by it too).


def open_study(args, ml, create, setup_if_new=None):
    return tune_study.open_study(args, ml, create, setup_if_new, storage_for=storage_for)


def spawn_workers(worker_args, jobs, storage, trials=None):
    """Runs `tune.py worker ARGS` jobs times in parallel, the storage URL in their environment;
    returns 0 or the first non-zero exit code. trials: the number of trials of them all, split
    between them (tune_worker.spawn_workers)."""
    cmd = [sys.executable, os.path.abspath(__file__), "worker"] + worker_args

    def popen(argv, **kw):  # subprocess looked up at the call (tests replace it)
        return subprocess.Popen(argv, **kw)

    return tune_worker.spawn_workers(cmd, jobs, storage, popen=popen, trials=trials)


def cmd_worker(args):
    """One worker process or, with -j N, N of them."""
    if not args.minutes and not args.trials:
        raise TuneError("worker: give --minutes M or --trials N")
    ml = mlsys_of(args.mlsys)
    study, setup = open_study(args, ml, create=bool(args.train))
    if not args.train:
        raise TuneError("--train DIR is required (a folder holding the study's training instances)")
    if args.jobs > 1:  # the study exists now: the processes only join it
        warn_cores(args.jobs, setup["threads"])
        return spawn_workers(worker_argv(args, ml), args.jobs, args.storage)
    scratch = tempfile.mkdtemp(prefix="mlsys-tune-")

    def on_term(signum, _frame):  # die as by SIGTERM (the trial stays RUNNING and runs again), without litter
        shutil.rmtree(scratch, ignore_errors=True)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, on_term)
    try:
        return Worker(args, ml, study, setup, scratch).run(args.trials)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def cmd_tune(args):
    if not args.out:
        raise TuneError("--out BEST.yaml is required")
    if args.minutes is None and not args.trials:
        raise TuneError("--minutes M or --trials N is required (--minutes 0: no tuning, only write the best of "
                        "the study and validate)")
    if args.minutes is not None and args.minutes < 0:
        raise TuneError("--minutes must be >= 0")
    if args.trials is not None and args.trials < 1:
        raise TuneError("--trials must be >= 1")
    if args.minutes == 0 and args.trials:
        raise TuneError("--minutes 0 runs no trial: drop --trials, or give --minutes M > 0 with it")
    if args.race_within < 0 or args.race_max < 2 or args.race_runs < 0:
        raise TuneError("--race-within must be >= 0, --race-max >= 2 and --race-runs >= 0")
    workdir = os.path.abspath(args.workdir or os.path.splitext(args.out)[0] + ".tune")
    ml = mlsys_of(args.mlsys)
    if args.valid:
        list_instances(args.valid, "--valid")  # fail now rather than after the tuning
    setup = None
    if not args.storage:  # SQLite in the workdir; a new one only once the setup is known to be sound
        db = os.path.join(workdir, "study.db")
        setup = None if os.path.exists(db) else new_setup(args, ml)
        os.makedirs(workdir, exist_ok=True)
        args.storage = "sqlite:///" + db
    study, setup = open_study(args, ml, create=True, setup_if_new=setup)
    warn_cores(args.jobs, setup["threads"])
    worker_rc = 0
    if args.minutes or args.trials:
        if not args.train:
            raise TuneError("--train DIR is required to tune (--minutes > 0 or --trials)")
        limit = " or ".join(([f"{args.minutes:g} min"] if args.minutes else []) +
                            ([f"{args.trials} trials"] if args.trials else []))
        jobs = min(args.jobs, args.trials) if args.trials else args.jobs
        log(f"tuning for {limit}{', whichever comes first,' if args.minutes and args.trials else ''} with {jobs} "
            f"workers; study {args.study!r} in {mask_url(args.storage)}")
        try:  # the trials are split between the workers: their command lines get their share
            worker_rc = spawn_workers(worker_argv(argparse.Namespace(**dict(vars(args), trials=None)), ml),
                                      args.jobs, args.storage, trials=args.trials)
        except KeyboardInterrupt:
            log(f"interrupted; the study is kept in {mask_url(args.storage)}: rerun the same command to resume, "
                "or with --minutes 0 to write the best so far and validate")
            return 130
    counts = trial_counts(study)
    log("trials: " + ", ".join(f"{v} {k.lower()}" for k, v in sorted(counts.items())))
    if not counts.get("COMPLETE"):
        raise TuneError("no complete trial in the study: nothing to write (see the messages above)")
    os.makedirs(workdir, exist_ok=True)
    chosen = choose(args, ml, study, setup, workdir)
    write_config(args, study, setup, ml, chosen)
    print(textwrap.fill(f"Chosen: trial {chosen['trial'].number}: {chosen['why']}.", width=100) + "\n")
    pictures(study, workdir)
    failed = 0
    if args.valid:
        md, failed = validate(args, ml, setup, os.path.abspath(args.out), workdir)
        print(md, end="")
    log(f"files in {workdir}")
    log(dashboard_hint(args.storage))
    return 1 if worker_rc or failed else 0


def warn_cores(jobs, threads):
    if oversubscribed(jobs, threads):
        log(oversubscribed(jobs, threads))


def cmd_status(args):
    study, setup = open_study(args, mlsys_of(args.mlsys), create=False)
    counts = trial_counts(study)
    print(f"study {args.study!r} in {mask_url(args.storage)}: "
          + ", ".join(f"{v} {k.lower()}" for k, v in sorted(counts.items())))
    per = {}
    for t in study.get_trials(deepcopy=False):
        w = t.user_attrs.get("worker", "?")
        per.setdefault(w, {}).setdefault(t.state.name, 0)
        per[w][t.state.name] += 1
    for w, c in sorted(per.items()):
        print(f"  {w}: " + ", ".join(f"{v} {k.lower()}" for k, v in sorted(c.items())))
    if counts.get("COMPLETE"):
        b = study.best_trial
        tied = sum(1 for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
                   if t.value == b.value)
        print(f"best: trial {b.number}, {b.value:.5f}{f' ({tied} trials tied at it)' if tied > 1 else ''}: "
              + json.dumps(evaluated_params(b, setup["space"])))
        race_ = study.user_attrs.get("race")
        if isinstance(race_, dict) and "winner" in race_:
            print(f"chosen by the last `tune.py --out`: trial {race_['winner']}: {race_['why']}")
    print(dashboard_hint(args.storage))
    return 0


def cmd_make_sets(args):
    ml = mlsys_of(args.mlsys)
    fams = [f.strip() for f in args.families.split(",") if f.strip()]
    for f in fams:
        if f not in FAMILIES:
            raise TuneError(f"--families: unknown family {f!r} (known: {', '.join(FAMILIES)})")
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        assert sizes and all(s >= 1 for s in sizes)
    except (ValueError, AssertionError):
        raise TuneError(f"--sizes {args.sizes!r}: expected positive integers like 15,30,60") from None
    if args.per_size < 1:
        raise TuneError("--per-size must be >= 1")
    if os.path.abspath(args.train) == os.path.abspath(args.valid):
        raise TuneError("--train and --valid must be different folders")
    for folder, seed0, what in ((args.train, 1, "training"), (args.valid, 10001, "validation")):
        os.makedirs(folder, exist_ok=True)
        made = 0
        for fam in fams:
            for size in sizes:
                for i in range(args.per_size):
                    seed = seed0 + i
                    path = os.path.join(folder, f"{fam}-n{size:03d}-g{seed}.json")
                    if os.path.exists(path):
                        continue
                    try:
                        ml.generate(fam, size, seed, path)
                    except MlsysError as e:
                        raise TuneError(str(e)) from None
                    made += 1
        log(f"{what} set {folder}: {len(fams) * len(sizes) * args.per_size} instances ({made} generated) "
            f"from generator seeds {seed0}..{seed0 + args.per_size - 1}")
    return 0


STORAGE_HELP = (f"; default ${STORAGE_ENV} (keeps a password off the command line, which ps shows); a password "
                "is best in ~/.pgpass or PGPASSWORD (postgresql://USER@HOST/DB); messages mask it")


def study_options(ap, worker):
    ap.add_argument("--storage", help="Optuna RDB URL shared by the workers: sqlite:///FILE (one machine) or "
                    "postgresql://USER[:PW]@HOST/DB (several)" + STORAGE_HELP +
                    ("" if worker else "; without either, sqlite in --workdir"))
    ap.add_argument("--study", default=DEFAULT_STUDY, help=f"study name (default {DEFAULT_STUDY})")
    ap.add_argument("--train", help="folder of training instances (*.json)")
    ap.add_argument("--space", help=f"search space YAML (default {os.path.relpath(DEFAULT_SPACE, ROOT)})")
    ap.add_argument("--base", help=f"the config the tuned values go into (default {os.path.relpath(DEFAULT_BASE, ROOT)})")
    ap.add_argument("--seconds", type=float, help="mlsys solve --seconds per run (default 2)")
    ap.add_argument("--threads", type=int, help="mlsys solve --threads per run (default: cores / -j, at least 1)")
    ap.add_argument("--seeds", help="solver seeds per training instance: N (1..N) or a list 1,5,9 (default 1)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="worker processes on this machine (default 1)")
    ap.add_argument("--minutes", type=float, help="tuning time; workers start no trial after it and stop the one running")
    ap.add_argument("--pruner", choices=["median", "halving", "none"], default="median",
                    help="stop bad configurations early: median of the other trials at the same run (default), "
                         "successive halving, or none")
    ap.add_argument("--heartbeat", type=int, default=10, help="seconds between a worker's heartbeats; a trial "
                    "silent for 3 heartbeats is failed and queued again (default 10)")
    ap.add_argument("--mlsys", default=DEFAULT_MLSYS, help="the binary (default build/release/mlsys)")
    ap.add_argument("--init-dir", metavar="DIR", help="warm starts: DIR/<instance>.json, where it exists, is passed "
                    "to every run on that instance as mlsys solve --init (as harness.py --init-dir)")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    sub = argv[0] if argv and argv[0] in ("worker", "make-sets", "status") else None
    fmt = argparse.RawDescriptionHelpFormatter
    if sub == "make-sets":
        ap = argparse.ArgumentParser(prog="tune.py make-sets", formatter_class=fmt,
                                     description="Generate training (generator seeds 1..) and validation "
                                                 "(seeds 10001..) instances: every family x size x --per-size.")
        ap.add_argument("--train", required=True, help="folder for the training instances")
        ap.add_argument("--valid", required=True, help="folder for the validation instances")
        ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated (default: all five)")
        ap.add_argument("--sizes", default="15,30,60", help="approximate op counts (default 15,30,60)")
        ap.add_argument("--per-size", type=int, default=1, help="instances per family and size (default 1)")
        ap.add_argument("--mlsys", default=DEFAULT_MLSYS, help="the binary (default build/release/mlsys)")
        run = cmd_make_sets
    elif sub == "status":
        ap = argparse.ArgumentParser(prog="tune.py status", description="Print a study's trials and its best.")
        ap.add_argument("--storage", help="the study's RDB URL" + STORAGE_HELP)
        ap.add_argument("--study", default=DEFAULT_STUDY, help=f"study name (default {DEFAULT_STUDY})")
        ap.add_argument("--mlsys", default=DEFAULT_MLSYS, help="the binary (default build/release/mlsys)")
        ap.add_argument("--heartbeat", type=int, default=10, help=argparse.SUPPRESS)
        run = cmd_status
    elif sub == "worker":
        ap = argparse.ArgumentParser(prog="tune.py worker", formatter_class=fmt,
                                     description="Run trials of the study in --storage (no output files). A worker "
                                                 "joining an existing study adopts its setup.")
        study_options(ap, worker=True)
        ap.add_argument("--trials", type=int, help="stop after this many trials (per process: with -j N, N times as "
                        "many; the main command's --trials counts them all)")
        run = cmd_worker
    else:
        ap = argparse.ArgumentParser(prog="tune.py", description=__doc__, formatter_class=fmt)
        study_options(ap, worker=False)
        ap.add_argument("--trials", type=int, help="stop after this many trials in all (split between the -j "
                        "workers), or at --minutes if that comes first; --minutes is then optional")
        ap.add_argument("--race-within", type=float, default=0.001, metavar="FRACTION",
                        help="trials whose training score is within this fraction of the best are tied and raced "
                             "(default 0.001: 0.1%%; 0: exact ties only)")
        ap.add_argument("--race-max", type=int, default=8, help="race at most this many distinct tied configurations, "
                        "the best scores first (default 8)")
        ap.add_argument("--race-runs", type=int, default=20, help="at most this many runs of each raced configuration "
                        "(training instances, new seeds; default 20; 0: no race, the first tied trial wins)")
        ap.add_argument("--valid", help="folder of held-out instances: the best config against the base config")
        ap.add_argument("--valid-seeds", default="2", help="solver seeds per validation instance (default 2: 1..2)")
        ap.add_argument("--out", help="write the best configuration here (a complete YAML config)")
        ap.add_argument("--workdir", help="study.db, pictures and validation files (default OUT_STEM.tune/)")
        run = cmd_tune
    args = ap.parse_args(argv[1:] if sub else argv)
    if getattr(args, "jobs", 1) < 1:
        ap.error("-j must be >= 1")
    if getattr(args, "heartbeat", 1) < 1:
        ap.error("--heartbeat must be >= 1")
    if sub != "make-sets" and not args.storage:
        args.storage = os.environ.get(STORAGE_ENV) or None
        if not args.storage and sub in ("worker", "status"):
            ap.error(f"--storage URL is required (or the environment variable {STORAGE_ENV})")
    try:
        if sub != "make-sets":
            need_optuna(args.storage)
        return run(args)
    except TuneError as e:
        log(f"error: {scrub(str(e), getattr(args, 'storage', None))}")
        return 1
    except KeyboardInterrupt:
        log("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
