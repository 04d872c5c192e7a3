"""The rules for convolutions, pools and BatchNormalization (README rules 6, 7, 9). Spatial 4-D
NCHW tensors are stored channels-last: [N*H*W, C]."""
import math

import numpy as np

from .accel import FLOPS
from .errors import Unsupported, show
from .values import Act, Src


def _attrs(node):
    from .rules import attrs
    return attrs(node)


def _spatial_in(L, i, node):
    x = node.input[0]
    s = L.shape(x, i)
    if len(s) != 4:
        raise Unsupported(f"its input '{show(x)}' has rank {len(s)}; only 2-D (4-D NCHW) {node.op_type} is lowered")
    return x, s


def conv(L, i, node, name):
    """Rule 6: group 1 is an im2col GEMM [N*Ho*Wo, Cin*kh*kw] x [Cin*kh*kw, Cout] (no cut for a
    1x1 stride-1 unpadded conv); depthwise (group = Cin = Cout) is one Pointwise."""
    a = _attrs(node)
    x, (n, cin, h, w) = _spatial_in(L, i, node)
    ws = L.shape(node.input[1], i)
    out = node.output[0]
    s = L.shape(out, i)
    if len(ws) != 4:  # validate.check_node refuses it first; kept as a guard
        raise Unsupported(f"its weight has rank {len(ws)}, not 4")
    cout, cpg, kh, kw = ws
    ho, wo = s[2], s[3]
    g = int(a.get("group", 1))
    strides = list(a.get("strides", [1, 1]))
    pads = list(a.get("pads", [0, 0, 0, 0]))
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    xv, wv = L.vals[x], L.vals[node.input[1]]
    rows = n * ho * wo
    params = (kh, kw, tuple(strides), tuple(pads), tuple(a.get("dilations", [1, 1])), auto)
    if g == 1:
        k = cin * kh * kw
        # auto_pad SAME_* pads a 1x1 stride-1 conv by nothing; VALID never pads (pads are then ignored)
        padded = any(pads) if auto == "NOTSET" else auto not in ("VALID", "SAME_UPPER", "SAME_LOWER")
        plain = (kh, kw) == (1, 1) and strides == [1, 1] and not padded
        if plain:
            lhs = L.read(xv, 0, n * h * w, cin, name, spatial=True)[()]
        else:
            lhs = L.read_as(xv, (), rows, k, ("im2col",) + params, name, "im2col")[()]
        rhs = L.read_as(wv, (), k, cout, ("conv-weight",), name, "conv-weight")[()]
        t = L.matmul_op(lhs, rhs, rows, cout, k, name, out)
    elif g == cin == cout and cin > 1 and cpg == 1:
        if (ho, wo) == (h, w):
            inp = L.read(xv, 0, n * h * w, cin, name, spatial=True)[()]
        else:
            inp = L.read_as(xv, (), rows, cin, ("conv-window",) + params, name, "conv-window")[()]
        t = L.emit("Pointwise", [inp], rows, cout, L.acc.pointwise_cost(2 * kh * kw), name, out)
    else:
        raise Unsupported(f"grouped convolution (group {g}, {cin} input and {cout} output channels): only "
                          "group 1 and depthwise (group = input channels = output channels) are lowered")
    L.vals[out] = Act.whole(t, rows, cout, s, spatial=True, origin=out)


def _mean_hw(L, i, node, name, x, s_in):
    """Rule 9: the mean over H, W is a MatMul by a constant averaging matrix [N, N*H*W]."""
    n, c, h, w = s_in
    out = node.output[0]
    s = L.shape(out, i)
    avg = Src(f"{name}/avg", (n, n * h * w), const=True)  # (ReduceSum: a matrix of ones)
    lhs = L.read_as(avg, (), n, n * h * w, ("avg",), name, "")[()]
    rhs = L.read(L.vals[x], 0, n * h * w, c, name, spatial=True)[()]
    t = L.matmul_op(lhs, rhs, n, c, n * h * w, name, out)
    L.vals[out] = Act.whole(t, n, c, s, spatial=len(s) == 4, origin=out)


def global_average_pool(L, i, node, name):
    x, s = _spatial_in(L, i, node)
    _mean_hw(L, i, node, name, x, s)


def reduce_mean(L, i, node, name):
    """ReduceMean / ReduceSum over H, W of a 4-D tensor (rule 9), or over the last axis: a MatMul
    by a constant vector [C, 1] (an addition to the rules; exact)."""
    x = node.input[0]
    s = L.shape(x, i)
    a = _attrs(node)
    axes = a.get("axes")
    if axes is None and len(node.input) > 1 and node.input[1]:
        axes = L.g.consts.get(node.input[1])
        if axes is None:
            raise Unsupported("its axes input is not a constant")
    r = len(s)
    axes = sorted(int(ax) % r for ax in np.asarray(axes).reshape(-1)) if axes is not None and r else None
    if r == 4 and axes == [2, 3]:
        _mean_hw(L, i, node, name, x, s)
    elif r >= 1 and axes == [r - 1]:
        out = node.output[0]
        rows, c = math.prod(s[:-1]), s[-1]
        vec = Src(f"{name}/ones", (c, 1), const=True)
        lhs = L.read(L.vals[x], 0, rows, c, name)[()]
        rhs = L.read_as(vec, (), c, 1, ("ones",), name, "")[()]
        t = L.matmul_op(lhs, rhs, rows, 1, c, name, out)
        L.vals[out] = Act.whole(t, rows, 1, L.shape(out, i), origin=out)
    else:
        raise Unsupported(f"{node.op_type} over axes {axes if axes is not None else 'all'} of a rank-{r} tensor: "
                          "only over H, W (axes 2, 3) of a 4-D tensor or over the last axis")


def pool(L, i, node, name):
    """Rule 9: MaxPool / AveragePool: a Pointwise over the output [N*Ho*Wo, C], kh*kw flops per
    element, reading a cut gathered to the output's shape ("pool-window")."""
    from .rules import _used
    if _used(L, node.output[1:]):
        raise Unsupported("its Indices output is used")
    x, (n, c, h, w) = _spatial_in(L, i, node)
    a = _attrs(node)
    kh, kw = (list(a.get("kernel_shape", [1, 1])) + [1, 1])[:2]
    out = node.output[0]
    s = L.shape(out, i)
    rows = n * s[2] * s[3]
    params = (kh, kw, tuple(a.get("strides", [1, 1])), tuple(a.get("pads", [0, 0, 0, 0])))
    inp = L.read_as(L.vals[x], (), rows, c, ("pool-window", node.op_type) + params, name, "pool-window")[()]
    t = L.emit("Pointwise", [inp], rows, c, L.acc.pointwise_cost(kh * kw), name, out)
    L.vals[out] = Act.whole(t, rows, c, s, spatial=True, origin=out)


def batchnorm(L, i, node, name):
    """Rule 7: folded into a Conv / Gemm / MatMul producer whose only consumer it is (exact:
    inference BatchNormalization is affine); otherwise a Pointwise (2 flops per element)."""
    from .rules import _used, elementwise
    if _used(L, node.output[1:]):
        raise Unsupported("its running-statistics outputs are used (training mode)")
    x, out, g = node.input[0], node.output[0], L.g
    p = g.producer.get(x)
    v = L.vals[x]
    if (p is not None and g.nodes[p].op_type in ("Conv", "Gemm", "MatMul") and len(g.consumers.get(x, ())) == 1
            and x not in g.outputs and isinstance(v, Act)):
        L.vals[out] = v
        L.folded_bn.append(name)
        return
    elementwise(L, i, node, name, [t for t in node.input if t], FLOPS["BatchNormalization"],
                spatial_force=len(L.shape(x, i)) == 4)


HANDLERS = {
    "Conv": conv,
    "GlobalAveragePool": global_average_pool,
    "ReduceMean": reduce_mean,
    "ReduceSum": reduce_mean,
    "MaxPool": pool,
    "AveragePool": pool,
    "BatchNormalization": batchnorm,
}
