"""Loading an ONNX model, binding its symbolic dims, shape inference and constant folding.

The result is a Graph: the model's nodes in their (topological) order, a static shape for every
tensor that inference or folding could give one, the known values of the small constants, the set
of tensors that are constant (initializers, Constant nodes and whatever is computed from them
only), the data graph inputs and the graph outputs.
"""
import math
import os
import stat
import warnings

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

from . import fold
from .errors import OnnxImportError, file_kind, show
from .validate import sanitize_names

SMALL = 1 << 16      # initializers at most this big are read into numpy (shape arithmetic)
SUBSTITUTE = 1 << 16  # folded values at most this big are fed back to shape inference
MAX_ROUNDS = 1000    # rounds of shape inference + folding (each feeds back what the last folded)
MAX_MODEL_BYTES = 2 << 30  # a protobuf message cannot be larger (2 GiB)
MAX_DIM_VALUE = (1 << 63) - 1  # an int64 dim_value


def _read_model_file(path):
    """The bytes of a regular file of at most MAX_MODEL_BYTES (opened without blocking: a FIFO is
    refused, not waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise OnnxImportError(f"cannot read '{show(path)}': {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_MODEL_BYTES:
        os.close(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OnnxImportError(f"'{show(path)}' is {file_kind(st.st_mode)}, not an ONNX model file")
        raise OnnxImportError(f"'{show(path)}' is {st.st_size:,} bytes, more than the 2 GiB a protobuf "
                              "ONNX model can hold (models this big keep their weights as external data)")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_MODEL_BYTES + 1)
        except OSError as e:
            raise OnnxImportError(f"cannot read '{show(path)}': {e.strerror or e}") from None
    if len(data) > MAX_MODEL_BYTES:
        raise OnnxImportError(f"'{show(path)}' is more than 2 GiB, the most a protobuf ONNX model can hold")
    return data


def load_model(src):
    """A ModelProto from a path or a ModelProto (copied); its display name."""
    if isinstance(src, onnx.ModelProto):
        m = onnx.ModelProto()
        m.CopyFrom(src)
        sanitize_names(m)
        return m, (m.graph.name or "model")
    if not isinstance(src, (str, bytes, os.PathLike)):
        raise OnnxImportError(f"expected a path or an onnx.ModelProto, not {type(src).__name__}")
    path = os.fspath(src)
    path = os.fsdecode(path) if isinstance(path, bytes) else path
    data = _read_model_file(path)
    name = os.path.basename(path)
    if not data:
        raise OnnxImportError(f"'{show(path)}' is empty, not an ONNX model")
    if data.lstrip()[:1] in (b"{", b"["):
        raise OnnxImportError(f"'{show(path)}' is JSON text, not an ONNX model (a binary protobuf .onnx file)")
    m = onnx.ModelProto()
    try:
        with warnings.catch_warnings():  # protobuf warns (RuntimeWarning) on some garbage before failing
            warnings.simplefilter("ignore")
            m.ParseFromString(data)
    except Exception as e:  # noqa: BLE001 (protobuf raises DecodeError or RuntimeError)
        raise OnnxImportError(f"'{show(path)}' is not a valid ONNX model: the protobuf does not parse "
                              f"({type(e).__name__}: {show(str(e))}); is the file truncated?") from None
    del data
    if m.ir_version <= 0 or not m.HasField("graph") or not m.graph.node:
        raise OnnxImportError(f"'{show(path)}' is not an ONNX model (no ir_version, graph or nodes); "
                              "is the file truncated or of another format?")
    sanitize_names(m)
    return m, name


def check_model(m, name):
    """Raise for a model that cannot be lowered at all; return onnx.checker's complaint about
    one that can (a warning: the checker of onnx 1.12 rejects valid models, e.g. graph outputs
    without a shape)."""
    if not any(o.domain in ("", "ai.onnx") for o in m.opset_import):
        raise OnnxImportError(f"'{show(name)}' has no ai.onnx opset_import; is the file truncated?")
    try:
        onnx.checker.check_model(m)
    except Exception as e:  # noqa: BLE001 (onnx.checker.ValidationError and friends)
        msg = str(e).strip().splitlines()
        return f"onnx.checker: {msg[0] if msg else type(e).__name__}"
    return None


def opset_of(m):
    return max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default=1)


def bind_dims(m, dims):
    """Set every dim_param of the data graph inputs from dims (name -> positive int). Raises when
    one is unbound (naming every unbound name and the inputs it appears in). Returns the dims used
    and the names given but not found."""
    inits = {t.name for t in m.graph.initializer}
    unbound, used = {}, {}
    for inp in m.graph.input:
        if inp.name in inits or not inp.type.HasField("tensor_type"):
            continue
        for ax, d in enumerate(inp.type.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value > 0:
                continue
            # an empty dim_param is no name: the dim is INPUT:AXIS like an unnamed one
            key = d.dim_param if d.HasField("dim_param") and d.dim_param else f"{inp.name}:{ax}"
            if key in dims:
                if not 0 < dims[key] <= MAX_DIM_VALUE:
                    raise OnnxImportError(f"dim '{show(key)}' = {dims[key]} is out of range: a dim is at most "
                                          "2^63 - 1 (and a tensor of the problem at most 2^24 rows and columns)")
                d.dim_value = dims[key]
                used[key] = dims[key]
            else:
                unbound.setdefault(key, []).append(f"input '{show(inp.name)}' axis {ax}")
    if unbound:
        parts = [f"'{show(k)}' ({', '.join(v)})" for k, v in unbound.items()]
        raise OnnxImportError("symbolic dim(s) without a value: " + "; ".join(parts) +
                              "; give each with --dim NAME=VALUE (a dim with no name: --dim INPUT:AXIS=VALUE)")
    # Stale symbolic shapes elsewhere would only confuse inference: let it infer them anew.
    # A graph output that is a graph input or an initializer keeps that shape (inference would
    # take the output's cleared type for the input's).
    del m.graph.value_info[:]
    ins = {i.name: i for i in m.graph.input}
    init_dims = {t.name: list(t.dims) for t in m.graph.initializer}
    for out in m.graph.output:
        if out.name in ins:
            out.type.CopyFrom(ins[out.name].type)
        elif out.type.HasField("tensor_type"):
            out.type.tensor_type.ClearField("shape")
            if out.name in init_dims:
                for d in init_dims[out.name]:
                    out.type.tensor_type.shape.dim.add().dim_value = d
    return used, sorted(set(dims) - set(used))


def _infer(m):
    try:
        return shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=True)
    except Exception as e:  # noqa: BLE001
        lines = str(e).strip().splitlines()
        raise OnnxImportError(f"ONNX shape inference failed: {show(lines[0] if lines else type(e).__name__)}") from None


def _shape_of(vi):
    t = vi.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    dims = t.tensor_type.shape.dim
    if any(not d.HasField("dim_value") for d in dims):
        return None
    return tuple(int(d.dim_value) for d in dims)


def _initial_values(m):
    consts = {}
    for t in m.graph.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL and 0 <= math.prod(t.dims) <= SMALL:
            try:
                consts[t.name] = numpy_helper.to_array(t)
            except Exception:  # noqa: BLE001 (an odd dtype: its value stays unknown)
                pass
    return consts


def _fold(m, shapes):
    """Values of constant tensors (where known) and the set of constant tensor names."""
    consts = _initial_values(m)
    const_names = {t.name for t in m.graph.initializer}
    for node in m.graph.node:
        if node.op_type in ("Shape", "Size") and node.domain in ("", "ai.onnx"):
            s = shapes.get(node.input[0])
            if s is not None:
                a = fold.attrs(node)
                n = math.prod(s)
                if node.op_type == "Size" and not 0 <= n <= MAX_DIM_VALUE:
                    continue
                v = np.array(s[a.get("start", 0):a.get("end", len(s))] if node.op_type == "Shape" else n,
                             dtype=np.int64)
                consts[node.output[0]] = v
                const_names.add(node.output[0])
            continue
        if node.domain not in ("", "ai.onnx") or not all(i == "" or i in const_names for i in node.input):
            continue
        const_names.update(o for o in node.output if o)
        vals = [consts.get(i) if i else None for i in node.input]
        if any(v is None for i, v in zip(node.input, vals) if i):
            continue
        outs = fold.evaluate(node, vals)
        if outs:
            for o, v in zip(node.output, outs):
                if o:
                    consts[o] = v
    return consts, const_names


def _substitute(m, consts, done):
    """Replace single-output folded nodes by Constant nodes, so that inference sees the values."""
    changed = False
    for i, node in enumerate(m.graph.node):
        if (node.op_type == "Constant" or len(node.output) != 1 or node.output[0] in done
                or node.output[0] not in consts or consts[node.output[0]].size > SUBSTITUTE):
            continue
        v = consts[node.output[0]]
        if v.dtype == object or v.dtype.kind in "USO":
            continue
        new = onnx.helper.make_node("Constant", [], [node.output[0]], name=node.name,
                                    value=numpy_helper.from_array(v, name=node.output[0]))
        m.graph.node[i].CopyFrom(new)
        done.add(node.output[0])
        changed = True
    return changed


class Graph:
    """The analysed model (see the module docstring)."""

    def __init__(self, m, name):
        self.name = name
        self.opset = opset_of(m)
        done = set()
        for _ in range(MAX_ROUNDS):  # to the fixpoint: until a round folds nothing new
            inferred = _infer(m)
            shapes = self._shapes(inferred)
            consts, const_names = _fold(inferred, shapes)
            for k, v in consts.items():
                shapes[k] = tuple(int(s) for s in v.shape)
            if not _substitute(m, consts, done):
                break
        else:
            raise OnnxImportError(f"shape inference and constant folding did not settle in {MAX_ROUNDS} rounds "
                                  f"(each folding more of the {len(m.graph.node)} nodes)")
        self.model = inferred
        self.nodes = list(inferred.graph.node)
        self.shapes, self.consts, self.const_names = shapes, consts, const_names
        inits = {t.name for t in inferred.graph.initializer}
        self.initializers = inits
        self.data_inputs = [i.name for i in inferred.graph.input if i.name not in inits]
        self.outputs = [o.name for o in inferred.graph.output]
        self.producer, self.consumers = {}, {}
        for i, node in enumerate(self.nodes):
            for o in node.output:
                if o:
                    self.producer[o] = i
            for x in node.input:
                if x:
                    self.consumers.setdefault(x, []).append(i)
        self.live = self._live()

    @staticmethod
    def _shapes(m):
        shapes = {}
        for vi in list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output):
            s = _shape_of(vi)
            if s is not None or vi.name not in shapes:
                shapes[vi.name] = s
        for t in m.graph.initializer:
            shapes[t.name] = tuple(int(d) for d in t.dims)
        return shapes

    def _live(self):
        """Indices of the nodes whose outputs reach a graph output."""
        live, need = set(), set(self.outputs)
        for i in range(len(self.nodes) - 1, -1, -1):
            if any(o in need for o in self.nodes[i].output):
                live.add(i)
                need.update(x for x in self.nodes[i].input if x)
        return live

    def node_name(self, i):
        n = self.nodes[i]
        return n.name or f"{n.op_type}_{i}"

    def is_const(self, name):
        return name in self.const_names

    def n_graph_outputs(self, name):
        return self.outputs.count(name)
