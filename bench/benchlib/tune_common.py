"""bench/tune.py: its errors, constants, the storage URL's masking (and the optuna-dashboard
command line without the password) and small helpers."""
import importlib
import os
import re
import shlex
import shutil
import sys
import warnings
from urllib.parse import unquote, unquote_plus

from .common import ROOT, instance_paths, parse_seeds, reexec_for, stem
from .mlsys import Mlsys, MlsysError

DEFAULT_SPACE = os.path.join(ROOT, "configs", "tune-space.yaml")
DEFAULT_BASE = os.path.join(ROOT, "configs", "default.yaml")
DEFAULT_STUDY = "mlsys-tune"
FAIL_STREAK = 5  # a worker stops after this many failed trials in a row (a broken binary or config)
STORAGE_ENV = "MLSYS_TUNE_STORAGE"  # the storage URL when --storage is absent (how -j N passes it to its workers)


class _Lazy:
    """A module imported on first use: optuna and yaml, which need_optuna checks (and re-executes
    under Debian's python3 for) before anything uses them."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


optuna, yaml = _Lazy("optuna"), _Lazy("yaml")


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


def dashboard_url(url):
    """The storage URL for a command line: no password (libpq reads ~/.pgpass or PGPASSWORD)."""
    shown = mask_url(url).replace(":***@", "@", 1)
    if "?" in shown:
        head, query = shown.split("?", 1)
        keep = [q for q in query.split("&") if not q.lower().startswith("password=")]
        shown = head + ("?" + "&".join(keep) if keep else "")
    return shown


def dashboard_hint(url):
    """The closing line naming the optuna-dashboard command that browses the study."""
    shown = dashboard_url(url)
    hint = f"browse the study: optuna-dashboard {shlex.quote(shown)}"
    if shown != url:
        hint += " (the password as libpq finds it: ~/.pgpass or PGPASSWORD)"
    if not shutil.which("optuna-dashboard"):
        hint += "; optuna-dashboard is a pip package, not in Debian: pip install optuna-dashboard"
    return hint


def need_optuna(storage):
    """Imports optuna and yaml (re-executing under Debian's python3 if that one has more of the
    modules this run wants, pictures and PostgreSQL included)."""
    required = ["optuna", "yaml"] + (["psycopg2"] if (storage or "").startswith("postgresql") else [])
    missing = reexec_for(required + ["matplotlib", "sklearn"], "Optuna tunes the config")
    if set(missing) & set(required):
        raise TuneError(f"{sys.executable} cannot import {', '.join(m for m in missing if m in required)}: "
                        "apt-get install python3-optuna python3-yaml python3-psycopg2 (Debian packages)")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


def mlsys_of(path):
    """The binary of --mlsys, or TuneError."""
    try:
        return Mlsys(path)
    except MlsysError as e:
        raise TuneError(f"--mlsys {e}") from None


def list_instances(folder, flag):
    if not folder:
        raise TuneError(f"{flag} is required")
    if not os.path.isdir(folder):
        raise TuneError(f"{flag} {folder}: no such folder")
    paths = instance_paths(folder)
    if not paths:
        raise TuneError(f"{flag} {folder}: no *.json instances (make some with: bench/tune.py make-sets)")
    return {stem(p): p for p in paths}


def seeds_of(text, flag="--seeds"):
    """'3' means seeds 1..3; '1,5,9' (or 1-3, or '1 5 9') lists them."""
    try:
        return parse_seeds(text, count=True)
    except ValueError:
        raise TuneError(f"{flag} {text!r}: expected a count N (seeds 1..N) or a list like 1,5,9") from None


def read_text(path, flag):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        raise TuneError(f"{flag} {path}: {e.strerror}") from None


def default_threads(jobs):
    return max(1, len(os.sched_getaffinity(0)) // max(1, jobs))

