#!/usr/bin/env python3
"""Run by the GoogleTest Tuning.StoragePasswordNeitherPrintedNorOnWorkerCommandLines
(tests/cli/tuning_test.cpp): bench/tune.py keeps the --storage password out of its messages and off
the command lines of the worker processes it starts (which `ps` shows to every local user).

    python3 tests/tune_secrets_test.py --mlsys build/release/mlsys [--tune bench/tune.py]

1. mask_url (bench/tune.py imported as a module) on URL shapes: with and without a password,
   %-encoded and raw special characters, a password in the query, sqlite URLs unchanged;
2. tune.py run (status, worker, the tuning command) with postgresql URLs holding a password,
   against a server that does not exist: the password is in neither stdout nor stderr;
3. in-process, with the storage redirected to a SQLite file and the worker processes not started
   (subprocess.Popen recorded): the messages of a new study, of the tuning and of `status` mask
   the password; `-j 2` (worker and tuning command) gives the workers the URL in their
   environment (MLSYS_TUNE_STORAGE), not in their argv; a `worker --storage URL` run by hand and a
   worker with the URL only in MLSYS_TUNE_STORAGE both open that URL and complete a trial;
4. a real `tune.py worker -j 2` on a SQLite study: both workers complete a trial, and none of the
   worker command lines read from /proc while they run holds the storage URL.
Every check runs; the failures are listed at the end (exit 1). Exit 77 (CTest SKIP_RETURN_CODE)
with a message when optuna, yaml, sqlalchemy or psycopg2 are missing. --tune checks another
copy of tune.py (e.g. an older one: git show HEAD:bench/tune.py > /tmp/old/bench/tune.py, with
bench/harness.py and bench/benchlib/ copied next to it).
"""
import os
import subprocess
import sys
import tempfile
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77
ENV = "MLSYS_TUNE_STORAGE"
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "bench"))
import tune_test_util  # noqa: E402  (re-execs under Debian's python3 when this one lacks the packages)
from tune_test_util import FakePopen, load_tune, run_main  # noqa: E402

say, check, failures = tune_test_util.checker("tune_secrets_test")


def leaks(text, secrets):
    return [s for s in secrets if s in text]


def check_mask(tune):
    """1. The masking helper."""
    if not check(hasattr(tune, "mask_url"), "tune.py has a masking helper mask_url(url)"):
        return
    cases = [  # (url, expected, strings that must not appear)
        ("postgresql://user:Zq7pw@host/db", "postgresql://user:***@host/db", ["Zq7pw"]),
        ("postgresql+psycopg2://user:Zq7pw@host:5433/db?sslmode=require",
         "postgresql+psycopg2://user:***@host:5433/db?sslmode=require", ["Zq7pw"]),
        ("postgresql://user:p%40ss%3Aw%2Frd@host/db", "postgresql://user:***@host/db", ["p%40ss", "p@ss:w/rd"]),
        ("postgresql://user:p@ss:w/rd@host/db", "postgresql://user:***@host/db", ["p@ss", "w/rd"]),
        ("postgresql://user:@host/db", "postgresql://user:***@host/db", []),
        ("postgresql://user@/db?host=/tmp/s&password=Zq7pw&port=5432",
         "postgresql://user@/db?host=/tmp/s&password=***&port=5432", ["Zq7pw"]),
        ("postgresql://user@host/db", "postgresql://user@host/db", []),  # .pgpass / PGPASSWORD
        ("postgresql://host:5432/db", "postgresql://host:5432/db", []),
        ("postgresql+psycopg2://postgres@/tune?host=/tmp/x&port=5432",
         "postgresql+psycopg2://postgres@/tune?host=/tmp/x&port=5432", []),
        ("sqlite:///study.db", "sqlite:///study.db", []),
        ("sqlite:////tmp/a:b@c/study.db", "sqlite:////tmp/a:b@c/study.db", []),
    ]
    for url, want, secrets in cases:
        try:
            got = tune.mask_url(url)
        except Exception as e:  # noqa: BLE001
            got = f"<{type(e).__name__}: {e}>"
        check(got == want and not leaks(got, secrets), f"mask_url({url!r}) = {got!r} (want {want!r})")
    typo = "postgresql//user:Zq7pw@host/db"  # not a URL: still no password shown
    check("Zq7pw" not in str(tune.mask_url(typo)), f"mask_url({typo!r}) hides the password: {tune.mask_url(typo)!r}")


def check_runs(tune_py, mlsys, work, train):
    """2. Real runs against a server that does not exist: the password is never printed."""
    nowhere = os.path.join(work, "no-server")  # a socket folder that does not exist: fails at once
    worker = ["worker", "--train", train, "--trials", "1"]
    tuning = ["--minutes", "0", "--out", os.path.join(work, "never.yaml")]  # the tuning command
    runs = [  # (command, URL, strings that must not be printed)
        (["status"], f"postgresql+psycopg2://tuneuser:Zq7-secret-PW@/tune?host={nowhere}", ["Zq7-secret-PW"]),
        (worker, f"postgresql://tuneuser:p%40ss%3Aw%2Frd-Zq7@/tune?host={nowhere}", ["p%40ss%3Aw%2Frd-Zq7", "p@ss:w/rd-Zq7"]),
        (tuning, "postgresql://tuneuser:Zq7-secret-PW@localhost:notaport/tune", ["Zq7-secret-PW"]),
        (["status"], f"postgresql://tuneuser@/tune?host={nowhere}&password=Zq7-query-PW", ["Zq7-query-PW"]),
        (worker, "postgresql//tuneuser:Zq7-secret-PW@host/db", ["Zq7-secret-PW"]),  # a typo: not a URL
    ]
    for sub, url, secrets in runs:
        cmd = [sys.executable, tune_py] + sub + ["--storage", url, "--mlsys", mlsys]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=work)
        out = r.stdout + r.stderr
        shown = " | ".join(line for line in out.splitlines() if "tune:" in line) or out.strip()
        check(r.returncode == 1 and not leaks(out, secrets),
              f"tune.py {'tuning' if sub is tuning else sub[0]} --storage <password URL> exits 1 without printing "
              f"the password (exit {r.returncode}, printed {leaks(out, secrets)}): {shown}")


def check_in_process(tune, mlsys, work, train):
    """3. Messages with a working (SQLite) storage, and the worker processes' argv/env."""
    secret = "Zq7-inproc-PW"
    url = f"postgresql://tuneuser:{secret}@db.invalid:5432/tune"
    db = "sqlite:///" + os.path.join(work, "inproc.db")
    opened = []
    real_storage_for = tune.storage_for

    def storage_for(u, heartbeat):  # the study lives in SQLite, whatever URL tune.py was given
        opened.append(u)
        return real_storage_for(db, heartbeat)

    fake_subprocess = types.SimpleNamespace(**{k: getattr(subprocess, k) for k in dir(subprocess) if not k.startswith("__")})
    fake_subprocess.Popen = FakePopen
    tune.storage_for, tune.subprocess = storage_for, fake_subprocess
    common = ["--study", "inproc", "--train", train, "--mlsys", mlsys]
    setup = ["--base", os.path.join(work, "base.yaml"), "--space", os.path.join(work, "space.yaml"),
             "--seconds", "0.2", "--threads", "1"]
    old_env = os.environ.pop(ENV, None)
    try:
        # A new study, its workers started by `worker -j 2`.
        FakePopen.calls = []
        rc, out, err = run_main(tune, ["worker", "--storage", url, "-j", "2", "--trials", "1", "--pruner", "none"]
                                + setup + common)
        check(rc == 0 and "new study" in err and secret not in out + err,
              f"worker -j 2: the new-study message masks the password (exit {rc}): {err.strip()[-400:]}")
        check_spawned("worker -j 2", url, secret)

        # The tuning command on that study (-j 2; no trial completes as no worker really runs).
        FakePopen.calls = []
        rc, out, err = run_main(tune, ["--storage", url, "-j", "2", "--minutes", "1",
                                       "--out", os.path.join(work, "inproc.yaml")] + common)
        check("tuning for" in err and secret not in out + err,
              f"tune.py -j 2: the tuning message masks the password (exit {rc}): {err.strip()[-400:]}")
        check_spawned("tune.py -j 2", url, secret)

        rc, out, err = run_main(tune, ["status", "--storage", url, "--study", "inproc", "--mlsys", mlsys])
        check(rc == 0 and "inproc" in out and secret not in out + err,
              f"status masks the password (exit {rc}): {out.strip().splitlines()[:1]}")

        # A worker run by hand with --storage URL, then one with the URL only in the environment.
        by_hand = f"postgresql://tuneuser:{secret}@by-hand.invalid/tune"
        del opened[:]
        rc, out, err = run_main(tune, ["worker", "--storage", by_hand, "--trials", "1"] + common)
        check(rc == 0 and opened == [by_hand] and secret not in out + err,
              f"worker --storage URL (by hand) opens that URL and completes a trial (exit {rc}, opened "
              f"{[tune.mask_url(u) if hasattr(tune, 'mask_url') else u for u in opened]}): {err.strip()[-300:]}")
        from_env = f"postgresql://tuneuser:{secret}@from-env.invalid/tune"
        os.environ[ENV] = from_env
        del opened[:]
        rc, out, err = run_main(tune, ["worker", "--trials", "1"] + common)
        check(rc == 0 and opened == [from_env] and secret not in out + err,
              f"worker without --storage opens ${ENV} and completes a trial (exit {rc}, opened "
              f"{len(opened)} URL(s)): {err.strip()[-300:]}")
    finally:
        os.environ.pop(ENV, None)
        if old_env is not None:
            os.environ[ENV] = old_env
        tune.storage_for, tune.subprocess = real_storage_for, subprocess


def check_spawned(what, url, secret):
    calls = FakePopen.calls
    if not check(len(calls) == 2, f"{what}: 2 worker processes started (got {len(calls)})"):
        return
    for argv, env in calls:
        check(secret not in " ".join(argv) and "worker" in argv,
              f"{what}: the worker's command line holds no password: {' '.join(argv[1:])}")
        check(env is not None and env.get(ENV) == url,
              f"{what}: the worker gets the storage URL in its environment ({ENV})")


def descendants(pid):
    """{pid: cmdline} of the processes whose parent is `pid` (from /proc)."""
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    found[int(d)] = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            continue
    return found


def check_real_workers(tune_py, mlsys, work, train):
    """4. `tune.py worker -j 2` for real: the workers find the study, and their command lines
    (what ps shows) do not hold the storage URL."""
    import optuna
    url = "sqlite:///" + os.path.join(work, "real-secret-path.db")
    cmd = [sys.executable, tune_py, "worker", "-j", "2", "--trials", "1", "--storage", url, "--study", "real",
           "--train", train, "--mlsys", mlsys, "--seconds", "0.2", "--threads", "1", "--pruner", "none",
           "--base", os.path.join(work, "base.yaml"), "--space", os.path.join(work, "space.yaml")]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=work)
    seen = {}
    deadline = time.time() + 240
    # A child between fork and exec still shows its parent's argv in /proc/PID/cmdline (the
    # parent's own command line, which holds --storage by hand): that is not a worker's.
    parent = " ".join(cmd)
    while p.poll() is None and time.time() < deadline:
        for pid, line in descendants(p.pid).items():
            if "tune" in line and "worker" in line and line.strip() != parent:
                seen[pid] = line
        time.sleep(0.05)
    if p.poll() is None:
        p.kill()
    out = p.communicate()[0]
    if not check(p.returncode == 0, f"tune.py worker -j 2 on SQLite exits 0 (exit {p.returncode}): {out.strip()[-600:]}"):
        return
    if seen:
        for pid, line in sorted(seen.items()):
            check(url not in line and "real-secret-path" not in line,
                  f"worker process {pid}'s command line holds no storage URL: {line.strip()}")
    else:
        say("note: no worker process was caught running to read its /proc/PID/cmdline (argv checked in step 3)")
    ts = optuna.load_study(study_name="real", storage=url).get_trials(deepcopy=False)
    done = {t.user_attrs.get("worker") for t in ts if t.state.name == "COMPLETE"}
    check(len(done) == 2, f"both workers of -j 2 found the study and completed a trial "
                          f"({len(done)} workers with complete trials: {sorted(map(str, done))})")


def write_setup(mlsys, work):
    """base.yaml (the binary's own complete config, so the test does not depend on configs/ matching
    the binary) and space.yaml (one positive float key of it, over [v/2, 2v])."""
    import yaml
    r = subprocess.run([mlsys, "solve", "--print-config"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"mlsys solve --print-config exited {r.returncode}: {r.stderr.strip()}")
    with open(os.path.join(work, "base.yaml"), "w") as f:
        f.write(r.stdout)

    def floats(d, path=()):
        for k, v in (d or {}).items():
            if isinstance(v, dict):
                yield from floats(v, path + (str(k),))
            elif isinstance(v, float) and v > 0:
                yield ".".join(path + (str(k),)), v
    key, v = next(floats(yaml.safe_load(r.stdout)))
    with open(os.path.join(work, "space.yaml"), "w") as f:
        f.write(f"{key}: {{type: float, range: [{v / 2!r}, {v * 2!r}], log: true}}\n")


def main():
    ap = tune_test_util.arg_parser(__doc__)
    ap.add_argument("--tune", default=os.path.join(ROOT, "bench", "tune.py"), help="the tune.py to check")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    why = tune_test_util.missing_packages(sys.executable)
    if why:
        say(f"SKIPPED: {why}")
        return SKIP
    tune_py, mlsys = os.path.abspath(args.tune), os.path.abspath(args.mlsys)
    work = tempfile.mkdtemp(prefix="mlsys-tune-secrets-")
    train, error = tune_test_util.make_train(mlsys, work)
    if error:
        check(False, error)
        steps = []
    else:
        write_setup(mlsys, work)
        tune = load_tune(tune_py)
        steps = [("1. masking helper", lambda: check_mask(tune)),
                 ("2. runs against no server", lambda: check_runs(tune_py, mlsys, work, train)),
                 ("3. in-process: messages, worker argv and environment",
                  lambda: check_in_process(tune, mlsys, work, train)),
                 ("4. real workers", lambda: check_real_workers(tune_py, mlsys, work, train))]
    return tune_test_util.run_steps(steps, work, args.keep, failures, say, check)


if __name__ == "__main__":
    sys.exit(main())
