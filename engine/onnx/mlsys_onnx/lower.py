"""The lowering driver: ONNX nodes in order -> MatMul / Pointwise ops over 2-D tensors.

Every ONNX tensor on the path to a graph output gets a value (values.Act or values.Src). A rule
reads its operands with read() (a view when the stored tensor already has the needed 2-D layout,
else a cut: a new graph input, with the dropped ordering edges recorded) and emits ops into the
Table. The rules for convolutions, pools and BatchNormalization are in lower_conv.py; README.md
lists them all.
"""
import math

import numpy as np

from . import rules
from .accel import BRIDGE_FLOPS, COPY_FLOPS
from .emit import Table
from .errors import OnnxImportError, Unsupported, node_label, show
from .validate import check_node
from .values import Act, Src, check_parts, layout2d

SHAPE_OPS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Identity", "Dropout", "Cast")
# ops whose (first) input is spatial by rule 1: stored channels-last
SPATIAL_READERS = ("Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "BatchNormalization")
MAX_ELEMENTS = 1 << 48  # a tensor of the problem holds at most 2^24 x 2^24 elements


def wants_parts(g):
    """ONNX tensors that feed the operands of a per-head (batched) MatMul, directly or through
    elementwise and identity ops: an elementwise op free to choose makes them parts."""
    want = set()
    for i in sorted(g.live, reverse=True):
        n = g.nodes[i]
        if n.op_type == "MatMul":
            b = g.shapes.get(n.input[1])
            if b is not None and len(b) >= 3 and math.prod(b[:-2]) > 1:
                want.update(n.input[:2])
        elif n.output and n.output[0] in want:
            if n.op_type in rules.ELEMENTWISE:
                out = g.shapes.get(n.output[0])
                for x in n.input:
                    s = g.shapes.get(x)
                    if out and s and len(s) >= 2 and tuple(s[-2:]) == tuple(out[-2:]):
                        want.add(x)
            elif n.op_type in ("Identity", "Dropout", "Cast"):
                want.add(n.input[0])
    return want


def wants_spatial(g):
    """4-D ONNX tensors that are spatial by rule 1 because a Conv, pool or BatchNormalization
    reads them, directly or through elementwise and identity ops (of the same shape)."""
    want = set()
    for i in sorted(g.live, reverse=True):
        n = g.nodes[i]
        if n.op_type in SPATIAL_READERS and n.input and len(g.shapes.get(n.input[0]) or ()) == 4:
            want.add(n.input[0])
        elif n.output and n.output[0] in want and (n.op_type in rules.ELEMENTWISE
                                                   or n.op_type in ("Identity", "Dropout", "Cast")):
            out = g.shapes.get(n.output[0])
            want.update(x for x in n.input if x and g.shapes.get(x) == out)
    return want


class Lowering:
    def __init__(self, g, acc, skip_unsupported):
        self.g, self.acc, self.skip = g, acc, skip_unsupported
        self.t = Table(acc)
        self.vals = {}
        self.skipped, self.folded_bn, self.warnings = [], [], []
        self.want = wants_parts(g)
        self.want_spatial = wants_spatial(g)

    # ----- the driver ---------------------------------------------------------------------
    def run(self):
        g = self.g
        for x in g.data_inputs:
            self.vals[x] = Src(x, g.shapes.get(x) or (), const=False)
        for x in g.initializers:
            self.vals[x] = Src(x, g.shapes.get(x) or (), const=True)
        for i, node in enumerate(g.nodes):
            if i in g.live:
                check_node(g, i, node)
                self.node(i, node)
        roots = []
        for o in g.outputs:
            v = self.vals.get(o)
            if isinstance(v, Act):
                roots.extend(v.all_tids())
            elif isinstance(v, Src) and v.deps:
                roots.extend(v.deps)
            else:
                self.warnings.append(f"graph output '{show(o)}' is computed from sources only: no op produces it")
        return roots

    def node(self, i, node):
        g, name = self.g, self.g.node_name(i)
        outs = [o for o in node.output if o]
        if outs and all(g.is_const(o) for o in outs):
            for o in outs:  # constant computation: folded
                self.vals[o] = Src(o, g.shapes.get(o) or (), const=True)
            return
        handler = rules.HANDLERS.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        try:
            if handler is None:
                dom = f" of domain '{show(node.domain)}'" if node.domain not in ("", "ai.onnx") else ""
                raise Unsupported(f"no lowering rule for op {show(node.op_type)}{dom}")
            for x in node.input:
                if x and x not in self.vals:
                    raise Unsupported(f"its input '{show(x)}' has no value (an unsupported producer?)")
            handler(self, i, node, name)
        except Unsupported as e:
            label = node_label(name, i, node.op_type)
            if not self.skip:
                raise OnnxImportError(f"{label} is not supported: {e}; "
                                      "--skip-unsupported bridges it as a Pointwise") from None
            try:
                self.bridge(i, node, name, str(e))
            except Unsupported as e2:
                why = f": {e}" if str(e) == str(e2) else f" ({e}) and cannot be bridged either: {e2}"
                raise OnnxImportError(f"{label} is not supported{why}") from None

    def shape(self, x, i):
        """The static shape of tensor x, read by node i (rule 13: an error without one)."""
        g = self.g
        s = g.shapes.get(x)
        if s is None:
            raise self._no_shape(x, i)
        if any(d <= 0 for d in s):
            raise Unsupported(f"tensor '{show(x)}' has a zero or negative dimension {list(s)}")
        if math.prod(s) > MAX_ELEMENTS:
            at = f"at {node_label(g.node_name(i), i, g.nodes[i].op_type)}"
            raise OnnxImportError(f"tensor '{show(x)}' ({at}) has shape {list(s)}: {math.prod(s):,} elements, more "
                                  "than a tensor of the problem format can hold (2^24 x 2^24)")
        return tuple(s)

    def _no_shape(self, x, i):
        g = self.g

        def label(k):
            return node_label(g.node_name(k), k, g.nodes[k].op_type)
        p = g.producer.get(x)
        for y, k in [(x, i)] + [(y, p) for y in (g.nodes[p].input if p is not None else ())]:
            if y in g.data_inputs and g.shapes.get(y) is None:
                return OnnxImportError(f"graph input '{show(y)}' (read by {label(k)}) has no shape in the model: give "
                                       "the model's inputs shapes (symbolic dims are bound with --dim NAME=VALUE)")
        made = "" if p is None else f"the output of {label(p)}"
        where = made if p == i else (f"read by {label(i)}, {made}" if made else f"read by {label(i)}")
        return OnnxImportError(f"tensor '{show(x)}' ({where}) has no static shape: ONNX shape inference could not "
                               "determine it (is the node invalid, or does the shape depend on run-time data?); "
                               "check the model with onnx.checker")

    # ----- reading operands ---------------------------------------------------------------
    def read(self, v, nb, rows, cols, node, spatial=False, why="layout"):
        """Tensor ids (an array over v's first nb axes) of v read as [batch..., rows, cols]."""
        if isinstance(v, Act):
            m = v.match(nb, rows, cols, spatial)
            if m is not None:
                return m
            if why == "layout" and v.nparts != math.prod(v.shape[:nb]):
                why = "heads"
            reason = v.cut_reason(why)
            return self._new(("cut", v.origin, spatial), v.shape[:nb], rows, cols, node,
                             f"{v.origin}@{reason}", v.deps(nb, spatial), reason, node)
        tag = v.tag + (("nhwc",) if spatial else ())
        return self._src(v, v.shape[:nb], rows, cols, tag, node)

    def read_as(self, v, bshape, rows, cols, tag, node, why):
        """A relayout read (im2col, a broadcast, a pool window, ...): a cut of an activation, or
        a source given in that layout. An array over bshape."""
        if isinstance(v, Act):
            deps = np.empty(tuple(bshape), dtype=object)
            for pos in np.ndindex(deps.shape):
                deps[pos] = v.all_tids()
            return self._new(("cut", v.origin, tuple(tag)), bshape, rows, cols, node,
                             f"{v.origin}@{why}", deps, why, node)
        return self._src(v, bshape, rows, cols, v.tag + (tuple(tag),), node)

    def _src(self, v, bshape, rows, cols, tag, node):
        deps = np.empty(tuple(bshape), dtype=object)
        for pos in np.ndindex(deps.shape):
            deps[pos] = list(v.deps)
        suffix = "".join("@" + (str(x[0]) if isinstance(x, tuple) else str(x)) for x in tag)
        return self._new(("src", v.origin, tag), bshape, rows, cols, node, v.origin + suffix, deps,
                         v.why, v.via or node)

    def _new(self, key, bshape, rows, cols, node, tname, deps, why, via):
        check_parts(bshape, node)
        out = np.zeros(tuple(bshape), dtype=np.int64)
        flat = len(out.shape) > 0
        for pos in np.ndindex(out.shape):
            k = key + (rows, cols, pos)
            t = self.t.keys.get(k)
            if t is None:
                t = self.t.tensor(rows, cols, tname + (f"[{','.join(map(str, pos))}]" if flat else ""))
                self.t.keys[k] = t
                for d in deps[pos]:
                    self.t.cut(d, t, node, why, via)
            out[pos] = t
        return out

    # ----- emitting -------------------------------------------------------------------------
    def emit(self, kind, inputs, rows, cols, cost, name, tname):
        return self.t.op(kind, inputs, rows, cols, cost, name, tname)

    def matmul_op(self, lhs, rhs, m, n, k, name, tname):
        lhs, rhs = int(lhs), int(rhs)
        if lhs == rhs:  # x @ x: the contest forbids one tensor twice; the RHS is a copy
            rhs = self.emit("Pointwise", [rhs], self.t.rows[rhs], self.t.cols[rhs],
                            self.acc.pointwise_cost(COPY_FLOPS), name + "/copy", tname + "@copy")
        return self.emit("MatMul", [lhs, rhs], m, n, self.acc.matmul_cost(k), name, tname)

    def bridge(self, i, node, name, reason):
        """--skip-unsupported: one Pointwise over the first output's 2-D shape."""
        g = self.g
        outs = [o for o in node.output if o]
        self.skipped.append({"node": name, "index": i, "op_type": node.op_type, "reason": reason})
        if not outs:
            return
        out_shape = self.shape(outs[0], i)
        vals = [(x, self.vals.get(x)) for x in node.input if x and self.vals.get(x) is not None]
        spatial = len(out_shape) == 4 and any(isinstance(v, Act) and v.spatial for _, v in vals)
        rows, cols = layout2d(out_shape, spatial)
        ins = []
        for x, v in vals:
            active = isinstance(v, Act) or not v.pure
            same = g.shapes.get(x) == out_shape
            if active and same:
                ins.append(self.read(v, 0, rows, cols, name, spatial, "bridge")[()])
            elif active:
                ins.append(self.read_as(v, (), rows, cols, ("bridge",), name, "bridge")[()])
            elif same and not v.const:
                ins.append(self.read(v, 0, rows, cols, name, spatial)[()])
        data = [v for _, v in vals if isinstance(v, Src) and not v.const]
        if not ins and data:  # only data sources of other shapes: the first, in the output's shape
            ins.append(self.read_as(data[0], (), rows, cols, ("bridge",), name, "bridge")[()])
        if not ins:
            for o in outs:
                self.vals[o] = Src(o, g.shapes.get(o) or (), const=False)
            return
        t = self.emit("Pointwise", ins, rows, cols, self.acc.pointwise_cost(BRIDGE_FLOPS), name, outs[0])
        self.vals[outs[0]] = Act.whole(t, rows, cols, out_shape, spatial, origin=outs[0])
        for o in outs[1:]:
            self.vals[o] = Src(o, g.shapes.get(o) or (), deps=(t,), why="bridge", via=name)
