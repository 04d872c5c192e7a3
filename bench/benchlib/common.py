"""Paths, constants and small helpers shared by the scripts of bench/ (Python standard library only)."""
import csv
import hashlib
import importlib.util
import json
import math
import os
import re
import statistics
import subprocess
import sys

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
SHARED_BENCHMARKS = os.path.join(SHARED, "benchmarks")  # the contest instances, when this checkout has them
SHARED_TARGETS = os.path.join(SHARED, "targets.csv")  # benchmark,time_limit_s,lower_bound,contest_best,...
DEFAULT_MLSYS = os.path.join(ROOT, "build", "release", "mlsys")
BUILD_HINT = "build it first: cmake --preset release && cmake --build --preset release"

# The generator's families (`mlsys generate --help`), in the order every script lists them.
FAMILIES = ["transformer", "mixer", "gemm-chain", "cnn", "random", "odd-k", "shared-weight"]

DEBIAN_PYTHON = "/usr/bin/python3"


def reexec_for(modules, why):
    """Returns the modules of `modules` this interpreter cannot import. When Debian's
    /usr/bin/python3 can import more of them (a pyenv or venv python3 earlier on PATH hides the
    Debian packages), re-executes the running script under it instead, once, with a note: so call
    it at the start, with every module the run will want."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if (not missing or os.environ.get("MLSYS_REEXECED") or not os.access(DEBIAN_PYTHON, os.X_OK)
            or os.path.realpath(sys.executable) == os.path.realpath(DEBIAN_PYTHON)):
        return missing
    probe = subprocess.run([DEBIAN_PYTHON, "-c", "import importlib.util, sys; print(sum(importlib.util.find_spec(m) "
                            "is None for m in sys.argv[1:]))"] + missing, capture_output=True, text=True)
    if probe.returncode != 0 or int(probe.stdout.strip() or len(missing)) >= len(missing):
        return missing
    print(f"{os.path.basename(sys.argv[0])}: {sys.executable} cannot import {', '.join(missing)} ({why}); "
          f"running under {DEBIAN_PYTHON}, which can", file=sys.stderr, flush=True)
    os.environ["MLSYS_REEXECED"] = "1"
    os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON, os.path.abspath(sys.argv[0])] + sys.argv[1:])


# ---------------------------------------------------------------- seeds, files, instances

_INT_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$")


def parse_seeds(text, count=False):
    """The one grammar for seed (and size) lists: items separated by commas and/or spaces, each
    N or A-B (A..B inclusive): "1,2,3", "1-3", "1 2 3", "1-3,7". With count=True a lone N means
    1..N (the scripts whose --seeds is a count). Duplicates are dropped, the order kept.
    ValueError with a message when the text is not of this form."""
    items = [t for t in re.split(r"[,\s]+", str(text).strip()) if t]
    if not items:
        raise ValueError(f"{text!r}: no seed given")
    if count and len(items) == 1 and items[0].isdigit():
        n = int(items[0])
        if n < 1:
            raise ValueError(f"{text!r}: a count of seeds must be >= 1")
        return list(range(1, n + 1))
    out = []
    for item in items:
        m = _INT_ITEM.match(item)
        if not m:
            raise ValueError(f"{text!r}: {item!r} is neither N nor A-B")
        a, b = int(m.group(1)), int(m.group(2) if m.group(2) is not None else m.group(1))
        if b < a:
            raise ValueError(f"{text!r}: the range {item} is empty")
        out.extend(range(a, b + 1))
    return list(dict.fromkeys(out))


def file_sha1(path):
    """The SHA-1 of a file's bytes (hex)."""
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def natural_key(path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", os.path.basename(path))]


def instance_paths(folder):
    """The *.json problems of `folder` in natural order (mlsys-2026-2 before mlsys-2026-10); []
    when the folder is absent (the callers say so and skip)."""
    if not folder or not os.path.isdir(folder):
        return []
    return sorted((os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".json")), key=natural_key)


def load_problem(path):
    """The problem's JSON object, or None when the file is not a readable problem."""
    try:
        with open(path) as f:
            d = json.load(f)
        return d if isinstance(d, dict) and "op_types" in d else None
    except (OSError, ValueError):
        return None


def count_ops(path):
    prob = load_problem(path)
    return len(prob["op_types"]) if prob is not None else None


def load_targets(path):
    """targets.csv as {benchmark: row}; {} when absent."""
    if not path or not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        return {r["benchmark"]: r for r in csv.DictReader(f) if r.get("benchmark")}


def contest_limit(n_ops):
    """The contest time limit by instance size (mirrors engine/search/solve.cpp contestLimitSeconds)."""
    for n, s in ((5, 2), (20, 5), (32, 15), (63, 30), (103, 60)):
        if n_ops <= n:
            return float(s)
    return 120.0


def oversubscribed(jobs, threads):
    """The warning when `jobs` solves of `threads` threads (0: all) at a time exceed the cores, else None."""
    cores = len(os.sched_getaffinity(0))
    total = jobs * (threads or cores)
    if total > cores:
        return (f"warning: -j {jobs} x --threads {threads or cores} = {total} threads on {cores} cores: "
                "runs compete for the CPU (fewer evaluations than alone, noisier results)")
    return None


# ---------------------------------------------------------------- numbers and tables


def fnum(x):
    """x as a finite float, else None."""
    try:
        v = float(x)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(v, nd=4):
    if v is None or v == "":
        return "—"
    if isinstance(v, float):
        if v == int(v) and abs(v) >= 100:
            return f"{int(v)}"
        return f"{v:.{nd}f}" if abs(v) < 100 else f"{v:.10g}"
    return str(v)


def write_csv(path, cols, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})
