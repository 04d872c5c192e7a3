"""bench/tune.py: the study in its storage (SQLite or PostgreSQL) and its setup."""
import os
import random

from .common import ROOT, file_sha1
from .tune_common import (DEFAULT_BASE, DEFAULT_SPACE, TuneError, default_threads, list_instances, log, mask_url,
                          optuna, read_text, scrub, seeds_of)
from .tune_space import default_params, load_space, resolved_config, resolved_config_text


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
    resolved = resolved_config(ml, args.base or DEFAULT_BASE)
    space = load_space(args.space or DEFAULT_SPACE, resolved)
    insts = list_instances(args.train, "--train")
    seeds = seeds_of(args.seeds or "1")
    runs = [[name, s] for name in insts for s in seeds]
    random.Random(12345).shuffle(runs)  # families interleaved, the same order in every trial
    setup = {"format": 1, "base_name": os.path.relpath(args.base or DEFAULT_BASE, ROOT), "base_yaml": base_text,
             "space": space, "seconds": args.seconds or 2.0, "threads": args.threads or default_threads(args.jobs),
             "seeds": seeds, "instances": {n: file_sha1(p) for n, p in insts.items()}, "runs": runs,
             "mlsys_version": ml.version}
    if setup["seconds"] <= 0:
        raise TuneError("--seconds must be positive")
    return setup


def check_against(setup, args, ml):
    """A worker joining a study: explicit options must agree with the study's setup."""
    problems = []
    for k in ("seconds", "threads", "seeds", "base", "space"):
        setattr(args, k, getattr(args, k, None))  # (status has none of them)
    if args.seconds is not None and args.seconds != setup["seconds"]:
        problems.append(f"--seconds {args.seconds:g} (the study uses {setup['seconds']:g})")
    if args.threads is not None and args.threads != setup["threads"]:
        problems.append(f"--threads {args.threads} (the study uses {setup['threads']})")
    if args.seeds is not None and seeds_of(args.seeds) != setup["seeds"]:
        problems.append(f"--seeds {args.seeds} (the study uses {setup['seeds']})")
    if args.base is not None and read_text(args.base, "--base") != setup["base_yaml"]:
        problems.append(f"--base {args.base} (differs from the study's base config {setup['base_name']})")
    if args.space is not None and load_space(args.space, resolved_config_text(ml, setup["base_yaml"])) != setup["space"]:
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


def open_study(args, ml, create, setup_if_new=None, storage_for=storage_for):
    """(study, setup): loads the study, or creates it with this command's setup when `create`.
    storage_for: how the storage is opened (bench/tune.py passes its own, which tests replace)."""
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
            params, outside = default_params(setup["space"], resolved_config_text(ml, setup["base_yaml"]))
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

