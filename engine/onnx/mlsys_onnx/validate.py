"""Checks of the model before and during the lowering: what onnx.checker would refuse and the
lowering (or ONNX shape inference, which divides by a zero stride) cannot survive.

sanitize_names: protobuf hands out a string field that is not valid UTF-8 as bytes; every such
name becomes a str (invalid bytes as U+FFFD). check_nodes, before shape inference: input / output
counts against the op's schema, the window attributes of convolutions and pools (strides,
dilations, kernel_shape positive, pads non-negative), group and blocksize positive, no tensor
produced twice. check_node, per live node after shape inference: the relations between shapes
and attributes that inference leaves unchecked (Conv channels and kernel, Transpose perm, Concat
axis, Slice steps, Gemm ranks).
"""
import numpy as np
from onnx import AttributeProto, defs
from google.protobuf.descriptor import FieldDescriptor

from .errors import OnnxImportError, node_label, show

STANDARD = ("", "ai.onnx")
WINDOW_OPS = {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool",
              "MaxUnpool", "DeformConv", "MaxRoiPool"}
POSITIVE_INTS = ("strides", "dilations", "kernel_shape", "pooled_shape")
NON_NEGATIVE_INTS = ("pads", "output_padding")
POSITIVE_INT = {"group": WINDOW_OPS, "blocksize": {"DepthToSpace", "SpaceToDepth"}}


def sanitize_names(msg):
    """Replace every string field of msg (recursively) that protobuf returns as bytes (invalid
    UTF-8) by its decoding with errors='replace'. Bytes fields (raw_data) are not touched."""
    for fd in msg.DESCRIPTOR.fields:
        if fd.type == FieldDescriptor.TYPE_STRING:
            if fd.label == FieldDescriptor.LABEL_REPEATED:
                vals = getattr(msg, fd.name)
                for k, v in enumerate(vals):
                    if isinstance(v, bytes):
                        vals[k] = v.decode("utf-8", errors="replace")
            else:
                v = getattr(msg, fd.name)
                if isinstance(v, bytes):
                    setattr(msg, fd.name, v.decode("utf-8", errors="replace"))
        elif fd.type == FieldDescriptor.TYPE_MESSAGE:
            if fd.label == FieldDescriptor.LABEL_REPEATED:
                for sub in getattr(msg, fd.name):
                    sanitize_names(sub)
            elif msg.HasField(fd.name):
                sanitize_names(getattr(msg, fd.name))


def _invalid(node, i, what):
    return OnnxImportError(f"{node_label(node.name or f'{node.op_type}_{i}', i, node.op_type)} is invalid: {what}")


def _check_attributes(node, i):
    """The attributes whose bad values crash ONNX shape inference (a division by a zero stride)
    or make no sense: window sizes, strides and dilations positive, pads non-negative."""
    if node.domain not in STANDARD:
        return
    for a in node.attribute:
        if node.op_type in WINDOW_OPS and a.name in POSITIVE_INTS + NON_NEGATIVE_INTS:
            low = 1 if a.name in POSITIVE_INTS else 0
            kind = "positive" if low else "non-negative"
            if a.type != AttributeProto.INTS:
                raise _invalid(node, i, f"attribute '{show(a.name)}' must be a list of {kind} integers")
            if any(v < low for v in a.ints):
                raise _invalid(node, i, f"attribute '{show(a.name)}' is {list(a.ints)}: each must be a "
                                        f"{kind} integer")
        elif node.op_type in POSITIVE_INT.get(a.name, ()):
            if a.type != AttributeProto.INT or a.i < 1:
                v = a.i if a.type == AttributeProto.INT else "not an integer"
                raise _invalid(node, i, f"attribute '{show(a.name)}' is {v}: it must be a positive integer")
        if a.type == AttributeProto.GRAPH:
            _check_subgraph(a.g)
        elif a.type == AttributeProto.GRAPHS:
            for sub in a.graphs:
                _check_subgraph(sub)


def _check_subgraph(g):
    for i, node in enumerate(g.node):
        _check_attributes(node, i)


def _check_arity(node, i, opset):
    """Input and output counts against the op's schema (trailing empty names are absent optional
    inputs); the required inputs must be named."""
    if node.domain not in STANDARD:
        return
    try:
        schema = defs.get_schema(node.op_type, max_inclusive_version=opset, domain="")
    except Exception:  # noqa: BLE001 (not an ONNX op: the lowering says it is unsupported)
        return
    ins = list(node.input)
    while ins and not ins[-1]:
        ins.pop()
    outs = list(node.output)
    while outs and not outs[-1]:
        outs.pop()
    for what, n, lo, hi in (("input", len(ins), schema.min_input, schema.max_input),
                            ("output", len(outs), schema.min_output, schema.max_output)):
        if n < lo or n > hi:
            want = f"{lo}" if lo == hi else (f"at least {lo}" if hi >= 1 << 30 else f"{lo} to {hi}")
            raise _invalid(node, i, f"it has {n} {what}{'' if n == 1 else 's'}; {node.op_type} (opset {opset}) "
                                    f"takes {want}")
    for k in range(schema.min_input):
        if not ins[k]:
            raise _invalid(node, i, f"its input #{k} is required but empty")
    have = {a.name for a in node.attribute}
    for name, attr in schema.attributes.items():
        if attr.required and name not in have:
            raise _invalid(node, i, f"it has no attribute '{name}', which {node.op_type} requires")


def check_nodes(m, opset):
    """Before shape inference: arity, attributes, every tensor produced once and before it is
    read (the nodes in topological order), every graph output produced."""
    g = m.graph
    sources = {t.name for t in g.initializer} | {x.name for x in g.input}
    produced = {}
    later = {o: k for k, n in enumerate(g.node) for o in n.output if o}
    for i, node in enumerate(g.node):
        _check_attributes(node, i)
        _check_arity(node, i, opset)
        for x in node.input:
            if not x or x in produced or x in sources:
                continue
            if x in later:
                raise _invalid(node, i, f"its input '{show(x)}' is the output of node #{later[x]}, which does not "
                                        "come before it (the nodes are not in topological order, or a cycle)")
            raise _invalid(node, i, f"its input '{show(x)}' is no graph input, initializer or node output")
        for o in node.output:
            if not o:
                continue
            if o in produced:
                raise _invalid(node, i, f"its output '{show(o)}' is already the output of node #{produced[o]}")
            if o in sources:
                raise _invalid(node, i, f"its output '{show(o)}' is also a graph input or initializer")
            produced[o] = i
    for out in g.output:
        if out.name not in produced and out.name not in sources:
            raise OnnxImportError(f"graph output '{show(out.name)}' is no graph input, initializer or node output")


def _ints_attr(node, name):
    for a in node.attribute:
        if a.name == name:
            return list(a.ints) if a.type == AttributeProto.INTS else a.i
    return None


def _check_conv(g, i, node, xs):
    ws = g.shapes.get(node.input[1])
    if ws is None:
        return
    r = len(xs)
    if len(ws) != r:
        raise _invalid(node, i, f"its weight '{show(node.input[1])}' has rank {len(ws)} {list(ws)} but its "
                                f"input has rank {r} {list(xs)}")
    group = _ints_attr(node, "group") or 1
    if r >= 2 and ws[1] * group != xs[1]:
        raise _invalid(node, i, f"its weight {list(ws)} has {ws[1]} input channels per group x group {group} "
                                f"but its input {list(xs)} has {xs[1]} channels")
    if r >= 1 and ws[0] % group:
        raise _invalid(node, i, f"its weight's {ws[0]} output channels are not a multiple of group {group}")
    ks = _ints_attr(node, "kernel_shape")
    if ks is not None and list(ks) != list(ws[2:]):
        raise _invalid(node, i, f"kernel_shape {list(ks)} disagrees with its weight {list(ws)}")


def _check_window(i, node, r):
    """Window attributes have one entry per spatial axis (pads two)."""
    sp = r - 2
    for name, n in (("kernel_shape", sp), ("strides", sp), ("dilations", sp), ("pads", 2 * sp)):
        v = _ints_attr(node, name)
        if isinstance(v, list) and len(v) != n:
            raise _invalid(node, i, f"attribute '{name}' has {len(v)} entries; its rank-{r} input needs {n}")


def check_node(g, i, node):
    """After shape inference, for a live node: what inference leaves unchecked."""
    if node.domain not in STANDARD:
        return
    op = node.op_type
    xs = g.shapes.get(node.input[0]) if node.input and node.input[0] else None
    if op in ("Conv", "MaxPool", "AveragePool", "LpPool") and xs is not None:
        if len(xs) < 3:
            raise _invalid(node, i, f"its input has rank {len(xs)} {list(xs)}; {op} needs rank 3 or more")
        _check_window(i, node, len(xs))
        if op == "Conv":
            _check_conv(g, i, node, xs)
        ys = g.shapes.get(node.output[0]) if node.output else None
        if ys is not None and any(d <= 0 for d in ys[2:]):
            raise _invalid(node, i, f"its output '{show(node.output[0])}' would have shape {list(ys)}: the window "
                                    f"does not fit its (padded) input {list(xs)}")
    elif op == "Transpose" and xs is not None:
        perm = _ints_attr(node, "perm")
        if isinstance(perm, list) and sorted(perm) != list(range(len(xs))):
            raise _invalid(node, i, f"perm {perm} is not a permutation of the {len(xs)} axes of its input")
    elif op == "Concat":
        axis = _ints_attr(node, "axis")
        ranks = {len(g.shapes[x]) for x in node.input if x and g.shapes.get(x) is not None}
        if axis is None or isinstance(axis, list):
            raise _invalid(node, i, "it has no integer attribute 'axis'")
        for r in ranks:
            if not -r <= axis < r:
                raise _invalid(node, i, f"axis {axis} is out of range for its rank-{r} inputs")
    elif op == "Slice" and len(node.input) > 4 and node.input[4]:
        steps = g.consts.get(node.input[4])
        if steps is not None and np.asarray(steps).dtype.kind in "iu" and np.any(np.asarray(steps) == 0):
            raise _invalid(node, i, f"its steps {np.asarray(steps).tolist()} contain 0")
    elif op in ("Tile", "Expand") and xs is not None and len(node.input) > 1 and node.input[1]:
        v = g.consts.get(node.input[1])
        if v is None or np.asarray(v).dtype.kind not in "iu":
            return
        v = [int(k) for k in np.asarray(v).reshape(-1)]
        if op == "Tile" and any(k < 0 for k in v):
            raise _invalid(node, i, f"its repeats {v} contain a negative count")
        if op == "Expand":
            try:
                np.broadcast_shapes(tuple(xs), tuple(v))
            except ValueError:
                raise _invalid(node, i, f"its input {list(xs)} cannot be broadcast to the shape {v}") from None
    elif op == "Gemm":
        for x in node.input[:2]:
            s = g.shapes.get(x)
            if s is not None and len(s) != 2:
                raise _invalid(node, i, f"its input '{show(x)}' has rank {len(s)} {list(s)}; Gemm takes 2-D A and B")
