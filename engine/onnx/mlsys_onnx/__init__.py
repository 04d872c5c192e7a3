"""mlsys_onnx: import an ONNX model as an MLSys 2026 scheduling problem (the contest's JSON).

    import mlsys_onnx
    problem, report = mlsys_onnx.import_model("resnet18.onnx", dims={"batch": 1})
    open("resnet18.json", "w").write(mlsys_onnx.to_json(problem))

README.md beside this package lists the lowering rules and the accelerator model.
"""
import os
import time

from .accel import Accelerator
from .emit import check_problem, to_json
from .errors import ImportError_, OnnxImportError, show
try:  # Debian's python3-onnx (and numpy): without them the package still loads (--help works)
    from .graph import MAX_DIM_VALUE, Graph, bind_dims, check_model, load_model, opset_of
    from .lower import Lowering
    from .validate import check_nodes
    _MISSING = None
except ModuleNotFoundError as _e:
    if _e.name not in ("onnx", "numpy") and not (_e.name or "").startswith(("onnx.", "numpy.")):
        raise
    import sys as _sys
    _MISSING = (f"{_sys.executable} cannot import '{_e.name}': install Debian's python3-onnx "
                "(apt-get install python3-onnx, or bash .ci/install-deps --models), or set MLSYS_PYTHON "
                "to a Python 3 that has it")

__all__ = ["import_model", "to_json", "summary", "Accelerator", "OnnxImportError", "ImportError_"]
__version__ = "0.1.0"


def _check_dims(dims):
    if dims is None:
        return {}
    if not isinstance(dims, dict):
        raise OnnxImportError(f"dims must be a dict NAME -> positive int, not {type(dims).__name__}")
    out = {}
    for k, v in dims.items():
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise OnnxImportError(f"dim '{show(k)}' must be a positive integer, not {v!r}")
        if v > MAX_DIM_VALUE:
            raise OnnxImportError(f"dim '{show(k)}' = {v} is too large: a dim is at most 2^63 - 1 (and a tensor of "
                                  "the problem at most 2^24 rows and columns)")
        out[str(k)] = v
    return out


def import_model(model, dims=None, skip_unsupported=False, accelerator=None, name=None):
    """Lower an ONNX model (a path or an onnx.ModelProto) to a contest problem.

    dims: symbolic dim name -> value (every dim_param of the graph inputs must be bound; an
    unnamed dim is named INPUT:AXIS). skip_unsupported: bridge unsupported nodes as Pointwise ops
    instead of failing. accelerator: an Accelerator or a dict of some of its fields.
    Returns (problem dict, report dict); raises OnnxImportError (a ValueError) on bad input.
    """
    if _MISSING:
        raise OnnxImportError(_MISSING)
    t0 = time.perf_counter()
    acc = Accelerator.from_dict(accelerator)
    dims = _check_dims(dims)
    m, mname = load_model(model)
    checker = check_model(m, mname)
    check_nodes(m, opset_of(m))
    used, unused = bind_dims(m, dims)
    g = Graph(m, mname)
    low = Lowering(g, acc, bool(skip_unsupported))
    roots = low.run()
    stem = os.path.splitext(mname)[0]
    meta = {"model": mname, "name": name or stem, "opset": g.opset, "dims": used,
            "accelerator": acc.to_dict(), "skipped": low.skipped, "folded_batchnorm": low.folded_bn}
    problem = low.t.finish(roots, meta)
    if not problem["op_types"]:
        raise OnnxImportError(f"'{show(mname)}' lowers to no MatMul or Pointwise op (is every output a constant?)")
    check_problem(problem)
    warnings = (([checker] if checker else []) + list(low.warnings)
                + [f"--dim {show(k)} matches no symbolic dim of the graph inputs" for k in unused])
    types = problem["op_types"]
    produced = {o[0] for o in problem["outputs"]}
    read = {t for ins in problem["inputs"] for t in ins}
    report = {
        "model": mname, "ops": len(types), "tensors": len(problem["widths"]),
        "matmul": types.count("MatMul"), "pointwise": types.count("Pointwise"),
        "cuts": len(problem["onnx"]["cuts"]),
        "graph_inputs": len(set(range(len(problem["widths"]))) - produced),
        "graph_outputs": len(produced - read),
        "onnx_nodes": len(g.nodes), "skipped": low.skipped, "folded_batchnorm": len(low.folded_bn),
        "warnings": warnings, "seconds": time.perf_counter() - t0,
    }
    return problem, report


def summary(report):
    """The report as the lines the CLI prints on stderr."""
    r = report
    lines = [f"{show(r['model'])}: {r['onnx_nodes']} ONNX nodes -> {r['ops']} ops ({r['matmul']} MatMul, "
             f"{r['pointwise']} Pointwise), {r['tensors']} tensors ({r['graph_inputs']} graph inputs, "
             f"{r['graph_outputs']} graph outputs), {r['cuts']} cut edges, {len(r['skipped'])} bridged nodes, "
             f"{r['folded_batchnorm']} BatchNormalization folded; {r['seconds']:.2f} s"]
    for s in r["skipped"]:
        lines.append(f"bridged: node '{show(s['node'])}' (#{s['index']}, op {show(s['op_type'])}): {s['reason']}")
    lines.extend(f"warning: {show(w, 1000)}" for w in r["warnings"])
    return lines
