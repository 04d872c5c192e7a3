"""Constant folding with numpy: the shape arithmetic of exported models (Shape -> Gather ->
Concat -> Reshape, masks built with Range/Trilu/Where, ...). A node is folded when all its inputs
have known values and the result is small; otherwise its outputs stay unknown (the lowering still
treats the outputs of an all-constant node as constants, without their values)."""
import math

import numpy as np
from onnx import helper, numpy_helper

try:  # onnx >= 1.13
    _to_np_dtype = helper.tensor_dtype_to_np_dtype
except AttributeError:  # onnx 1.12
    from onnx import mapping as _mapping

    def _to_np_dtype(t):
        return _mapping.TENSOR_TYPE_TO_NP_TYPE[t]

MAX_ELEMENTS = 1 << 22  # no folded value larger than this (4M elements)


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _axes(node, a, ins, idx, default=None):
    """Axes given as an attribute (older opsets) or as input idx (newer ones)."""
    if "axes" in a:
        return [int(x) for x in a["axes"]]
    if len(ins) > idx and ins[idx] is not None:
        return [int(x) for x in np.asarray(ins[idx]).reshape(-1)]
    return default


def _constant(node, a, ins):
    if "value" in a:
        return [numpy_helper.to_array(a["value"])]
    for key, dt in (("value_float", np.float32), ("value_int", np.int64)):
        if key in a:
            return [np.array(a[key], dtype=dt)]
    for key, dt in (("value_floats", np.float32), ("value_ints", np.int64)):
        if key in a:
            return [np.array(list(a[key]), dtype=dt)]
    return None


def _slice(node, a, ins):
    x = ins[0]
    if "starts" in a:  # opset < 10
        starts, ends, axes, steps = a["starts"], a["ends"], a.get("axes"), None
    else:
        starts, ends = ins[1].tolist(), ins[2].tolist()
        axes = ins[3].tolist() if len(ins) > 3 and ins[3] is not None else None
        steps = ins[4].tolist() if len(ins) > 4 and ins[4] is not None else None
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    sl = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        big = np.iinfo(np.int64).max // 2
        s, e = max(min(int(s), big), -big), max(min(int(e), big), -big)
        sl[int(ax)] = slice(s, e, int(st))
    return [x[tuple(sl)]]


def _div(a, b):
    if np.issubdtype(np.asarray(a).dtype, np.integer):
        return (np.trunc(np.asarray(a) / np.asarray(b))).astype(np.asarray(a).dtype)
    return np.asarray(a) / np.asarray(b)


def _reshape(node, a, ins):
    x, shape = ins[0], [int(s) for s in ins[1]]
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return [x.reshape(shape)]


def _flatten(node, a, ins):
    x, ax = ins[0], a.get("axis", 1)
    ax = ax + x.ndim if ax < 0 else ax
    return [x.reshape(int(np.prod(x.shape[:ax], dtype=np.int64)), -1)]


def _gather(node, a, ins):
    return [np.take(ins[0], ins[1].astype(np.int64), axis=a.get("axis", 0))]


def _unsqueeze(node, a, ins):
    x, axes = ins[0], _axes(node, a, ins, 1)
    r = x.ndim + len(axes)
    for ax in sorted(ax % r for ax in axes):
        x = np.expand_dims(x, ax)
    return [x]


def _squeeze(node, a, ins):
    axes = _axes(node, a, ins, 1)
    x = ins[0]
    return [np.squeeze(x) if axes is None else np.squeeze(x, axis=tuple(ax % x.ndim for ax in axes))]


def _trilu(node, a, ins):
    k = int(ins[1]) if len(ins) > 1 and ins[1] is not None else 0
    return [np.triu(ins[0], k) if a.get("upper", 1) else np.tril(ins[0], k)]


def _reduce(fn):
    def f(node, a, ins):
        axes = _axes(node, a, ins, 1)
        keep = bool(a.get("keepdims", 1))
        return [fn(ins[0], axis=None if not axes else tuple(axes), keepdims=keep)]
    return f


def _range(node, a, ins):
    return [np.arange(ins[0].item(), ins[1].item(), ins[2].item()).astype(ins[0].dtype)]


def _split(node, a, ins):
    x, ax = ins[0], a.get("axis", 0)
    sizes = a.get("split") or (ins[1].tolist() if len(ins) > 1 and ins[1] is not None else None)
    if sizes is None:
        return list(np.array_split(x, len(node.output), axis=ax))
    return list(np.split(x, np.cumsum(sizes)[:-1], axis=ax))


_BIN = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": _div, "Pow": np.power,
        "Equal": np.equal, "Less": np.less, "Greater": np.greater, "LessOrEqual": np.less_equal,
        "GreaterOrEqual": np.greater_equal, "And": np.logical_and, "Or": np.logical_or,
        "Xor": np.logical_xor, "Mod": np.mod, "BitShift": None}
_UN = {"Neg": np.negative, "Abs": np.abs, "Not": np.logical_not, "Sqrt": np.sqrt, "Floor": np.floor,
       "Ceil": np.ceil, "Relu": lambda x: np.maximum(x, 0), "Exp": np.exp, "Log": np.log,
       "Reciprocal": lambda x: 1 / x, "Sign": np.sign, "Round": np.round}

OPS = {
    "Constant": _constant,
    "Identity": lambda n, a, i: [i[0]],
    "Dropout": lambda n, a, i: [i[0]],
    "Cast": lambda n, a, i: [i[0].astype(_to_np_dtype(a["to"]))],
    "CastLike": lambda n, a, i: [i[0].astype(i[1].dtype)],
    "Reshape": _reshape,
    "Flatten": _flatten,
    "Transpose": lambda n, a, i: [np.transpose(i[0], a.get("perm"))],
    "Gather": _gather,
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Concat": lambda n, a, i: [np.concatenate([np.atleast_1d(x) for x in i], axis=a["axis"])],
    "Slice": _slice,
    "Split": _split,
    "Range": _range,
    "ConstantOfShape": lambda n, a, i: [np.full([int(s) for s in i[0]],
                                                numpy_helper.to_array(a["value"]).reshape(-1)[0]
                                                if "value" in a else np.float32(0))],
    "Expand": lambda n, a, i: [i[0] * np.ones([int(s) for s in i[1]], dtype=i[0].dtype)],
    "Tile": lambda n, a, i: [np.tile(i[0], [int(s) for s in i[1]])],
    "Where": lambda n, a, i: [np.where(i[0], i[1], i[2])],
    "Trilu": _trilu,
    "Min": lambda n, a, i: [np.minimum.reduce(np.broadcast_arrays(*i))],
    "Max": lambda n, a, i: [np.maximum.reduce(np.broadcast_arrays(*i))],
    "ReduceProd": _reduce(np.prod),
    "ReduceSum": _reduce(np.sum),
    "ReduceMax": _reduce(np.max),
    "ReduceMin": _reduce(np.min),
    "CumSum": lambda n, a, i: [np.cumsum(i[0], axis=int(i[1]))],
}
OPS.update({k: (lambda f: lambda n, a, i: [f(i[0], i[1])])(f) for k, f in _BIN.items() if f})
OPS.update({k: (lambda f: lambda n, a, i: [f(i[0])])(f) for k, f in _UN.items()})


_BROADCAST = {k for k, f in _BIN.items() if f} | {"Where", "Min", "Max"}


def _count(shape):
    return math.prod(int(s) for s in shape)


def out_size(node, ins):
    """The number of elements of the node's (first) output, computed from the input shapes
    before anything is allocated; None when it cannot be told (then it is not folded)."""
    t = node.op_type
    if t == "ConstantOfShape":
        return _count(ins[0].reshape(-1))
    if t == "Expand":
        return _count(np.broadcast_shapes(ins[0].shape, tuple(int(s) for s in ins[1].reshape(-1))))
    if t == "Tile":
        return ins[0].size * _count(ins[1].reshape(-1))
    if t == "Range":
        n = (ins[1].item() - ins[0].item()) / (ins[2].item() or 1)
        return math.ceil(n) if math.isfinite(n) else None
    if t == "Gather":
        x, idx = ins[0], np.asarray(ins[1])
        ax = int(attrs(node).get("axis", 0)) % max(x.ndim, 1)
        return x.size // x.shape[ax] * idx.size if x.ndim and x.shape[ax] else 0
    if t in _BROADCAST:
        return _count(np.broadcast_shapes(*[np.shape(x) for x in ins if x is not None]))
    return max((x.size for x in ins if x is not None), default=0)


def out_size_ok(node, ins):
    """False when the result would be too big to hold: its size (a broadcast, Expand, Tile, Range,
    ConstantOfShape, Gather) is checked before numpy allocates it."""
    if any(x is not None and x.size > MAX_ELEMENTS for x in ins):
        return False
    try:
        n = out_size(node, ins)
    except (ValueError, TypeError, IndexError, ZeroDivisionError, OverflowError):
        return False
    return n is not None and 0 <= n <= MAX_ELEMENTS


def evaluate(node, ins):
    """The node's output values from its input values (None for a missing optional input), or
    None when the op is not foldable here or numpy fails on it."""
    f = OPS.get(node.op_type)
    if f is None or node.domain not in ("", "ai.onnx") or not out_size_ok(node, ins):
        return None
    try:
        with np.errstate(all="ignore"):
            outs = f(node, attrs(node), ins)
    except Exception:  # noqa: BLE001 (a fold that fails just leaves the value unknown)
        return None
    if outs is None:
        return None
    return [np.asarray(o) for o in outs]
