"""The lowering rules for shape ops, relayouts, elementwise ops and MatMul / Gemm (README rules
2-5, 7, 8, 10). Each handler takes (lowering, node index, node, node name) and sets the values of
the node's outputs."""
import math

import numpy as np
from onnx import helper

from .accel import FLOPS
from .errors import Unsupported
from .values import Act, Src, check_parts, layout2d, pad_to

ELEMENTWISE = set(FLOPS) - {"BatchNormalization"}
RELAYOUT = {"Concat", "Split", "Slice", "Gather", "GatherElements", "Expand", "Tile", "Pad",
            "DepthToSpace", "SpaceToDepth"}
# which inputs of a relayout op carry data (the others are parameters)
RELAYOUT_DATA = {"Concat": None, "Gather": (0, 1), "GatherElements": (0, 1)}


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _used(L, names):
    return [o for o in names if o and (o in L.g.consumers or o in L.g.outputs)]


def shape_op(L, i, node, name):
    """Rules 2-3: shape ops fold into sources; on activations they are views or cuts."""
    x, out = node.input[0], node.output[0]
    v = L.vals[x]
    op = node.op_type
    if op == "Dropout" and _used(L, node.output[1:]):
        raise Unsupported("its mask output is used (training-mode Dropout)")
    if op in ("Identity", "Dropout", "Cast"):
        L.vals[out] = v
        return
    s = L.shape(out, i)
    perm = None
    if op == "Transpose":
        perm = attrs(node).get("perm") or list(range(len(v.shape) - 1, -1, -1))
        perm = [int(p) for p in perm]
    if isinstance(v, Src):  # a transpose of leading axes only keeps the 2-D layout (rule 3)
        moves_cols = perm is not None and perm[-1] != len(perm) - 1
        L.vals[out] = v.with_shape(s, ("T", tuple(perm), v.shape) if moves_cols else None)
        return
    new = v.transpose(perm, out) if perm else v.reshape(s, op.lower(), out)
    if new is None:  # a relayout no view can express: a cut when read
        why = "transpose" if perm or "transpose" in v.chain else "reshape"
        new = Src(out, s, deps=v.all_tids(), why=why, via=name)
    L.vals[out] = new


def relayout(L, i, node, name):
    """Rule 10: Concat, Split, Slice, Gather, ... fold on sources; on activations each output is
    a new graph input (a cut) read from all of them."""
    which = RELAYOUT_DATA.get(node.op_type, (0,))
    ins = [x for k, x in enumerate(node.input) if x and (which is None or k in which)]
    vs = [L.vals[x] for x in ins]
    deps = []
    for v in vs:
        deps.extend(v.all_tids() if isinstance(v, Act) else v.deps)
    const = all(isinstance(v, Src) and v.const for v in vs)
    why = node.op_type.lower()
    for o in node.output:
        if o:
            shp = L.g.shapes.get(o) or ()
            if deps:
                L.vals[o] = Src(o, shp, deps=tuple(dict.fromkeys(deps)), why=why, via=name)
            else:
                L.vals[o] = Src(o, shp, const=const)


def _active(v):
    return isinstance(v, Act) or not v.pure


def elementwise(L, i, node, name, operands, flops, spatial_force=False):
    """Rules 7-8: one Pointwise over the output's 2-D shape (or one per part)."""
    out = node.output[0]
    S = L.shape(out, i)
    r = len(S)
    vs = [L.vals[x] for x in operands]
    shapes = [L.shape(x, i) for x in operands]
    full = [pad_to(s, r) == S for s in shapes]
    if not any(_active(v) or (full[k] and not v.const) for k, v in enumerate(vs)):
        deps = tuple(dict.fromkeys(d for v in vs for d in v.deps))
        L.vals[out] = Src(out, S, const=all(v.const for v in vs), deps=deps, why="broadcast", via=name)
        return
    spatial = r == 4 and (spatial_force or out in L.want_spatial
                          or any(_is_spatial(v, S) for k, v in enumerate(vs) if full[k]))
    core = layout2d(S[-2:]) if r >= 2 else layout2d(S)
    bout = S[:-2] if r >= 2 else ()
    parts = _choose_parts(L, out, S, vs, shapes, full, spatial, core)
    cost = L.acc.pointwise_cost(flops)
    if not parts:
        rows, cols = layout2d(S, spatial)
        ins = []
        for k, v in enumerate(vs):
            ps = pad_to(shapes[k], r)
            lead = _lead_broadcast(ps, S, spatial)
            if full[k]:
                ins.append(L.read(v, 0, rows, cols, name, spatial)[()])
            elif _active(v):
                ins.append(L.read_as(v, (), rows, cols, ("expand",), name, "broadcast")[()])
            elif lead:  # a source broadcast over leading axes only: given expanded
                ins.append(L.read_as(v, (), rows, cols, ("expand",), name, "broadcast")[()])
        t = L.emit("Pointwise", ins, rows, cols, cost, name, out)
        L.vals[out] = Act.whole(t, rows, cols, S, spatial, origin=out)
        return
    cols_in = []
    for k, v in enumerate(vs):
        ps = pad_to(shapes[k], r)
        if ps[-2:] == S[-2:]:
            nb = max(0, len(shapes[k]) - 2)
            tids = L.read(v, nb, core[0], core[1], name)
            cols_in.append(np.broadcast_to(tids.reshape(pad_to(tids.shape, len(bout))), bout))
        elif _active(v):
            cols_in.append(L.read_as(v, bout, core[0], core[1], ("expand",), name, "broadcast"))
    check_parts(bout, name)
    res = np.zeros(bout, dtype=np.int64)
    for f, pos in enumerate(np.ndindex(bout)):
        res[pos] = L.emit("Pointwise", [c[pos] for c in cols_in], core[0], core[1], cost,
                          f"{name}/part{f}", f"{out}[{','.join(map(str, pos))}]")
    L.vals[out] = Act.parts(res, core[0], core[1], origin=out)


def _is_spatial(v, S):
    """An activation operand that makes an elementwise output spatial (rule 1): a spatial one, or
    one stored channels-last already (as ConvNeXt's NHWC -> NCHW transposes give)."""
    if not isinstance(v, Act):
        return False
    if v.spatial:
        return True
    n, c, h, w = S
    return v.match(0, n * h * w, c, spatial=True) is not None and v.match(0, *layout2d(S)) is None


def _lead_broadcast(ps, S, spatial):
    """A source broadcast along rows only (its columns full) and of more than one row: given to
    the op expanded to the output's shape, as a [197, 768] positional embedding against a
    [B, 197, 768] activation. Row vectors, column vectors and scalars are folded (rule 8)."""
    if spatial:
        return ps[1] == S[1] and ps[0] * ps[2] * ps[3] > 1
    return len(S) >= 1 and ps[-1] == S[-1] and math.prod(ps[:-1]) > 1


def _choose_parts(L, out, S, vs, shapes, full, spatial, core):
    """Rule 5 for elementwise ops: parts when an operand already is parts (no cut), whole when one
    is whole; with neither, parts when the output feeds a per-head MatMul."""
    r = len(S)
    if spatial or r < 3 or math.prod(S[:-2]) <= 1:
        return False
    for k, v in enumerate(vs):
        if (isinstance(v, Act) and v.nparts > 1 and pad_to(shapes[k], r)[-2:] == S[-2:]
                and len(shapes[k]) > 2 and v.match(len(shapes[k]) - 2, *core) is not None):
            return True
    rows, cols = layout2d(S)
    for k, v in enumerate(vs):
        if isinstance(v, Act) and full[k] and v.match(0, rows, cols) is not None:
            return False
    return out in L.want


# x * 1, x / 1, x + 0, x - 0 with a constant 1 or 0 (torch's baddbmm leaves a Mul by 1.0 before each
# masked Softmax): the output is x itself, no op.
_IDENTITY = {"Mul": (1.0, (0, 1)), "Div": (1.0, (1,)), "Add": (0.0, (0, 1)), "Sub": (0.0, (1,))}
IDENTITY_MAX = 1 << 12  # a constant compared with 0 or 1: at most this many elements (a scalar, a vector)


def _identity_operand(L, i, node):
    """The operand an arithmetic identity passes through unchanged (same shape as the output), or None."""
    if node.op_type not in _IDENTITY or len(node.input) != 2:
        return None
    neutral, const_slots = _IDENTITY[node.op_type]
    for k in const_slots:
        c = L.g.consts.get(node.input[k])
        other = node.input[1 - k]
        if c is None or other not in L.vals or L.shape(other, i) != L.shape(node.output[0], i):
            continue
        if not 1 <= c.size <= IDENTITY_MAX or c.dtype.kind not in "biuf":
            continue
        if np.all(c == neutral):
            return other
    return None


def unary(flops_key):
    def h(L, i, node, name):
        same = _identity_operand(L, i, node)
        if same is not None:
            L.vals[node.output[0]] = L.vals[same]
            return
        elementwise(L, i, node, name, [x for x in node.input if x], FLOPS[flops_key])
    return h


def softmax(L, i, node, name):
    r = len(L.shape(node.input[0], i))
    axis = attrs(node).get("axis", -1 if L.g.opset >= 13 else 1)
    axis = axis + r if axis < 0 else axis
    v = L.vals[node.input[0]]
    spatial_c = r == 4 and isinstance(v, Act) and v.spatial and axis == 1
    if axis != r - 1 and not (L.g.opset < 13 and r == 2 and axis == 1) and not spatial_c:
        raise Unsupported(f"{node.op_type} along axis {axis} of a rank-{r} tensor (only the last axis)")
    elementwise(L, i, node, name, [node.input[0]], FLOPS[node.op_type], spatial_force=spatial_c)


def layernorm(L, i, node, name):
    r = len(L.shape(node.input[0], i))
    axis = attrs(node).get("axis", -1)
    axis = axis + r if axis < 0 else axis
    if axis != r - 1:
        raise Unsupported(f"normalization over axes {axis}..{r - 1} (only over the last axis)")
    if _used(L, node.output[1:]):
        raise Unsupported("its Mean / InvStdDev outputs are used")
    elementwise(L, i, node, name, [x for x in node.input if x], FLOPS["LayerNormalization"])


def matmul(L, i, node, name):
    a, b = node.input[0], node.input[1]
    mm(L, i, node, name, L.vals[a], L.vals[b], L.shape(a, i), L.shape(b, i))


def gemm(L, i, node, name):
    """Rule 5: transA/transB fold into sources and are cuts (transposes) on activations; the bias
    C is folded when it is a broadcast constant, else (an activation, or a source of the output's
    shape: rule 8) an input of a Pointwise add."""
    at = attrs(node)
    a, b = node.input[0], node.input[1]
    A, B, sa, sb = L.vals[a], L.vals[b], L.shape(a, i), L.shape(b, i)
    if at.get("transA", 0):
        A, sa = _transpose(A, sa, f"{a}^T"), sa[::-1]
    if at.get("transB", 0):
        B, sb = _transpose(B, sb, f"{b}^T"), sb[::-1]
    out = mm(L, i, node, name, A, B, sa, sb)
    c = node.input[2] if len(node.input) > 2 else ""
    if not c:
        return
    S, cv = L.shape(node.output[0], i), L.vals[c]
    full = pad_to(L.shape(c, i), 2) == S
    if _active(cv) or full:  # a bias computed at run time or of the output's shape: a Pointwise add
        if full:
            tc = L.read(cv, 0, S[0], S[1], name)[()]
        else:
            tc = L.read_as(cv, (), S[0], S[1], ("expand",), name, "broadcast")[()]
        t = L.emit("Pointwise", [int(out.tids), tc], S[0], S[1], L.acc.pointwise_cost(FLOPS["Add"]),
                   name + "/bias", node.output[0] + "+C")
        L.vals[node.output[0]] = Act.whole(t, S[0], S[1], S, origin=node.output[0] + "+C")


def _transpose(v, s, origin):
    perm = list(range(len(s) - 1, -1, -1))
    if isinstance(v, Src):
        return v.with_shape(tuple(s[::-1]), ("T", tuple(perm), tuple(s)))
    new = v.transpose(perm, origin)
    return new if new is not None else Src(origin, s[::-1], deps=v.all_tids(), why="transpose")


def mm(L, i, node, name, A, B, sa, sb):
    """Rule 5: one MatMul for a 2-D (after layout) product or a 2-D RHS; one per head when the
    RHS is batched (or the LHS is already parts)."""
    out = node.output[0]
    S = L.shape(out, i)
    if len(sa) == 1:
        A, sa = _reshape(A, sa, (1,) + tuple(sa), f"{out}/lhs"), (1,) + tuple(sa)
    if len(sb) == 1:
        B, sb = _reshape(B, sb, tuple(sb) + (1,), f"{out}/rhs"), tuple(sb) + (1,)
    ab, bb = tuple(sa[:-2]), tuple(sb[:-2])
    m, k, n = sa[-2], sa[-1], sb[-1]
    bout = tuple(np.broadcast_shapes(ab, bb))
    pa, pb = math.prod(ab), math.prod(bb)
    lhs_parts = (pa > 1 and isinstance(A, Act) and A.nparts > 1 and A.match(len(ab), m, k) is not None)
    if pb == 1 and not lhs_parts:
        rows = math.prod(sa[:-1])
        lhs = L.read(A, 0, rows, k, name)[()]
        rhs = L.read(B, 0, k, n, name)[()]
        t = L.matmul_op(lhs, rhs, rows, n, k, name, out)
        res = Act.whole(t, rows, n, bout + (m, n), origin=out)
    else:
        lhs = L.read(A, len(ab), m, k, name)
        rhs = L.read(B, len(bb), k, n, name)
        lhs = np.broadcast_to(lhs.reshape(pad_to(lhs.shape, len(bout))), bout)
        rhs = np.broadcast_to(rhs.reshape(pad_to(rhs.shape, len(bout))), bout)
        check_parts(bout, name)
        tids = np.zeros(bout, dtype=np.int64)
        for f, pos in enumerate(np.ndindex(bout)):
            tids[pos] = L.matmul_op(lhs[pos], rhs[pos], m, n, k, f"{name}/part{f}",
                                    f"{out}[{','.join(map(str, pos))}]")
        res = Act.parts(tids, m, n, origin=out)
    if res.shape != S:
        res = res.reshape(S, "reshape", out) or Src(out, S, deps=res.all_tids(), why="reshape", via=name)
    L.vals[out] = res
    return res


def _reshape(v, s, new, origin):
    if isinstance(v, Src):
        return v.with_shape(new)
    r = v.reshape(new, "reshape", origin)
    return r if r is not None else Src(origin, new, deps=v.all_tids(), why="reshape")


def _register():
    from . import lower_conv
    h = {op: shape_op for op in ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
                                 "Identity", "Dropout", "Cast")}
    h.update({op: relayout for op in RELAYOUT})
    h.update({op: unary(op) for op in ELEMENTWISE})
    h.update({"Softmax": softmax, "LogSoftmax": softmax, "LayerNormalization": layernorm,
              "MatMul": matmul, "Gemm": gemm})
    h.update(lower_conv.HANDLERS)
    return h


HANDLERS = _register()
