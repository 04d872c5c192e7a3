"""Shared by tests/tune_pg_test.py and tests/tune_secrets_test.py (run as `python3 tests/<file>.py`,
so this folder is on sys.path): the command line both take and the packages both need."""
import argparse

import harness  # bench/harness.py: the caller has put bench/ on sys.path

PACKAGES = ["optuna", "yaml", "psycopg2", "sqlalchemy"]


def arg_parser(doc):
    """An ArgumentParser showing doc, with the --mlsys option both tests take."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mlsys", required=True, help="the mlsys binary")
    return ap


def missing_packages(python):
    """Re-exec under a python3 that has PACKAGES when this one lacks them (harness.reexec_for).
    Returns None once they import (optuna then logs warnings only), else the skip message."""
    missing = harness.reexec_for(PACKAGES, "the tuning test")
    if missing:
        return (f"{python} cannot import {', '.join(missing)} "
                "(apt-get install python3-optuna python3-yaml python3-psycopg2)")
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return None
