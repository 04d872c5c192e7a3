"""What the importer's test files share: the package on sys.path (engine/onnx) and the builders of
small ONNX models (onnx.helper), and the import of one as a problem dict."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.normpath(os.path.join(HERE, "..", "..", "engine", "onnx"))
if PKG not in sys.path:
    sys.path.insert(0, PKG)
import mlsys_onnx  # noqa: E402

F = TensorProto.FLOAT


def vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", [vi(n, s) for n, s in inputs], [vi(n, None) for n in outputs],
                          initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def node(op, ins, outs, name=None, **kw):
    return helper.make_node(op, ins, outs, name=name, **kw)


def const(name, arr, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(arr, dtype=dtype), name=name)


def imp(m, **kw):
    p, _ = mlsys_onnx.import_model(m, **kw)
    return p
