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
  (none)     tune for --minutes with -j worker processes, then write the best configuration as a
             complete YAML config (--out, accepted by `mlsys solve -c`), the pictures and the
             validation table (--valid: the best config against the base config on held-out
             instances). --minutes 0 only does the second part, from the study as it is.
  worker     only run trials against --storage (or $MLSYS_TUNE_STORAGE) until --minutes or
             --trials; no output files.
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
parallel workers do not sample the same point).

The study stores its setup (base config, space, seconds, threads, seeds, the training
instances' SHA-1 and the run order); a worker joining it adopts that setup, and options that
contradict it are errors. Workers send a heartbeat (--heartbeat); a trial whose worker died
(SIGKILL, power loss) is marked FAIL by the next worker that starts a trial and queued once more.

Files next to --out (in --workdir, default OUT_STEM.tune/): study.db (SQLite, when no --storage),
history.png (optimisation history), importance.png (parameter importances, fANOVA),
intermediate.png (running score per run), validation.csv (one row per run), validation.md
(the table printed at the end).

Needs Debian's python3-optuna, python3-yaml, python3-matplotlib and python3-sklearn (the
pictures), python3-psycopg2 (PostgreSQL storage).
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from urllib.parse import unquote, unquote_plus

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # no bench/__pycache__ in the source tree
sys.path.insert(0, HERE)
import harness  # noqa: E402  (geometric mean, number parsing, sorting, the re-exec under Debian's python3)

DEFAULT_MLSYS = os.path.join(ROOT, "build", "release", "mlsys")
DEFAULT_SPACE = os.path.join(ROOT, "configs", "tune-space.yaml")
DEFAULT_BASE = os.path.join(ROOT, "configs", "default.yaml")
DEFAULT_STUDY = "mlsys-tune"
FAMILIES = ["transformer", "mixer", "gemm-chain", "cnn", "random"]
SETUP_KEYS = ("seconds", "threads", "seeds")  # options a joining worker adopts from the study
FAIL_STREAK = 5  # a worker stops after this many failed trials in a row (a broken binary or config)
STORAGE_ENV = "MLSYS_TUNE_STORAGE"  # the storage URL when --storage is absent (how -j N passes it to its workers)

optuna = None  # imported by need_optuna()
yaml = None


class TuneError(Exception):
    """A usage or setup problem: the message is printed and the exit code is 1."""


class RunError(Exception):
    """One solve failed (the trial is marked FAIL, the worker goes on)."""


def log(msg):
    print(f"tune: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the storage URL's password

# scheme://USER:PASSWORD@HOST...: the password runs from the first ':' of the user part to the last
# '@' (wider than any URL parser reads it, so a password holding '@' or '/' is masked whole). A
# string that is not scheme://... (a typo) has anything between its first ':' and last '@' masked.
_URL_SCHEME = re.compile(r"^[A-Za-z][\w+.-]*://")
_URL_PASSWORD = re.compile(r"^(?P<head>[A-Za-z][\w+.-]*://[^:/]*):(?P<pw>.*)@(?P<tail>[^@]*)$", re.S)
_LOOSE_PASSWORD = re.compile(r"^(?P<head>[^:@]*):(?P<pw>.*)@(?P<tail>[^@]*)$", re.S)
_QUERY_PASSWORD = re.compile(r"(?P<key>[?&]password=)(?P<pw>[^&#]*)", re.I)  # ...?host=H&password=PW (libpq)


def _userinfo_password(url):
    return (_URL_PASSWORD if _URL_SCHEME.match(url) else _LOOSE_PASSWORD).match(url)


def mask_url(url):
    """The storage URL as messages show it: any password replaced by ***
    (postgresql://user:***@host/db); a URL without one (sqlite, .pgpass) unchanged."""
    if not url or url.startswith("sqlite"):
        return url
    m = _userinfo_password(url)
    if m:
        url = f"{m['head']}:***@{m['tail']}"
    return _QUERY_PASSWORD.sub(lambda q: q["key"] + "***", url)


def url_secrets(url):
    """The password of `url` in every spelling a message could hold (as written, %-decoded)."""
    if not url or url.startswith("sqlite"):
        return []
    raw = []
    m = _userinfo_password(url)
    if m:
        raw.append(m["pw"])
    raw += [q["pw"] for q in _QUERY_PASSWORD.finditer(url)]
    found = {v for r in raw for v in (r, unquote(r), unquote_plus(r)) if v and v != "***"}
    return sorted(found, key=len, reverse=True)


def scrub(text, url):
    """`text` with the storage URL masked and its password nowhere (for library messages)."""
    if not url or not text:
        return text
    text = text.replace(url, mask_url(url))
    for secret in url_secrets(url):
        text = text.replace(secret, "***")
    return text


def need_optuna(storage):
    """Imports optuna and yaml (re-executing under Debian's python3 if that one has more of the
    modules this run wants, pictures and PostgreSQL included)."""
    global optuna, yaml
    required = ["optuna", "yaml"] + (["psycopg2"] if (storage or "").startswith("postgresql") else [])
    missing = harness.reexec_for(required + ["matplotlib", "sklearn"], "Optuna tunes the config")
    if set(missing) & set(required):
        raise TuneError(f"{sys.executable} cannot import {', '.join(m for m in missing if m in required)}: "
                        "apt-get install python3-optuna python3-yaml python3-psycopg2 (Debian packages)")
    import optuna as o
    import yaml as y
    optuna, yaml = o, y
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


def file_sha1(path):
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


def list_instances(folder, flag):
    if not folder:
        raise TuneError(f"{flag} is required")
    if not os.path.isdir(folder):
        raise TuneError(f"{flag} {folder}: no such folder")
    names = sorted((f for f in os.listdir(folder) if f.endswith(".json")), key=harness.natural_key)
    if not names:
        raise TuneError(f"{flag} {folder}: no *.json instances (make some with: bench/tune.py make-sets)")
    return {os.path.splitext(f)[0]: os.path.join(folder, f) for f in names}


def parse_seeds(text, flag="--seeds"):
    """'3' means seeds 1..3; '1,5,9' lists them."""
    try:
        if "," not in text:
            n = int(text)
            if n < 1:
                raise ValueError
            return list(range(1, n + 1))
        seeds = [int(s) for s in text.split(",") if s.strip()]
        if not seeds or any(s < 0 for s in seeds):
            raise ValueError
        return seeds
    except ValueError:
        raise TuneError(f"{flag} {text!r}: expected a count N (seeds 1..N) or a list like 1,5,9") from None


# ---------------------------------------------------------------- the binary


class Mlsys:
    def __init__(self, path):
        if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
            raise TuneError(f"--mlsys {path}: not an executable (build first: cmake --preset release && "
                            "cmake --build --preset release)")
        self.path = os.path.abspath(path)
        r = subprocess.run([self.path, "--version"], capture_output=True, text=True)
        self.version = (r.stdout.strip().splitlines() or ["?"])[0]

    def resolved_config(self, cfg_path):
        """The config as mlsys reads it (every key), or TuneError with mlsys's message."""
        r = subprocess.run([self.path, "solve", "--print-config", "-c", cfg_path], capture_output=True, text=True)
        if r.returncode != 0:
            raise TuneError(f"mlsys rejects {cfg_path}: {r.stderr.strip()}")
        return yaml.safe_load(r.stdout) or {}

    def resolved_config_text(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(text)
        try:
            return self.resolved_config(f.name)
        finally:
            os.remove(f.name)

    def solve(self, inst, cfg, seconds, threads, seed, scratch):
        """One run: {'latency', 'lower_bound', 'ratio', 'wall_s'}; RunError if it fails."""
        fd, base = tempfile.mkstemp(prefix="run-", dir=scratch)
        os.close(fd)
        out, stats = base + ".out.json", base + ".stats.json"
        cmd = [self.path, "solve", inst, out, "--seconds", f"{seconds:g}", "--threads", str(threads),
               "--seed", str(seed), "-c", cfg, "--stats", stats, "-q"]
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=2 * seconds + 30)
            wall = time.monotonic() - t0
            if r.returncode != 0:
                why = (r.stderr.strip().splitlines() or ["no message"])[-1]
                raise RunError(f"mlsys solve {os.path.basename(inst)} --seed {seed} exited {r.returncode}: {why}")
            try:
                with open(stats) as f:
                    st = json.load(f)
            except (OSError, ValueError) as e:
                raise RunError(f"mlsys solve {os.path.basename(inst)}: no readable --stats ({e})") from None
        except subprocess.TimeoutExpired:
            raise RunError(f"mlsys solve {os.path.basename(inst)} --seed {seed} did not end within "
                           f"{2 * seconds + 30:g} s") from None
        finally:
            for p in (base, out, stats):
                if os.path.exists(p):
                    os.remove(p)
        lat, lb = harness.fnum(st.get("best_latency")), harness.fnum(st.get("lower_bound"))
        if lat is None or lb is None or lb <= 0:
            raise RunError(f"mlsys solve {os.path.basename(inst)}: stats lack best_latency or a positive "
                           f"lower_bound (best_latency={st.get('best_latency')}, lower_bound={st.get('lower_bound')})")
        return {"latency": lat, "lower_bound": lb, "ratio": lat / lb, "wall_s": wall}


# ---------------------------------------------------------------- space and configs


def get_path(d, path):
    for part in path:
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return d


def load_space(path, resolved):
    """The space file as {key: spec}; every key must be a key mlsys knows (from --print-config)."""
    try:
        with open(path) as f:
            raw = yaml.safe_load(f)
    except OSError as e:
        raise TuneError(f"--space {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise TuneError(f"--space {path}: not valid YAML: {e}") from None
    if not isinstance(raw, dict) or not raw:
        raise TuneError(f"--space {path}: expected a mapping of config keys to {{type, range, log, choices}}")
    space = {}
    for key, spec in raw.items():
        where = f"--space {path}: {key}"
        if not isinstance(spec, dict):
            raise TuneError(f"{where}: expected a mapping like {{type: float, range: [0.1, 1], log: true}}")
        unknown = set(spec) - {"type", "range", "log", "choices"}
        if unknown:
            raise TuneError(f"{where}: unknown field {sorted(unknown)[0]!r} (known: type, range, log, choices)")
        current = get_path(resolved, str(key).split("."))
        if current is None or isinstance(current, dict):
            raise TuneError(f"{where}: not a key of the search config (see `mlsys solve --print-config`)")
        kind = spec.get("type")
        if kind in ("float", "int"):
            rng = spec.get("range")
            if not (isinstance(rng, list) and len(rng) == 2 and all(isinstance(x, (int, float)) and
                                                                    not isinstance(x, bool) for x in rng)):
                raise TuneError(f"{where}: range must be [low, high] (two numbers)")
            if kind == "int" and not all(isinstance(x, int) for x in rng):
                raise TuneError(f"{where}: an int key needs integer bounds, got {rng}")
            lo, hi = rng
            log_scale = spec.get("log", False)
            if not isinstance(log_scale, bool):
                raise TuneError(f"{where}: log must be true or false")
            if not lo < hi:
                raise TuneError(f"{where}: range low {lo} must be below high {hi}")
            if log_scale and lo <= 0:
                raise TuneError(f"{where}: a log scale needs low > 0, got {lo}")
            if "choices" in spec:
                raise TuneError(f"{where}: choices are for type categorical")
            space[key] = {"type": kind, "low": lo, "high": hi, "log": log_scale}
        elif kind == "categorical":
            ch = spec.get("choices")
            if not (isinstance(ch, list) and len(ch) >= 2 and all(isinstance(c, (str, int, float, bool)) for c in ch)):
                raise TuneError(f"{where}: choices must be a list of at least two numbers, names or true/false")
            if "range" in spec or "log" in spec:
                raise TuneError(f"{where}: a categorical key takes choices, not range/log")
            space[key] = {"type": "categorical", "choices": ch}
        else:
            raise TuneError(f"{where}: type must be float, int or categorical, got {kind!r}")
    return space


def default_params(space, resolved):
    """The base config's values of the space's keys (the first trial), and the keys outside their range."""
    params, outside = {}, []
    for key, spec in space.items():
        v = get_path(resolved, key.split("."))
        if spec["type"] == "categorical":
            match = [c for c in spec["choices"] if str(c).lower() == str(v).lower()]
            if match:
                params[key] = match[0]
            else:
                outside.append(f"{key}={v}")
            continue
        x = harness.fnum(v)
        if x is None or not spec["low"] <= x <= spec["high"]:
            outside.append(f"{key}={v}")
            continue
        params[key] = int(x) if spec["type"] == "int" else x
    return params, outside


def suggest(trial, key, spec):
    if spec["type"] == "float":
        return trial.suggest_float(key, spec["low"], spec["high"], log=spec["log"])
    if spec["type"] == "int":
        return trial.suggest_int(key, spec["low"], spec["high"], log=spec["log"])
    return trial.suggest_categorical(key, spec["choices"])


def yaml_scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        s = repr(v)
        if "e" in s and "." not in s.split("e")[0]:  # 1e-05 is a string to YAML 1.1 readers; 1.0e-05 is not
            m, e = s.split("e")
            s = f"{m}.0e{e}"
        return s
    return str(v)


def merged_config(base_text, params):
    """The base config (a dict) with `params` set."""
    cfg = yaml.safe_load(base_text) or {}
    for key, v in params.items():
        d = cfg
        *parents, leaf = key.split(".")
        for p in parents:
            d = d.setdefault(p, {})
        d[leaf] = v
    return cfg


def normalised(x):
    """For comparing configs parsed by different YAML readers: numbers as floats."""
    if isinstance(x, dict):
        return {k: normalised(v) for k, v in x.items()}
    if isinstance(x, list):
        return [normalised(v) for v in x]
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    if isinstance(x, str) and harness.fnum(x) is not None:
        return float(x)
    return x


def config_text(base_text, params, header="", defaults=None):
    """The base config's text with the tuned values put in place (its comments kept, each tuned
    line marked); falls back to a plain YAML dump when the base is laid out in a way this line
    editor does not follow (the result is checked against the structured merge either way)."""
    want = merged_config(base_text, params)
    lines, stack, done = base_text.splitlines(), [], set()
    while header and lines and lines[0].startswith("#"):  # the base's own title gives way to the header
        lines.pop(0)
    rx = re.compile(r"^(\s*)([A-Za-z0-9_.-]+):(\s*)([^#]*?)(\s*#.*)?$")
    out = []
    for line in lines:
        m = rx.match(line)
        if not m or line.lstrip().startswith("#"):
            out.append(line)
            continue
        indent = len(m.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, m.group(2)))
        key = ".".join(k for _, k in stack)
        if key in params and m.group(4):
            note = f"tuned (default {defaults[key]})" if defaults and key in defaults else "tuned"
            comment = (m.group(5) or "").strip()
            comment = f"# {note}; {comment[1:].strip()}" if comment else f"# {note}"
            line = f"{m.group(1)}{m.group(2)}:{m.group(3) or ' '}{yaml_scalar(params[key])}  {comment}"
            done.add(key)
        out.append(line)
    text = "\n".join(out) + "\n"
    try:
        same = done == set(params) and normalised(yaml.safe_load(text)) == normalised(want)
    except yaml.YAMLError:
        same = False
    if not same:
        text = yaml.safe_dump(want, sort_keys=False, default_flow_style=None)
    return header + text


# ---------------------------------------------------------------- the study


def storage_for(url, heartbeat):
    kw = {"connect_args": {"timeout": 60}} if url.startswith("sqlite") else {"pool_pre_ping": True}
    try:
        storage = optuna.storages.RDBStorage(
            url, engine_kwargs=kw, heartbeat_interval=heartbeat, grace_period=3 * heartbeat,
            failed_trial_callback=optuna.storages.RetryFailedTrialCallback(max_retry=1))
    except Exception as e:  # SQLAlchemy raises many kinds for a bad URL or an unreachable server
        if type(e).__name__ == "ArgumentError":  # "Could not parse ... URL from string '<the URL>'"
            why = "not a database URL (expected sqlite:///FILE or postgresql://USER[:PW]@HOST[:PORT]/DB)"
        else:
            why = f"cannot open ({type(e).__name__}: {(str(e).splitlines() or [''])[0]})"
        raise TuneError(scrub(f"--storage {mask_url(url)}: {why}", url)) from None
    if url.startswith("sqlite"):
        serialise_sqlite(storage.engine)
    return storage


def serialise_sqlite(engine):
    """SQLite ignores SELECT ... FOR UPDATE, so two workers could both take the same queued trial
    (both read it WAITING, both set it RUNNING). Every transaction starts with BEGIN IMMEDIATE
    instead (the write lock first; the SQLAlchemy recipe for pysqlite), which serialises them."""
    import sqlalchemy

    @sqlalchemy.event.listens_for(engine, "connect")
    def _connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None  # pysqlite must not issue its own BEGIN

    @sqlalchemy.event.listens_for(engine, "begin")
    def _begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    engine.dispose()  # connections made before the hooks reconnect with them


def sampler_and_pruner(kind, n_runs):
    """TPE, and the pruner `kind` (median, halving, none) for trials of n_runs steps."""
    sampler = optuna.samplers.TPESampler(multivariate=True, constant_liar=True, n_startup_trials=10)
    if kind == "median":  # behind the median of the trials so far at the same run, after a quarter of the runs
        pruner = optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=n_runs // 4)
    elif kind == "halving":
        pruner = optuna.pruners.SuccessiveHalvingPruner(min_resource=max(1, n_runs // 4))
    else:
        pruner = optuna.pruners.NopPruner()
    return sampler, pruner


def new_setup(args, ml):
    base_text = read_text(args.base or DEFAULT_BASE, "--base")
    resolved = ml.resolved_config(args.base or DEFAULT_BASE)
    space = load_space(args.space or DEFAULT_SPACE, resolved)
    insts = list_instances(args.train, "--train")
    seeds = parse_seeds(args.seeds or "1")
    runs = [[name, s] for name in insts for s in seeds]
    random.Random(12345).shuffle(runs)  # families interleaved, the same order in every trial
    setup = {"format": 1, "base_name": os.path.relpath(args.base or DEFAULT_BASE, ROOT), "base_yaml": base_text,
             "space": space, "seconds": args.seconds or 2.0, "threads": args.threads or default_threads(args.jobs),
             "seeds": seeds, "instances": {n: file_sha1(p) for n, p in insts.items()}, "runs": runs,
             "mlsys_version": ml.version}
    if setup["seconds"] <= 0:
        raise TuneError("--seconds must be positive")
    return setup


def read_text(path, flag):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise TuneError(f"{flag} {path}: {e.strerror}") from None


def default_threads(jobs):
    return max(1, len(os.sched_getaffinity(0)) // max(1, jobs))


def check_against(setup, args, ml):
    """A worker joining a study: explicit options must agree with the study's setup."""
    problems = []
    for k in ("seconds", "threads", "seeds", "base", "space"):
        setattr(args, k, getattr(args, k, None))  # (status has none of them)
    if args.seconds is not None and args.seconds != setup["seconds"]:
        problems.append(f"--seconds {args.seconds:g} (the study uses {setup['seconds']:g})")
    if args.threads is not None and args.threads != setup["threads"]:
        problems.append(f"--threads {args.threads} (the study uses {setup['threads']})")
    if args.seeds is not None and parse_seeds(args.seeds) != setup["seeds"]:
        problems.append(f"--seeds {args.seeds} (the study uses {setup['seeds']})")
    if args.base is not None and read_text(args.base, "--base") != setup["base_yaml"]:
        problems.append(f"--base {args.base} (differs from the study's base config {setup['base_name']})")
    if args.space is not None and load_space(args.space, ml.resolved_config_text(setup["base_yaml"])) != setup["space"]:
        problems.append(f"--space {args.space} (differs from the study's space)")
    if problems:
        raise TuneError("this study was created with another setup: " + "; ".join(problems) +
                        ". Drop these options to adopt the study's, or use another --study / --storage")
    if setup["mlsys_version"] != ml.version:
        log(f"warning: the study was started with {setup['mlsys_version']!r}, this worker runs {ml.version!r}")


def training_paths(setup, train_dir):
    """{name: path} of the study's training instances in this machine's --train folder (same SHA-1)."""
    have = list_instances(train_dir, "--train")
    paths, bad = {}, []
    for name, sha in setup["instances"].items():
        p = have.get(name)
        if p is None or file_sha1(p) != sha:
            bad.append(name + (" (missing)" if p is None else " (different content)"))
        else:
            paths[name] = p
    if bad:
        raise TuneError(f"--train {train_dir} does not hold the study's training instances: {', '.join(bad[:5])}"
                        f"{' ...' if len(bad) > 5 else ''} (every worker needs the same files; the study "
                        f"has {len(setup['instances'])})")
    return paths


def open_study(args, ml, create, setup_if_new=None):
    """(study, setup): loads the study, or creates it with this command's setup when `create`."""
    storage = storage_for(args.storage, args.heartbeat)
    try:
        study = optuna.load_study(study_name=args.study, storage=storage)
        setup = study.user_attrs.get("setup")
    except KeyError:
        study, setup = None, None
    if setup is None:
        if not create:
            raise TuneError(f"no study {args.study!r} in {mask_url(args.storage)} "
                            "(start one with --train ... --out ...)")
        setup = setup_if_new or new_setup(args, ml)
        study = optuna.create_study(study_name=args.study, storage=storage, direction="minimize", load_if_exists=True)
        if "setup" not in study.user_attrs:  # (another worker may have created it meanwhile)
            study.set_user_attr("setup", setup)
            params, outside = default_params(setup["space"], ml.resolved_config_text(setup["base_yaml"]))
            if outside:
                log(f"note: base values outside the space (the first trial samples them instead): {', '.join(outside)}")
            study.enqueue_trial(params, user_attrs={"base_config": True})
            log(f"new study {args.study!r} in {mask_url(args.storage)}: {len(setup['space'])} keys, "
                f"{len(setup['instances'])} instances x {len(setup['seeds'])} seeds, --seconds {setup['seconds']:g} "
                f"--threads {setup['threads']}")
        setup = study.user_attrs["setup"]
    else:
        check_against(setup, args, ml)
    sampler, pruner = sampler_and_pruner(getattr(args, "pruner", "none"), len(setup["runs"]))
    return optuna.load_study(study_name=args.study, storage=storage, sampler=sampler, pruner=pruner), setup


# ---------------------------------------------------------------- worker


class Worker:
    def __init__(self, args, ml, study, setup, scratch):
        self.ml, self.study, self.setup, self.scratch = ml, study, setup, scratch
        self.paths = training_paths(setup, args.train)
        self.id = f"{socket.gethostname()}:{os.getpid()}"
        self.deadline = time.time() + args.minutes * 60 if args.minutes else None
        self.fail_streak = 0
        self.finished = 0  # trials this worker ended (any state)
        self.preflight()

    def preflight(self):
        """One short solve with the base config: a binary without --stats or a lower bound in
        them, or a broken base config, stops here with mlsys's message, not after five trials."""
        cfg = os.path.join(self.scratch, "base.yaml")
        with open(cfg, "w") as f:
            f.write(self.setup["base_yaml"])
        name = min(self.paths, key=lambda n: os.path.getsize(self.paths[n]))
        try:
            self.ml.solve(self.paths[name], cfg, 0.3, 1, 1, self.scratch)
        except RunError as e:
            raise TuneError(f"a first short run failed, so no trial would work: {e}") from None

    def objective(self, trial):
        s = self.setup
        trial.set_user_attr("worker", self.id)
        params = {k: suggest(trial, k, spec) for k, spec in s["space"].items()}
        cfg = os.path.join(self.scratch, f"trial-{trial.number}.yaml")
        with open(cfg, "w") as f:
            f.write(config_text(s["base_yaml"], params))
        try:
            ratios = []
            for step, (name, seed) in enumerate(s["runs"]):
                if self.deadline and time.time() > self.deadline:
                    trial.set_user_attr("stopped", f"time up after {step} of {len(s['runs'])} runs")
                    raise optuna.TrialPruned()
                r = self.ml.solve(self.paths[name], cfg, s["seconds"], s["threads"], seed, self.scratch)
                ratios.append(r["ratio"])
                trial.report(harness.geomean(ratios), step)
                if trial.should_prune():
                    trial.set_user_attr("stopped", f"pruned after {step + 1} of {len(s['runs'])} runs")
                    raise optuna.TrialPruned()
            return harness.geomean(ratios)
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
        return 1 if self.fail_streak >= FAIL_STREAK else 0


def cmd_worker(args):
    """One worker process or, with -j N, N of them."""
    if not args.minutes and not args.trials:
        raise TuneError("worker: give --minutes M or --trials N")
    ml = Mlsys(args.mlsys)
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


def worker_argv(args, ml):
    """The options of one `tune.py worker` process of this command (the setup comes from the study).
    Not the storage URL: a command line is public (ps), so it goes in the environment (worker_env)."""
    argv = ["--study", args.study, "--train", args.train, "--mlsys", ml.path,
            "--heartbeat", str(args.heartbeat), "--pruner", args.pruner]
    if args.minutes:
        argv += ["--minutes", repr(args.minutes)]
    if getattr(args, "trials", None):
        argv += ["--trials", str(args.trials)]
    return argv


def worker_env(storage):
    """The environment of a worker process: ours, with the storage URL in MLSYS_TUNE_STORAGE (an
    environment is readable only by its user and root, unlike a command line)."""
    return dict(os.environ, **{STORAGE_ENV: storage})


def spawn_workers(worker_args, jobs, storage):
    """Runs `tune.py worker ARGS` jobs times in parallel, the storage URL in their environment;
    returns 0 or the first non-zero exit code."""
    env = worker_env(storage)
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "worker"] + worker_args, env=env)
             for _ in range(jobs)]

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


# ---------------------------------------------------------------- results


def trial_counts(study):
    counts = {}
    for t in study.get_trials(deepcopy=False):
        counts[t.state.name] = counts.get(t.state.name, 0) + 1
    return counts


def write_best(args, study, setup, ml):
    best = study.best_trial
    base_trial = [t for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
                  if t.user_attrs.get("base_config")]
    counts = trial_counts(study)
    resolved = ml.resolved_config_text(setup["base_yaml"])
    defaults = {k: yaml_scalar(get_path(resolved, k.split("."))) for k in setup["space"]}
    header = (f"# mlsys search config tuned by bench/tune.py (Optuna TPE), {datetime.date.today()}.\n"
              f"# Study {args.study!r}: trial {best.number} of {sum(counts.values())} "
              f"({', '.join(f'{v} {k.lower()}' for k, v in sorted(counts.items()))}).\n"
              f"# Training: {len(setup['instances'])} instances x seeds {setup['seeds']}, --seconds {setup['seconds']:g} "
              f"--threads {setup['threads']}; geometric mean of latency / lower bound {best.value:.5f}"
              + (f" (base config {base_trial[0].value:.5f})" if base_trial else "") + ".\n"
              f"# Base: {setup['base_name']}; the tuned keys say so. A complete config: mlsys solve -c FILE.\n")
    text = config_text(setup["base_yaml"], best.params, header, defaults)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    try:
        ml.resolved_config(tmp)  # mlsys must accept it as is
    except TuneError:
        os.remove(tmp)
        raise
    os.replace(tmp, args.out)
    log(f"wrote {args.out} (trial {best.number}, training score {best.value:.5f})")
    return best


def pictures(study, workdir):
    if importlib.util.find_spec("matplotlib") is None:
        log(f"no pictures: {sys.executable} cannot import matplotlib (apt-get install python3-matplotlib python3-sklearn)")
        return
    import matplotlib
    matplotlib.use("Agg")
    from optuna.visualization import matplotlib as ovm
    jobs = [("history.png", ovm.plot_optimization_history), ("intermediate.png", ovm.plot_intermediate_values),
            ("importance.png", ovm.plot_param_importances)]
    for name, plot in jobs:
        path = os.path.join(workdir, name)
        try:
            ax = plot(study)
            fig = ax.figure if hasattr(ax, "figure") else ax.flat[0].figure
            fig.set_size_inches(10, 6)
            fig.savefig(path, dpi=110, bbox_inches="tight")
            matplotlib.pyplot.close(fig)
            log(f"wrote {path}")
        except Exception as e:  # importances need scikit-learn and two complete trials
            log(f"no {name}: {type(e).__name__}: {e}")


def validate(args, ml, setup, best_yaml, workdir):
    """Runs the base config and the best one on every --valid instance x --valid-seeds; the table."""
    insts = list_instances(args.valid, "--valid")
    overlap = [n for n, p in insts.items() if file_sha1(p) in set(setup["instances"].values())]
    if overlap:
        log(f"warning: {len(overlap)} validation instances are also training instances: {', '.join(overlap[:5])}")
    seeds = parse_seeds(args.valid_seeds, "--valid-seeds")
    base_yaml = os.path.join(workdir, "base.yaml")
    with open(base_yaml, "w") as f:
        f.write(setup["base_yaml"])
    configs = {"default": base_yaml, "best": best_yaml}
    jobs = [(label, name, s) for name in insts for s in seeds for label in configs]
    scratch = tempfile.mkdtemp(prefix="valid-", dir=workdir)
    log(f"validation: {len(insts)} instances x {len(seeds)} seeds x 2 configs, --seconds {setup['seconds']:g} "
        f"--threads {setup['threads']}, {args.jobs} at a time (about "
        f"{len(jobs) * setup['seconds'] / args.jobs / 60:.1f} min)")

    def one(job):
        label, name, seed = job
        try:
            return job, ml.solve(insts[name], configs[label], setup["seconds"], setup["threads"], seed, scratch)
        except RunError as e:
            return job, {"error": str(e)}

    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for (label, name, seed), r in ex.map(one, jobs):
            rows.append({"config": label, "instance": name, "seed": seed, **r})
            if "error" in r:
                log(f"validation run failed: {r['error']}")
    shutil.rmtree(scratch, ignore_errors=True)
    harness.write_csv(os.path.join(workdir, "validation.csv"),
                      ["config", "instance", "seed", "latency", "lower_bound", "ratio", "wall_s", "error"], rows)
    per = {}
    for r in rows:
        if "ratio" in r:
            per.setdefault(r["instance"], {}).setdefault(r["config"], []).append(r["ratio"])
    lines = [f"Validation on {args.valid}: median over seeds {seeds} of latency / lower bound "
             f"(--seconds {setup['seconds']:g} --threads {setup['threads']}); best/default below 1 is better.", "",
             f"| instance | default ({setup['base_name']}) | best ({os.path.basename(args.out)}) | best/default |",
             "|---|--:|--:|--:|"]
    dcol, bcol, rcol = [], [], []
    for name in insts:
        d, b = harness.median(per.get(name, {}).get("default", [])), harness.median(per.get(name, {}).get("best", []))
        ratio = b / d if d and b else None
        dcol.append(d), bcol.append(b), rcol.append(ratio)
        lines.append(f"| {name} | {harness.fmt(d, 5)} | {harness.fmt(b, 5)} | {harness.fmt(ratio, 5)} |")
    g = harness.geomean(rcol)
    lines.append(f"| geometric mean | {harness.fmt(harness.geomean(dcol), 5)} | {harness.fmt(harness.geomean(bcol), 5)} "
                 f"| {harness.fmt(g, 5)} |")
    failed = sum("error" in r for r in rows)
    if g is not None:
        verdict = ("better than" if g < 1 - 1e-9 else "worse than" if g > 1 + 1e-9 else "the same as")
        lines += ["", f"The tuned config is {verdict} the default on the validation set: geometric mean of "
                      f"best/default {g:.5f} ({(g - 1) * 100:+.2f}%), better on {sum(r < 1 - 1e-9 for r in rcol if r)}, "
                      f"worse on {sum(r > 1 + 1e-9 for r in rcol if r)} of {len(insts)} instances."]
    if failed:
        lines.append(f"{failed} validation runs failed (see validation.csv).")
    md = "\n".join(lines) + "\n"
    with open(os.path.join(workdir, "validation.md"), "w") as f:
        f.write(md)
    return md, failed


# ---------------------------------------------------------------- commands


def cmd_tune(args):
    if not args.out:
        raise TuneError("--out BEST.yaml is required")
    if args.minutes is None or args.minutes < 0:
        raise TuneError("--minutes M is required (0: no tuning, only write the best of the study and validate)")
    workdir = os.path.abspath(args.workdir or os.path.splitext(args.out)[0] + ".tune")
    ml = Mlsys(args.mlsys)
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
    if args.minutes > 0:
        if not args.train:
            raise TuneError("--train DIR is required to tune (--minutes > 0)")
        log(f"tuning for {args.minutes:g} min with {args.jobs} workers; study {args.study!r} in "
            f"{mask_url(args.storage)}")
        try:
            worker_rc = spawn_workers(worker_argv(args, ml), args.jobs, args.storage)
        except KeyboardInterrupt:
            log(f"interrupted; the study is kept in {mask_url(args.storage)}: rerun the same command to resume, "
                "or with --minutes 0 to write the best so far and validate")
            return 130
    counts = trial_counts(study)
    log("trials: " + ", ".join(f"{v} {k.lower()}" for k, v in sorted(counts.items())))
    if not counts.get("COMPLETE"):
        raise TuneError("no complete trial in the study: nothing to write (see the messages above)")
    os.makedirs(workdir, exist_ok=True)
    write_best(args, study, setup, ml)
    pictures(study, workdir)
    failed = 0
    if args.valid:
        md, failed = validate(args, ml, setup, os.path.abspath(args.out), workdir)
        print(md, end="")
    log(f"files in {workdir}")
    return 1 if worker_rc or failed else 0


def warn_cores(jobs, threads):
    if harness.oversubscribed(jobs, threads):
        log(harness.oversubscribed(jobs, threads))


def cmd_status(args):
    study, setup = open_study(args, Mlsys(args.mlsys), create=False)
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
        print(f"best: trial {b.number}, {b.value:.5f}: " + json.dumps(b.params))
    return 0


def cmd_make_sets(args):
    ml = Mlsys(args.mlsys)
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
                    r = subprocess.run([ml.path, "generate", "--family", fam, "--size", str(size), "--seed", str(seed),
                                        "--output", path], capture_output=True, text=True)
                    if r.returncode != 0:
                        raise TuneError(f"mlsys generate --family {fam} --size {size} --seed {seed} failed "
                                        f"(exit {r.returncode}): {r.stderr.strip()}")
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
        ap.add_argument("--trials", type=int, help="stop after this many trials (per process)")
        run = cmd_worker
    else:
        ap = argparse.ArgumentParser(prog="tune.py", description=__doc__, formatter_class=fmt)
        study_options(ap, worker=False)
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
