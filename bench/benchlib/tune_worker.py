"""bench/tune.py: one run scored, the objective, the worker, and the worker processes of -j N."""
import os
import signal
import socket
import subprocess
import tempfile
import time

from .common import geomean
from .tune_common import FAIL_STREAK, STORAGE_ENV, RunError, TuneError, log, optuna
from .tune_space import config_text, default_params, resolved_config_text, suggest
from .tune_study import training_paths


def init_for(init_dir, inst):
    """The warm start of instance `inst` (INIT_DIR/<stem>.json, as harness.py --init-dir), or None."""
    if not init_dir:
        return None
    path = os.path.join(init_dir, os.path.splitext(os.path.basename(inst))[0] + ".json")
    return path if os.path.exists(path) else None


def score_run(ml, inst, cfg, seconds, threads, seed, scratch, init_dir=None):
    """One run: {'latency', 'lower_bound', 'ratio', 'wall_s'}; RunError if it fails. With
    `init_dir`, INIT_DIR/<instance stem>.json, where it exists, is passed as mlsys solve --init."""
    fd, base = tempfile.mkstemp(prefix="run-", dir=scratch)
    os.close(fd)
    out, stats = base + ".out.json", base + ".stats.json"
    name, limit = os.path.basename(inst), 2 * seconds + 30
    try:
        init = init_for(init_dir, inst)
        res = ml.solve(inst, out, seconds=seconds, threads=threads, seed=seed, config=cfg, stats=stats, kill_at=limit,
                       extra=("--init", init) if init else ())
    finally:
        for p in (base, out, stats):
            if os.path.exists(p):
                os.remove(p)
    if res.killed:
        raise RunError(f"mlsys solve {name} --seed {seed} did not end within {limit:g} s")
    if res.rc != 0:
        raise RunError(f"mlsys solve {name} --seed {seed} exited {res.rc}: {res.last_error_line()}")
    if res.stats is None:
        raise RunError(f"mlsys solve {name}: no readable --stats ({res.stats_error})")
    lat, lb = res.latency, res.lower_bound
    if lat is None or lb is None or lb <= 0:
        raise RunError(f"mlsys solve {name}: stats lack best_latency or a positive lower_bound "
                       f"(best_latency={res.stat('best_latency')}, lower_bound={res.stat('lower_bound')})")
    return {"latency": lat, "lower_bound": lb, "ratio": lat / lb, "wall_s": res.wall_s}


class Worker:
    """Runs trials of the study: each samples the space's keys at their resolution (suggest), keeps
    the values it runs with in the trial's user attribute `evaluated` (what the study reports,
    writes and shows in optuna-dashboard) and scores them on the setup's runs."""

    def __init__(self, args, ml, study, setup, scratch):
        self.ml, self.study, self.setup, self.scratch = ml, study, setup, scratch
        self.paths = training_paths(setup, args.train)
        self.id = f"{socket.gethostname()}:{os.getpid()}"
        self.deadline = time.time() + args.minutes * 60 if args.minutes else None
        self.init_dir = getattr(args, "init_dir", None)
        self.fail_streak = 0
        self.finished = 0  # trials this worker ended (any state)
        self.preflight()
        # the base config's values: a sampled value equal to one is run as it is (suggest)
        self.base_values = default_params(setup["space"], resolved_config_text(ml, setup["base_yaml"]))[0]

    def preflight(self):
        """One short solve with the base config: a binary without --stats or a lower bound in
        them, or a broken base config, stops here with mlsys's message, not after five trials."""
        cfg = os.path.join(self.scratch, "base.yaml")
        with open(cfg, "w") as f:
            f.write(self.setup["base_yaml"])
        name = min(self.paths, key=lambda n: os.path.getsize(self.paths[n]))
        try:
            score_run(self.ml, self.paths[name], cfg, 0.3, 1, 1, self.scratch)
        except RunError as e:
            raise TuneError(f"a first short run failed, so no trial would work: {e}") from None

    def objective(self, trial):
        s = self.setup
        trial.set_user_attr("worker", self.id)
        params = {k: suggest(trial, k, spec, self.base_values) for k, spec in s["space"].items()}
        trial.set_user_attr("evaluated", params)
        cfg = os.path.join(self.scratch, f"trial-{trial.number}.yaml")
        with open(cfg, "w") as f:
            f.write(config_text(s["base_yaml"], params))
        try:
            ratios = []
            for step, (name, seed) in enumerate(s["runs"]):
                if self.deadline and time.time() > self.deadline:
                    trial.set_user_attr("stopped", f"time up after {step} of {len(s['runs'])} runs")
                    raise optuna.TrialPruned()
                r = score_run(self.ml, self.paths[name], cfg, s["seconds"], s["threads"], seed, self.scratch,
                              self.init_dir)
                ratios.append(r["ratio"])
                trial.report(geomean(ratios), step)
                if trial.should_prune():
                    trial.set_user_attr("stopped", f"pruned after {step + 1} of {len(s['runs'])} runs")
                    raise optuna.TrialPruned()
            return geomean(ratios)
        except RunError as e:
            trial.set_user_attr("error", str(e))
            raise
        finally:
            os.remove(cfg)

    def after_trial(self, study, ft):
        state = ft.state.name
        if state == "COMPLETE":
            msg = f"{ft.value:.5f}"
        elif state == "PRUNED":
            msg = ft.user_attrs.get("stopped", "pruned")
        else:
            msg = ft.user_attrs.get("error", "failed")
        try:
            best = f"best {study.best_value:.5f} (trial {study.best_trial.number})"
        except ValueError:
            best = "no complete trial yet"
        log(f"[{self.id}] trial {ft.number} {state.lower()}: {msg}; {best}")
        self.finished += 1
        self.fail_streak = self.fail_streak + 1 if state == "FAIL" else 0
        if self.fail_streak >= FAIL_STREAK:
            log(f"[{self.id}] {FAIL_STREAK} trials failed in a row: stopping this worker")
            study.stop()

    def run(self, trials):
        while True:
            left = trials - self.finished if trials else None
            timeout = self.deadline - time.time() if self.deadline else None
            if (left is not None and left <= 0) or (timeout is not None and timeout <= 0):
                break
            try:
                self.study.optimize(self.objective, n_trials=left, timeout=timeout, catch=(RunError,),
                                    callbacks=[self.after_trial], gc_after_trial=False)
                break
            except RuntimeError as e:
                # Optuna 3.1: when two workers find the same stale trial, the slower one's attempt
                # to fail it raises (the trial is already FAIL) before its own trial starts.
                if "can not be updated" not in str(e):
                    raise
                log(f"[{self.id}] another worker marked the same stale trial failed first; going on")
            except AssertionError as e:
                # Optuna 3.1, on a loaded machine: this worker's heartbeat was late, another worker
                # failed its running trial as stale (it runs again, RetryFailedTrialCallback), and
                # telling the result then raises "already finished", which optuna turns into
                # AssertionError("Should not reach."). The worker is alive: go on.
                if "can not be updated" not in str(e.__context__ or ""):
                    raise
                log(f"[{self.id}] this worker's trial was failed as stale by another (a late heartbeat: a loaded "
                    f"machine); it runs again; going on")
        return 1 if self.fail_streak >= FAIL_STREAK else 0


def worker_argv(args, ml):
    """The options of one `tune.py worker` process of this command (the setup comes from the study).
    Not the storage URL: a command line is public (ps), so it goes in the environment (worker_env)."""
    argv = ["--study", args.study, "--train", args.train, "--mlsys", ml.path,
            "--heartbeat", str(args.heartbeat), "--pruner", args.pruner]
    if args.minutes:
        argv += ["--minutes", repr(args.minutes)]
    if getattr(args, "trials", None):
        argv += ["--trials", str(args.trials)]
    if getattr(args, "init_dir", None):
        argv += ["--init-dir", os.path.abspath(args.init_dir)]
    return argv


def worker_env(storage):
    """The environment of a worker process: ours, with the storage URL in MLSYS_TUNE_STORAGE (an
    environment is readable only by its user and root, unlike a command line)."""
    return dict(os.environ, **{STORAGE_ENV: storage})


def trial_shares(trials, jobs):
    """`trials` split as evenly as can be between min(jobs, trials) workers, larger shares first."""
    n = min(jobs, trials)
    return [trials // n + (i < trials % n) for i in range(n)]


def spawn_workers(worker_cmd, jobs, storage, popen=subprocess.Popen, trials=None):
    """Runs the command `worker_cmd` (`python3 tune.py worker ARGS`) jobs times in parallel, the
    storage URL in their environment; returns 0 or the first non-zero exit code. trials: the
    number of trials of them all, split between them (10 on 3 workers: --trials 4, 3, 3); then no
    more than `trials` processes start."""
    env = worker_env(storage)
    if trials:
        shares = trial_shares(trials, jobs)
        jobs = len(shares)
        procs = [popen(worker_cmd + ["--trials", str(n)], env=env) for n in shares]
    else:
        procs = [popen(worker_cmd, env=env) for _ in range(jobs)]

    def on_term(signum, _frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, on_term)
    try:
        codes = [p.wait() for p in procs]
    except KeyboardInterrupt:  # Ctrl-C reached the workers too (one process group); SIGTERM did not
        for p in procs:
            if p.poll() is None:
                p.terminate()  # its trial stays RUNNING until its heartbeat is stale, then runs again
        for p in procs:
            p.wait()
        raise
    finally:
        signal.signal(signal.SIGTERM, old)
    bad = [c for c in codes if c != 0]
    if bad:
        log(f"{len(bad)} of {jobs} workers ended with an error (exit codes {bad})")
    return bad[0] if bad else 0

