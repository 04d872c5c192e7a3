"""mlsys: schedule search for the MLSys 2026 graph-scheduling problem, from Python.

    import mlsys
    p = mlsys.Problem.from_file("instances/examples/ex5.json")   # or Problem.from_dict(d)
    r = mlsys.solve(p, seconds=2, threads=2)                      # the GIL is released meanwhile
    print(r.latency, r.bound, r.gap, r.stop_reason)
    ev = mlsys.evaluate(p, r.schedule.to_dict())                  # every violation, not only the first
    print(mlsys.bound(p))

The same C++ library as the `mlsys` command line (engine/search/solve.h): problems and schedules
are read by its readers (a dict is checked exactly as a file is; bad input raises
mlsys.InputError, a ValueError naming the field and index), evaluate() is the full evaluator,
bound() the lower bound, solve() the search. Ctrl-C during solve() stops the search and returns
the best schedule so far (stop_reason "signal").
"""
from dataclasses import dataclass, field
import os
from typing import Callable, Dict, Iterable, List, Optional, Union

from ._mlsys import (  # noqa: F401  (the compiled core)
    Improvement,
    InputError,
    Problem,
    Schedule,
    SolveResult,
    __version__,
)
from . import _mlsys

__all__ = ["Problem", "Schedule", "Evaluation", "Violation", "Improvement", "SolveResult", "InputError",
           "evaluate", "bound", "solve", "__version__"]

def _problem_from_onnx(path: Union[str, os.PathLike], dims: Optional[Dict[str, int]] = None,
                       skip_unsupported: bool = False, **accelerator) -> Problem:
    """A problem from an ONNX model, lowered as `mlsys import` does (engine/onnx/README.md): `dims`
    binds the model's symbolic dims ({"batch": 1}); `skip_unsupported` bridges unsupported nodes
    as Pointwise ops; `accelerator` sets the cost model's parameters (capacity, bandwidth, native,
    matmul_throughput, pointwise_throughput). The problem's op_names are the model's node names.
    Needs Debian's python3-onnx. A model the importer cannot lower raises InputError."""
    try:
        import mlsys_onnx
    except ImportError as e:
        raise ImportError(f"mlsys.Problem.from_onnx needs the importer mlsys_onnx and Debian's python3-onnx: {e}") from e
    try:
        d, _ = mlsys_onnx.import_model(os.fspath(path), dims=dims, skip_unsupported=skip_unsupported,
                                       accelerator=accelerator or None)
    except mlsys_onnx.OnnxImportError as e:
        raise InputError(str(e)) from None
    return Problem.from_dict(d, os.path.splitext(os.path.basename(os.fspath(path)))[0])


Problem.from_onnx = staticmethod(_problem_from_onnx)

Model = Optional[Dict[str, str]]  # model options, e.g. {"k_limit": "reduction"} (README "Model options")


@dataclass
class Violation:
    rule: str                 # the spec's rule, e.g. "V9" (as `mlsys evaluate` names it)
    subgraph: Optional[int]   # None: the schedule as a whole
    reason: str


@dataclass
class Evaluation:
    valid: bool
    total: Optional[float]                     # None for an invalid schedule
    subgraph_latencies: List[float]            # empty for an invalid schedule
    violations: List[Violation] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    model: str = ""


def _problem(p: Union[Problem, dict, str, os.PathLike]) -> Problem:
    if isinstance(p, Problem):
        return p
    if isinstance(p, dict):
        return Problem.from_dict(p)
    if isinstance(p, (str, os.PathLike)):
        return Problem.from_file(os.fspath(p))
    raise TypeError(f"expected an mlsys.Problem, a dict or a path, not {type(p).__name__}")


def _schedule(p: Problem, s: Union[Schedule, dict, str, os.PathLike]) -> Schedule:
    if isinstance(s, Schedule):
        # A schedule read for another Problem object is read again for this one (checked against
        # it, as `mlsys evaluate P.json S.json` reads any schedule file against any problem).
        return s if s.problem is p else Schedule.from_json(p, s.to_json())
    if isinstance(s, dict):
        return Schedule.from_dict(p, s)
    if isinstance(s, (str, os.PathLike)):
        return Schedule.from_file(p, os.fspath(s))
    raise TypeError(f"expected an mlsys.Schedule, a dict or a path, not {type(s).__name__}")


def _config(name: Optional[str]) -> Optional[str]:
    """A config path as given, else a shipped name ("contest") from the package's configs/."""
    if name is None or os.path.exists(name):
        return name
    shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs",
                           name if name.endswith(".yaml") else name + ".yaml")
    return shipped if os.path.exists(shipped) else name


def evaluate(problem, schedule=None, model: Model = None) -> Evaluation:
    """Evaluates a schedule: evaluate(schedule) or evaluate(problem, schedule), where the schedule
    is an mlsys.Schedule, a dict in the contest's format, or a path. Every violation is listed."""
    if schedule is None:
        if not isinstance(problem, Schedule):
            raise TypeError("evaluate(schedule) needs an mlsys.Schedule; otherwise call evaluate(problem, schedule)")
        s = problem
    else:
        p = _problem(problem)
        s = _schedule(p, schedule)
    d = _mlsys._evaluate(s, model)
    return Evaluation(valid=d["valid"], total=d["total"], subgraph_latencies=list(d["subgraph_latencies"]),
                      violations=[Violation(v["rule"], v["subgraph"], v["reason"]) for v in d["violations"]],
                      warnings=list(d["warnings"]), model=d["model"])


def bound(problem, model: Model = None, seconds: float = 10) -> float:
    """A lower bound on the latency of every valid schedule: the value `mlsys bound -s SECONDS`
    prints (past the budget the rest of the graph gets its quick floors). Ctrl-C stops it and
    raises KeyboardInterrupt."""
    if not (0 < seconds <= 1e9):
        raise ValueError(f"bound(seconds={seconds!r}): expected a budget in (0, 1e9]")
    return _mlsys._bound(_problem(problem), model, seconds)


def solve(problem, seconds: Optional[float] = None, threads: Optional[int] = None, seed: Optional[int] = None,
          config: Optional[str] = None, set: Iterable[str] = (), model: Model = None,
          callback: Optional[Callable[[Improvement], Optional[bool]]] = None,
          log: Optional[Callable[[str], None]] = None, init=None, target: Optional[float] = None,
          stall_seconds: Optional[float] = None, max_evals: Optional[int] = None, exact: bool = False) -> SolveResult:
    """Searches for the lowest-latency schedule, in memory (no file is written).

    seconds      wall-clock budget (default: the config's, else the contest limit for the size)
    threads      worker threads (default: the config's, else every CPU)
    seed         random seed (with threads=1 and max_evals, runs repeat exactly)
    config       a YAML config: a path, or a shipped name such as "contest" (configs/)
    set          config overrides, e.g. ["sa.t0=0.001"] (as the CLI's --set)
    model        model options, e.g. {"k_limit": "reduction"}
    callback     called with each new best (an mlsys.Improvement), in order, one call at a time;
                 returning False stops the run (stop_reason "callback"); an exception stops it
                 and is raised here
    log          called with each progress line (default: no progress output)
    init         a schedule to start from (checked; if invalid, a warning in the log and the
                 usual start)
    target, stall_seconds, max_evals, exact: as the CLI's --target, --stall-seconds,
                 --max-evals, --exact
    """
    for name, value, ok, want in (("seconds", seconds, lambda v: 0 < v <= 1e9, "a budget in (0, 1e9]"),
                                  ("threads", threads, lambda v: v >= 0, "0 (every CPU) or more"),
                                  ("max_evals", max_evals, lambda v: v > 0, "a count > 0"),
                                  ("target", target, lambda v: 0 < v < float("inf"), "a latency > 0 (as the CLI's --target)"),
                                  ("stall_seconds", stall_seconds, lambda v: 0 < v < float("inf"), "seconds > 0")):
        if value is not None and not ok(value):
            raise ValueError(f"solve({name}={value!r}): expected {want}")
    p = _problem(problem)
    init_s = None if init is None else _schedule(p, init)
    return _mlsys._solve(p, seconds=seconds, threads=threads, seed=seed, config=_config(config), set=list(set), model=model,
                         callback=callback, log=log, init=init_s, target=target, stall_seconds=stall_seconds,
                         max_evals=max_evals, exact=exact)
