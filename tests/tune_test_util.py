"""Shared by tests/tune_pg_test.py, tests/tune_secrets_test.py and tests/tune_output_test.py (run as
`python3 tests/<file>.py`, so this folder is on sys.path): the command line they take, the packages
they need, and tune.py loaded and run in-process."""
import argparse
import contextlib
import importlib.util
import io
import traceback

import harness  # bench/harness.py: the caller has put bench/ on sys.path

PACKAGES = ["optuna", "yaml", "psycopg2", "sqlalchemy"]


def arg_parser(doc):
    """An ArgumentParser showing doc, with the --mlsys option both tests take."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mlsys", required=True, help="the mlsys binary")
    return ap


def missing_packages(python, packages=PACKAGES):
    """Re-exec under a python3 that has `packages` when this one lacks them (harness.reexec_for).
    Returns None once they import (optuna then logs warnings only), else the skip message."""
    missing = harness.reexec_for(packages, "the tuning test")
    if missing:
        return (f"{python} cannot import {', '.join(missing)} "
                "(apt-get install python3-optuna python3-yaml python3-sqlalchemy python3-psycopg2)")
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return None


def load_tune(path):
    """The tune.py at `path` imported as a module (tune_under_test)."""
    spec = importlib.util.spec_from_file_location("tune_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_main(tune, argv):
    """tune.main(argv) in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = tune.main(argv)
        except SystemExit as e:  # argparse
            rc = e.code
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            rc = "exception"
    return rc, out.getvalue(), err.getvalue()


def run_steps(steps, work, keep, failures, say, check):
    """Runs each (name, step) (a step that raises is a failed check; the others still run), removes
    `work` unless `keep`, and returns the exit code: 1 with a list of the failed checks, else 0."""
    import shutil
    try:
        for name, step in steps:
            say(f"--- {name}")
            try:
                step()
            except Exception:  # noqa: BLE001
                check(False, f"{name} raised:\n{traceback.format_exc()}")
    finally:
        if keep:
            say(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        say(f"FAILED: {len(failures)} checks:\n  - " + "\n  - ".join(f.splitlines()[0] for f in failures))
        return 1
    say("PASSED")
    return 0


def make_train(mlsys, work):
    """WORK/train with one generated graph (random, 8 ops, seed 1): (its path, None), or (path,
    the error message) when `mlsys generate` fails."""
    import os
    import subprocess
    train = os.path.join(work, "train")
    os.makedirs(train, exist_ok=True)
    r = subprocess.run([mlsys, "generate", "--family", "random", "--size", "8", "--seed", "1",
                        "--output", os.path.join(train, "random-1.json")], capture_output=True, text=True)
    return train, (None if r.returncode == 0 else f"mlsys generate exited {r.returncode}: {r.stderr.strip()}")


def checker(name):
    """(say, check, failures) of one test script: say prints "NAME: msg"; check(ok, what) prints
    ok/FAIL and records the failures; returns ok."""
    failures = []

    def say(msg):
        print(f"{name}: {msg}", flush=True)

    def check(ok, what):
        say(f"{'ok' if ok else 'FAIL'}: {what}")
        if not ok:
            failures.append(what)
        return ok

    return say, check, failures


class FakePopen:
    """subprocess.Popen for the worker processes: records argv and env, starts nothing."""
    calls = []

    def __init__(self, argv, **kw):
        FakePopen.calls.append((list(argv), kw.get("env")))
        self.returncode = None

    def wait(self, timeout=None):
        self.returncode = 0
        return 0

    def poll(self):
        return self.returncode

    def terminate(self):
        pass
