"""Shared set-up of the Python module's tests (tests/CMakeLists.txt runs them: Python.pytest).
The module comes from PYTHONPATH (the build's python/ directory, or an installed package); the
command line from MLSYS_BIN; the shared benchmarks from MLSYS_SHARED_DIR (tests that need them
skip with a message when it is absent)."""
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "instances", "examples")


@pytest.fixture(scope="session")
def mlsys_bin():
    b = os.environ.get("MLSYS_BIN", os.path.join(ROOT, "build", "release", "mlsys"))
    if not os.path.exists(b):
        pytest.skip(f"no mlsys binary at {b} (set MLSYS_BIN)")
    return b


@pytest.fixture(scope="session")
def shared_benchmarks():
    d = os.environ.get("MLSYS_SHARED_DIR", os.path.join(os.path.dirname(ROOT), "shared"))
    bench = os.path.join(d, "benchmarks")
    if not os.path.isdir(bench):
        pytest.skip(f"the shared benchmarks are absent ({bench})")
    return sorted(os.path.join(bench, f) for f in os.listdir(bench) if f.endswith(".json"))


def example(name):
    return os.path.join(EXAMPLES, name)
