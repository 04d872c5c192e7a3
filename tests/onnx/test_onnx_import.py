"""Tests of the ONNX importer (engine/onnx/mlsys_onnx): one model per lowering rule, built with
onnx.helper, imported, and compared with the exact expected problem.

Run: PYTHONPATH=engine/onnx python3 -m pytest -q tests/onnx   (Debian's python3-onnx, -numpy)
With MLSYS_BIN set (the mlsys binary), two imported problems are also solved and evaluated.

Default accelerator: N = 128, F_mm = 32768, F_pw = 1024, so a MatMul's base_cost is its K and a
Pointwise's is 16 x its flops per element (Relu 16, Div 64, Softmax 160, LayerNormalization 192).
"""
import json
import os
import subprocess
import sys

import pytest

onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import TensorProto, helper  # noqa: E402

from onnx_test_util import PKG, const, imp, model, node, vi  # noqa: E402,F401  (sys.path: engine/onnx)
import mlsys_onnx  # noqa: E402
from mlsys_onnx import OnnxImportError  # noqa: E402


def core(p):
    """The parts of a problem the tests compare exactly."""
    return {k: p[k] for k in ("widths", "heights", "inputs", "outputs", "base_costs", "op_types", "op_names")} | {
        "cuts": [(c["from"], c["to"], c["why"]) for c in p["onnx"]["cuts"]]}


def expect(p, widths, heights, inputs, outputs, costs, types, names, cuts=()):
    assert core(p) == {"widths": widths, "heights": heights, "inputs": inputs, "outputs": outputs,
                       "base_costs": costs, "op_types": types, "op_names": names, "cuts": list(cuts)}


# ----- rule 5: MatMul, Gemm, per-head MatMul ---------------------------------------------------

def test_plain_matmul():
    m = model([node("MatMul", ["x", "w"], ["y"], "mm")], [("x", [64, 32]), ("w", [32, 16])], ["y"])
    p = imp(m)
    expect(p, [32, 16, 16], [64, 32, 64], [[0, 1]], [[2]], [32], ["MatMul"], ["mm"])
    assert p["fast_memory_capacity"] == 1048576 and p["slow_memory_bandwidth"] == 64
    assert p["native_granularity"] == [128, 128]
    assert p["onnx"]["tensor_names"] == ["x", "w", "y"]


def test_gemm_transb_on_weight_folds_transa_on_activation_cuts():
    # relu [8,16]; Gemm(relu^T [16,8], w^T [8,4]) + bias [4] (folded)
    m = model([node("Relu", ["x"], ["r"], "relu"),
               node("Gemm", ["r", "w", "b"], ["y"], "gemm", transA=1, transB=1)],
              [("x", [8, 16]), ("w", [4, 8]), ("b", [4])], ["y"])
    p = imp(m)
    expect(p, widths=[16, 16, 8, 4, 4], heights=[8, 8, 16, 8, 16],
           inputs=[[0], [2, 3]], outputs=[[1], [4]], costs=[16, 8], types=["Pointwise", "MatMul"],
           names=["relu", "gemm"], cuts=[(1, 2, "transpose")])
    assert p["onnx"]["tensor_names"][3] == "w@T"


def test_batched_matmul_per_head_with_broadcast_weight():
    # [2,4,8] x [2,8,4] -> two MatMuls; relu part by part; wl [3,4] x relu [2,4,4]: wl shared
    m = model([node("MatMul", ["x", "b"], ["s"], "mm1"), node("Relu", ["s"], ["r"], "relu"),
               node("MatMul", ["wl", "r"], ["y"], "mm2")],
              [("x", [2, 4, 8]), ("b", [2, 8, 4]), ("wl", [3, 4])], ["y"])
    p = imp(m)
    expect(p, widths=[8, 4, 4, 8, 4, 4, 4, 4, 4, 4, 4], heights=[4, 8, 4, 4, 8, 4, 4, 4, 3, 3, 3],
           inputs=[[0, 1], [3, 4], [2], [5], [8, 6], [8, 7]], outputs=[[2], [5], [6], [7], [9], [10]],
           costs=[8, 8, 16, 16, 4, 4], types=["MatMul", "MatMul", "Pointwise", "Pointwise", "MatMul", "MatMul"],
           names=["mm1/part0", "mm1/part1", "relu/part0", "relu/part1", "mm2/part0", "mm2/part1"])


def test_batched_lhs_with_2d_weight_is_one_matmul():
    m = model([node("Relu", ["x"], ["r"], "relu"), node("MatMul", ["r", "w"], ["y"], "mm")],
              [("x", [2, 4, 8]), ("w", [8, 5])], ["y"])
    p = imp(m)
    expect(p, [8, 8, 5, 5], [8, 8, 8, 8], [[0], [1, 2]], [[1], [3]], [16, 8], ["Pointwise", "MatMul"],
           ["relu", "mm"])


def test_heads_split_and_merge_are_cuts():
    # q = x @ wq [4,16]; heads [2,4,8] (reshape+transpose: whole -> parts, a cut); per-head
    # MatMul with a source kt [2,8,4]; merge [4,8] (parts -> whole, a cut) then relu
    wshape = const("shape", [4, 2, 8], np.int64)
    mshape = const("mshape", [4, 8], np.int64)
    m = model([node("MatMul", ["x", "wq"], ["q"], "q"),
               node("Reshape", ["q", "shape"], ["q3"], "split"),
               node("Transpose", ["q3"], ["qh"], "heads", perm=[1, 0, 2]),
               node("MatMul", ["qh", "kt"], ["s"], "scores"),
               node("Transpose", ["s"], ["st"], "unheads", perm=[1, 0, 2]),
               node("Reshape", ["st", "mshape"], ["o"], "merge"),
               node("Relu", ["o"], ["y"], "relu")],
              [("x", [4, 16]), ("wq", [16, 16]), ("kt", [2, 8, 4])], ["y"], inits=[wshape, mshape])
    p = imp(m)
    expect(p, widths=[16, 16, 16, 8, 4, 4, 8, 4, 4, 8, 8], heights=[4, 16, 4, 4, 8, 4, 4, 8, 4, 4, 4],
           inputs=[[0, 1], [3, 4], [6, 7], [9]], outputs=[[2], [5], [8], [10]], costs=[16, 8, 8, 16],
           types=["MatMul", "MatMul", "MatMul", "Pointwise"],
           names=["q", "scores/part0", "scores/part1", "relu"],
           cuts=[(2, 3, "transpose"), (2, 6, "transpose"), (5, 9, "transpose"), (8, 9, "transpose")])


def test_same_tensor_on_both_sides_reads_a_copy():
    m = model([node("Relu", ["x"], ["r"], "relu"), node("MatMul", ["r", "r"], ["y"], "sq")],
              [("x", [8, 8])], ["y"])
    p = imp(m)
    expect(p, [8] * 4, [8] * 4, [[0], [1], [1, 2]], [[1], [2], [3]], [16, 16, 8],
           ["Pointwise", "Pointwise", "MatMul"], ["relu", "sq/copy", "sq"])


# ----- rule 6: convolutions -----------------------------------------------------------------

def test_conv_on_graph_input_3x3_after_relu_and_1x1():
    m = model([node("Conv", ["x", "w0"], ["c0"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
               node("Relu", ["c0"], ["r"], "relu"),
               node("Conv", ["r", "w1"], ["c1"], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
               node("Conv", ["c1", "w2"], ["y"], "conv2", kernel_shape=[1, 1])],
              [("x", [1, 4, 8, 8]), ("w0", [8, 4, 3, 3]), ("w1", [8, 8, 3, 3]), ("w2", [16, 8, 1, 1])], ["y"])
    p = imp(m)
    expect(p, widths=[36, 8, 8, 8, 72, 8, 8, 16, 16], heights=[64, 36, 64, 64, 64, 72, 64, 8, 64],
           inputs=[[0, 1], [2], [4, 5], [6, 7]], outputs=[[2], [3], [6], [8]], costs=[36, 16, 72, 8],
           types=["MatMul", "Pointwise", "MatMul", "MatMul"], names=["conv0", "relu", "conv1", "conv2"],
           cuts=[(3, 4, "im2col")])


def test_depthwise_conv_same_size_and_strided():
    # 1x1 conv on the graph input (read channels-last, no cut); depthwise 3x3 pad 1 reads it as it
    # is; depthwise stride 2 reads a gather to its output's shape (a cut)
    m = model([node("Conv", ["x", "w"], ["c0"], "pw", kernel_shape=[1, 1]),
               node("Conv", ["c0", "wd"], ["d1"], "dw1", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8),
               node("Conv", ["d1", "wd"], ["y"], "dw2", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8,
                    strides=[2, 2])],
              [("x", [1, 8, 8, 8]), ("w", [8, 8, 1, 1]), ("wd", [8, 1, 3, 3])], ["y"])
    p = imp(m)
    expect(p, widths=[8] * 6, heights=[64, 8, 64, 64, 16, 16], inputs=[[0, 1], [2], [4]],
           outputs=[[2], [3], [5]], costs=[8, 288, 288], types=["MatMul", "Pointwise", "Pointwise"],
           names=["pw", "dw1", "dw2"], cuts=[(3, 4, "conv-window")])
    assert p["onnx"]["tensor_names"][0] == "x@nhwc"


def test_grouped_conv_is_unsupported():
    m = model([node("Conv", ["x", "w"], ["y"], "gconv", kernel_shape=[1, 1], group=2)],
              [("x", [1, 8, 4, 4]), ("w", [8, 4, 1, 1])], ["y"])
    with pytest.raises(OnnxImportError, match=r"node 'gconv' \(#0, op Conv\) is not supported: grouped"):
        imp(m)


# ----- rule 7: BatchNormalization -------------------------------------------------------------

def test_batchnorm_folded_into_conv_and_as_pointwise():
    bn = [const(n, np.ones(8)) for n in ("s", "b", "mu", "var")]
    m = model([node("Conv", ["x", "w"], ["c"], "conv", kernel_shape=[1, 1]),
               node("BatchNormalization", ["c", "s", "b", "mu", "var"], ["n1"], "bn1"),
               node("Relu", ["n1"], ["r"], "relu"),
               node("BatchNormalization", ["r", "s", "b", "mu", "var"], ["y"], "bn2")],
              [("x", [1, 4, 8, 8]), ("w", [8, 4, 1, 1])], ["y"], inits=bn)
    p = imp(m)
    expect(p, [4, 8, 8, 8, 8], [64, 4, 64, 64, 64], [[0, 1], [2], [3]], [[2], [3], [4]], [4, 16, 32],
           ["MatMul", "Pointwise", "Pointwise"], ["conv", "relu", "bn2"])
    assert p["onnx"]["folded_batchnorm"] == ["bn1"]


# ----- rules 7-8: elementwise ---------------------------------------------------------------

def test_elementwise_chain_with_folded_broadcast_bias():
    m = model([node("Add", ["x", "bias"], ["a"], "add"), node("Mul", ["a", "half"], ["h"], "mul"),
               node("Sigmoid", ["h"], ["y"], "sig")],
              [("x", [16, 32]), ("bias", [32])], ["y"], inits=[const("half", 0.5)])
    p = imp(m)
    expect(p, [32] * 4, [16] * 4, [[0], [1], [2]], [[1], [2], [3]], [16, 16, 128], ["Pointwise"] * 3,
           ["add", "mul", "sig"])


def test_arithmetic_identities_are_no_ops():
    # x * 1 (torch's baddbmm before a masked Softmax), 1 * x, x / 1, x + 0, x - 0: the value passes
    # through; x * 2 and 0 - x are ops.
    m = model([node("Relu", ["x"], ["r"], "relu"), node("Mul", ["r", "one"], ["a"], "mul1"),
               node("Mul", ["one", "a"], ["b"], "mul1b"), node("Div", ["b", "one"], ["c"], "div1"),
               node("Add", ["c", "zero"], ["d"], "add0"), node("Sub", ["d", "zero"], ["e"], "sub0"),
               node("Mul", ["e", "two"], ["f"], "mul2"), node("Sub", ["zero", "f"], ["y"], "neg")],
              [("x", [16, 32])], ["y"], inits=[const("one", 1.0), const("zero", 0.0), const("two", 2.0)])
    p = imp(m)
    expect(p, [32] * 4, [16] * 4, [[0], [1], [2]], [[1], [2], [3]], [16, 16, 16], ["Pointwise"] * 3,
           ["relu", "mul2", "neg"])


def test_add_with_same_shape_constant_is_an_input():
    m = model([node("Relu", ["x"], ["r"], "relu"), node("Add", ["r", "c"], ["y"], "add")],
              [("x", [16, 32])], ["y"], inits=[const("c", np.full((16, 32), 0.5))])
    p = imp(m)
    expect(p, [32] * 4, [16] * 4, [[0], [1, 2]], [[1], [3]], [16, 16], ["Pointwise"] * 2, ["relu", "add"])
    assert p["onnx"]["tensor_names"][2] == "c"


def test_broadcast_activation_is_a_cut():
    m = model([node("ReduceMax", ["x"], ["mx"], "max", axes=[1]), node("Relu", ["x"], ["r"], "relu"),
               node("Sub", ["r", "mx2"], ["y"], "sub"), node("Relu", ["mx"], ["mx2"], "relu2")],
              [("x", [16, 32])], ["y"])
    m.graph.node.insert(2, m.graph.node.pop(3))
    with pytest.raises(OnnxImportError, match="ReduceMax"):
        imp(m)
    p = imp(m, skip_unsupported=True)
    # max (bridged) reads x given in its output's shape [16, 1]; sub reads relu2 [16, 1]
    # broadcast to [16, 32]: a cut
    expect(p, widths=[1, 1, 32, 32, 1, 32, 32], heights=[16] * 7, inputs=[[0], [2], [1], [3, 5]],
           outputs=[[1], [3], [4], [6]], costs=[16] * 4, types=["Pointwise"] * 4,
           names=["max", "relu", "relu2", "sub"], cuts=[(4, 5, "broadcast")])
    assert p["onnx"]["skipped"][0]["node"] == "max"


def test_softmax_and_layernorm():
    m = model([node("LayerNormalization", ["x", "g", "b"], ["n"], "ln", axis=-1),
               node("Softmax", ["n"], ["y"], "sm", axis=-1)],
              [("x", [16, 32]), ("g", [32]), ("b", [32])], ["y"])
    p = imp(m)
    expect(p, [32] * 3, [16] * 3, [[0], [1]], [[1], [2]], [192, 160], ["Pointwise"] * 2, ["ln", "sm"])


def test_softmax_not_on_last_axis_is_unsupported():
    m = model([node("Relu", ["x"], ["r"], "relu"), node("Softmax", ["r"], ["y"], "sm", axis=0)],
              [("x", [16, 32])], ["y"])
    with pytest.raises(OnnxImportError, match=r"node 'sm' \(#1, op Softmax\) .*axis 0"):
        imp(m)


# ----- rules 3-4: views and cuts ------------------------------------------------------------

def test_views_of_leading_axes_and_a_transpose_cut():
    shape = const("shape", [2, 16, 16], np.int64)
    m = model([node("Relu", ["x"], ["r"], "relu"),
               node("Transpose", ["r"], ["t1"], "lead", perm=[1, 0, 2]),
               node("Relu", ["t1"], ["y1"], "relu_lead"),
               node("Reshape", ["r", "shape"], ["rs"], "reshape"),
               node("Relu", ["rs"], ["y2"], "relu_reshape"),
               node("Transpose", ["r"], ["t2"], "swap", perm=[0, 2, 1]),
               node("Relu", ["t2"], ["y3"], "relu_swap")],
              [("x", [4, 8, 16])], ["y1", "y2", "y3"], inits=[shape])
    p = imp(m)
    expect(p, widths=[16, 16, 16, 16, 8, 8], heights=[32, 32, 32, 32, 64, 64],
           inputs=[[0], [1], [1], [4]], outputs=[[1], [2], [3], [5]], costs=[16] * 4, types=["Pointwise"] * 4,
           names=["relu", "relu_lead", "relu_reshape", "relu_swap"], cuts=[(1, 4, "transpose")])


def test_channels_last_round_trip_is_a_view():
    # ConvNeXt: conv (channels-last) -> NHWC transpose -> LayerNorm -> NCHW transpose -> residual
    # add -> 1x1 conv: every read is a view
    m = model([node("Conv", ["x", "w"], ["c"], "conv", kernel_shape=[1, 1]),
               node("Transpose", ["c"], ["nhwc"], "to_nhwc", perm=[0, 2, 3, 1]),
               node("LayerNormalization", ["nhwc", "g", "b"], ["ln"], "ln", axis=-1),
               node("Transpose", ["ln"], ["nchw"], "to_nchw", perm=[0, 3, 1, 2]),
               node("Add", ["c", "nchw"], ["a"], "add"),
               node("Conv", ["a", "w2"], ["y"], "conv2", kernel_shape=[1, 1])],
              [("x", [1, 4, 4, 4]), ("w", [8, 4, 1, 1]), ("g", [8]), ("b", [8]), ("w2", [8, 8, 1, 1])], ["y"])
    p = imp(m)
    expect(p, widths=[4, 8, 8, 8, 8, 8, 8], heights=[16, 4, 16, 16, 16, 8, 16], inputs=[[0, 1], [2], [2, 3], [4, 5]],
           outputs=[[2], [3], [4], [6]], costs=[4, 192, 16, 8], types=["MatMul", "Pointwise", "Pointwise", "MatMul"],
           names=["conv", "ln", "add", "conv2"])


def test_square_transpose_is_a_cut():
    m = model([node("Relu", ["x"], ["r"], "relu"), node("Transpose", ["r"], ["t"], "tr", perm=[1, 0]),
               node("Relu", ["t"], ["y"], "relu2")], [("x", [8, 8])], ["y"])
    p = imp(m)
    assert core(p)["cuts"] == [(1, 2, "transpose")]


def test_global_average_pool_then_flatten_view():
    m = model([node("Conv", ["x", "w"], ["c"], "conv", kernel_shape=[1, 1]),
               node("Relu", ["c"], ["r"], "relu"),
               node("GlobalAveragePool", ["r"], ["g"], "gap"),
               node("Flatten", ["g"], ["f"], "flat"),
               node("Gemm", ["f", "w2"], ["y"], "fc", transB=1)],
              [("x", [2, 3, 4, 4]), ("w", [8, 3, 1, 1]), ("w2", [10, 8])], ["y"])
    p = imp(m)
    expect(p, widths=[3, 8, 8, 8, 32, 8, 10, 10], heights=[32, 3, 32, 32, 2, 2, 8, 2],
           inputs=[[0, 1], [2], [4, 3], [5, 6]], outputs=[[2], [3], [5], [7]], costs=[3, 16, 32, 8],
           types=["MatMul", "Pointwise", "MatMul", "MatMul"], names=["conv", "relu", "gap", "fc"])
    assert p["onnx"]["tensor_names"][4] == "gap/avg@avg"


def test_reduce_mean_over_the_last_axis_is_a_matmul_by_ones():
    m = model([node("Relu", ["x"], ["r"], "relu"), node("ReduceMean", ["r"], ["mu"], "mean", axes=[-1]),
               node("Sub", ["r", "mu"], ["y"], "sub")], [("x", [16, 32])], ["y"])
    p = imp(m)
    expect(p, widths=[32, 32, 1, 1, 32, 32], heights=[16, 16, 32, 16, 16, 16], inputs=[[0], [1, 2], [1, 4]],
           outputs=[[1], [3], [5]], costs=[16, 32, 16], types=["Pointwise", "MatMul", "Pointwise"],
           names=["relu", "mean", "sub"], cuts=[(3, 4, "broadcast")])


def test_maxpool_reads_a_window_cut():
    m = model([node("Conv", ["x", "w"], ["c"], "conv", kernel_shape=[1, 1]),
               node("MaxPool", ["c"], ["y"], "pool", kernel_shape=[2, 2], strides=[2, 2])],
              [("x", [1, 4, 8, 8]), ("w", [4, 4, 1, 1])], ["y"])
    p = imp(m)
    expect(p, [4, 4, 4, 4, 4], [64, 4, 64, 16, 16], [[0, 1], [3]], [[2], [4]], [4, 64],
           ["MatMul", "Pointwise"], ["conv", "pool"], cuts=[(2, 3, "pool-window")])


def test_concat_of_activations_is_a_cut():
    m = model([node("Relu", ["x"], ["a"], "ra"), node("Relu", ["z"], ["b"], "rb"),
               node("Concat", ["a", "b"], ["c"], "cat", axis=0), node("Relu", ["c"], ["y"], "rc")],
              [("x", [4, 8]), ("z", [4, 8])], ["y"])
    p = imp(m)
    expect(p, [8] * 6, [4, 4, 4, 4, 8, 8], [[0], [2], [4]], [[1], [3], [5]], [16] * 3, ["Pointwise"] * 3,
           ["ra", "rb", "rc"], cuts=[(1, 4, "concat"), (3, 4, "concat")])
    assert p["onnx"]["cuts"][0]["via"] == "cat"


def test_shape_ops_and_concat_on_sources_fold():
    # a weight given as [4, 8] -> transposed, concatenated with another: one graph input [8, 8]
    m = model([node("Transpose", ["w1"], ["t"], "t", perm=[1, 0]),
               node("Concat", ["t", "w2"], ["w"], "cat", axis=1),
               node("MatMul", ["x", "w"], ["y"], "mm")],
              [("x", [2, 8]), ("w1", [4, 8]), ("w2", [8, 4])], ["y"])
    p = imp(m)
    expect(p, [8, 8, 8], [2, 8, 2], [[0, 1]], [[2]], [8], ["MatMul"], ["mm"])


# ----- rule 12: dead code; rule 14: dims; rule 11: unsupported --------------------------------

def test_dead_code_is_dropped():
    m = model([node("Sigmoid", ["x"], ["dead"], "dead"),
               node("Relu", ["x"], ["r2"], "shape_only"),
               node("Shape", ["r2"], ["s"], "shape"),
               node("Relu", ["x"], ["r"], "relu"),
               node("Reshape", ["r", "s"], ["y"], "reshape")],
              [("x", [4, 8])], ["y"])
    p = imp(m)
    expect(p, [8, 8], [4, 4], [[0]], [[1]], [16], ["Pointwise"], ["relu"])


def test_symbolic_dim_bound_and_missing():
    m = model([node("MatMul", ["x", "w"], ["y"], "mm")], [("x", ["batch", 32]), ("w", [32, 16])], ["y"])
    with pytest.raises(OnnxImportError, match=r"'batch' \(input 'x' axis 0\).*--dim NAME=VALUE"):
        imp(m)
    p = imp(m, dims={"batch": 256})
    expect(p, [32, 16, 16], [256, 32, 256], [[0, 1]], [[2]], [32], ["MatMul"], ["mm"])
    assert p["onnx"]["dims"] == {"batch": 256}
    with pytest.raises(OnnxImportError, match="positive integer"):
        imp(m, dims={"batch": 0})


def test_unnamed_dim_and_shape_that_stays_unknown():
    m = model([node("MatMul", ["x", "w"], ["y"], "mm")], [("x", [None, 32]), ("w", [32, 16])], ["y"])
    with pytest.raises(OnnxImportError, match=r"'x:0' \(input 'x' axis 0\).*--dim INPUT:AXIS=VALUE"):
        imp(m)
    assert imp(m, dims={"x:0": 8})["heights"] == [8, 32, 8]
    # a Reshape to a shape read from a data input: no static shape (rule 14)
    g = helper.make_graph([node("Relu", ["x"], ["r"], "relu"), node("Reshape", ["r", "s"], ["t"], "reshape"),
                           node("Relu", ["t"], ["y"], "relu2")], "g",
                          [vi("x", [4, 8]), helper.make_tensor_value_info("s", TensorProto.INT64, [2])], [vi("y", None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match=r"tensor 't' \(the output of node 'reshape' .*: ONNX shape inference"):
        imp(m)


def test_dims_flow_through_shape_arithmetic():
    # Shape -> Gather -> Concat -> Reshape, as torch exports a flatten with a dynamic batch
    m = model([node("Relu", ["x"], ["r"], "relu"), node("Shape", ["r"], ["s"], "shape"),
               node("Gather", ["s", "zero"], ["n"], "gather", axis=0),
               node("Unsqueeze", ["n", "ax0"], ["n1"], "unsq"),
               node("Concat", ["n1", "minus1"], ["sh"], "cat", axis=0),
               node("Reshape", ["r", "sh"], ["f"], "flatten"),
               node("MatMul", ["f", "w"], ["y"], "mm")],
              [("x", ["b", 2, 4]), ("w", [8, 3])], ["y"],
              inits=[const("zero", 0, np.int64), const("ax0", [0], np.int64), const("minus1", [-1], np.int64)])
    p = imp(m, dims={"b": 5})
    # relu [10, 4] -> reshape [5, 8]: a different 2-D shape, a cut
    expect(p, [4, 4, 8, 3, 3], [10, 10, 5, 8, 5], [[0], [2, 3]], [[1], [4]], [16, 8],
           ["Pointwise", "MatMul"], ["relu", "mm"], cuts=[(1, 2, "reshape")])


def test_unsupported_op_error_and_bridge():
    m = model([node("Relu", ["x"], ["r"], "relu"),
               node("InstanceNormalization", ["r", "s", "b"], ["n"], "inorm"),
               node("Relu", ["n"], ["y"], "relu2")],
              [("x", [1, 4, 8, 8]), ("s", [4]), ("b", [4])], ["y"])
    with pytest.raises(OnnxImportError) as e:
        imp(m)
    assert str(e.value) == ("node 'inorm' (#1, op InstanceNormalization) is not supported: no lowering rule for "
                            "op InstanceNormalization; --skip-unsupported bridges it as a Pointwise")
    p = imp(m, skip_unsupported=True)
    expect(p, [8] * 4, [32] * 4, [[0], [1], [2]], [[1], [2], [3]], [16, 16, 16], ["Pointwise"] * 3,
           ["relu", "inorm", "relu2"])
    assert p["onnx"]["skipped"] == [{"node": "inorm", "index": 1, "op_type": "InstanceNormalization",
                                     "reason": "no lowering rule for op InstanceNormalization"}]


def test_accelerator_parameters():
    m = model([node("MatMul", ["x", "w"], ["y"], "mm"), node("Erf", ["y"], ["z"], "erf")],
              [("x", [64, 300]), ("w", [300, 16])], ["z"])
    p = imp(m, accelerator={"native": 64, "matmul_throughput": 1000, "pointwise_throughput": 100,
                            "capacity": 5000, "bandwidth": 7})
    # ceil(2*64*64*300/1000) = 2458; ceil(64*64*8/100) = 328
    assert p["base_costs"] == [2458, 328]
    assert (p["native_granularity"], p["fast_memory_capacity"], p["slow_memory_bandwidth"]) == ([64, 64], 5000, 7)
    with pytest.raises(OnnxImportError, match="bandwidth"):
        imp(m, accelerator={"bandwidth": 0})


# ----- bad files and the command line -----------------------------------------------------------

def small_model():
    return model([node("Relu", ["x"], ["r"], "relu"), node("MatMul", ["r", "w"], ["y"], "mm")],
                 [("x", [128, 256]), ("w", [256, 128])], ["y"])


def test_truncated_and_non_onnx_files(tmp_path):
    data = small_model().SerializeToString()
    bad = tmp_path / "trunc.onnx"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(OnnxImportError, match="trunc.onnx"):
        imp(str(bad))
    js = tmp_path / "problem.json"
    js.write_text(json.dumps({"widths": [1]}))
    with pytest.raises(OnnxImportError, match="is JSON text, not an ONNX model"):
        imp(str(js))
    with pytest.raises(OnnxImportError, match="cannot read"):
        imp(str(tmp_path / "missing.onnx"))


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=PKG)
    return subprocess.run([sys.executable, "-m", "mlsys_onnx", *args], env=env, capture_output=True, text=True)


def test_cli_exit_codes_and_atomic_output(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(small_model(), str(src))
    out = tmp_path / "p.json"
    r = run_cli(str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "2 ops (1 MatMul, 1 Pointwise)" in r.stderr
    assert json.loads(out.read_text())["op_names"] == ["relu", "mm"]
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage" * 3)
    out2 = tmp_path / "q.json"
    r = run_cli(str(bad), "-o", str(out2))
    assert r.returncode == 1 and "error" in r.stderr
    assert not out2.exists()
    r = run_cli(str(src), "-o", str(out2), "--dim", "batch=x")
    assert r.returncode == 1 and "positive integer" in r.stderr
    r = run_cli(str(src), "-o", str(out2), "--dim", "batch")
    assert r.returncode == 2
    r = run_cli(str(src))
    assert r.returncode == 2
    r = run_cli(str(src), "-o", str(out2), "--bandwidth", "0")
    assert r.returncode == 1
    assert sorted(os.listdir(tmp_path)) == ["bad.onnx", "m.onnx", "p.json"]  # no temporary files left
    assert run_cli("--help").returncode == 0


def attention_model():
    """A small attention block: heads split (a cut), per-head MatMuls, softmax, heads merged."""
    s3 = const("s3", [128, 2, 64], np.int64)
    s2 = const("s2", [128, 128], np.int64)
    nodes = [node("MatMul", ["x", "wq"], ["q"], "q"), node("MatMul", ["x", "wk"], ["k"], "k"),
             node("Reshape", ["q", "s3"], ["q3"], "q3"), node("Transpose", ["q3"], ["qh"], "qh", perm=[1, 0, 2]),
             node("Reshape", ["k", "s3"], ["k3"], "k3"), node("Transpose", ["k3"], ["kt"], "kt", perm=[1, 2, 0]),
             node("MatMul", ["qh", "kt"], ["s"], "scores"), node("Softmax", ["s"], ["p"], "softmax"),
             node("MatMul", ["p", "qh"], ["o"], "pv"), node("Transpose", ["o"], ["ot"], "ot", perm=[1, 0, 2]),
             node("Reshape", ["ot", "s2"], ["o2"], "merge"), node("MatMul", ["o2", "wo"], ["y"], "out")]
    return model(nodes, [("x", [128, 128]), ("wq", [128, 128]), ("wk", [128, 128]), ("wo", [128, 128])], ["y"],
                 inits=[s3, s2])


def test_attention_block():
    p = imp(attention_model())
    assert p["op_names"] == ["q", "k", "scores/part0", "scores/part1", "softmax/part0", "softmax/part1",
                             "pv/part0", "pv/part1", "out"]
    assert sorted({c[2] for c in core(p)["cuts"]}) == ["transpose"]
    assert len(p["onnx"]["cuts"]) == 2 + 2 + 2  # q split (2 parts), k split (2 parts), merge (2 parts)


@pytest.mark.skipif(not os.environ.get("MLSYS_BIN"), reason="MLSYS_BIN (the mlsys binary) not set")
def test_imported_problems_solve_and_evaluate(tmp_path):
    conv = model([node("Conv", ["x", "w0"], ["c0"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  node("Relu", ["c0"], ["r"], "relu"),
                  node("Conv", ["r", "w1"], ["c1"], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                  node("Add", ["c1", "r"], ["a"], "add"),
                  node("GlobalAveragePool", ["a"], ["g"], "gap"), node("Flatten", ["g"], ["f"], "flat"),
                  node("Gemm", ["f", "fc"], ["y"], "fc", transB=1)],
                 [("x", [1, 16, 32, 32]), ("w0", [64, 16, 3, 3]), ("w1", [64, 64, 3, 3]), ("fc", [10, 64])], ["y"])
    for name, m in (("conv", conv), ("attention", attention_model())):
        pj, sj = tmp_path / f"{name}.json", tmp_path / f"{name}.out.json"
        pj.write_text(mlsys_onnx.to_json(imp(m)))
        r = subprocess.run([os.environ["MLSYS_BIN"], "solve", str(pj), str(sj), "-s", "0.5", "-q"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([os.environ["MLSYS_BIN"], "evaluate", str(pj), str(sj)], capture_output=True, text=True)
        assert r.returncode == 0 and "valid: yes" in r.stdout, r.stdout + r.stderr
