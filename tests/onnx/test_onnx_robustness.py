"""Regression tests of the ONNX importer against hostile or broken input: invalid nodes refused
before ONNX shape inference can crash on them, one-line errors (never a traceback), the reader's
limits on the written problem, constant folding that allocates nothing huge, the fixpoint of
inference and folding, and the command line's handling of odd files and signals.

Run: PYTHONPATH=engine/onnx python3 -m pytest -q tests/onnx   (Debian's python3-onnx, -numpy)
"""
import json
import os
import stat
import subprocess
import sys

import pytest

onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
from onnx import TensorProto, helper  # noqa: E402

from onnx_test_util import PKG, const, imp, model, node, vi  # noqa: E402,F401  (sys.path: engine/onnx)
from mlsys_onnx import OnnxImportError, cli, fold, graph  # noqa: E402

X = [("x", [1, 4, 8, 8])]


def run_cli(*args, code=None):
    """python3 -m mlsys_onnx ARGS (or, with code, a script run before cli.main(ARGS))."""
    env = dict(os.environ, PYTHONPATH=PKG)
    pre = [sys.executable, "-m", "mlsys_onnx"] if code is None else [
        sys.executable, "-c", code + "\nimport sys\nfrom mlsys_onnx import cli\nsys.exit(cli.main(sys.argv[1:]))"]
    return subprocess.run(pre + [str(a) for a in args], env=env, capture_output=True, text=True, timeout=120)


# ----- 1. window attributes are checked before shape inference (a zero stride is a SIGFPE there)

def test_zero_strides_and_bad_windows_refused_before_shape_inference(tmp_path):
    w = const("w", np.ones([4, 4, 3, 3]))
    cases = {
        "conv_s0": ([node("Relu", ["x"], ["a"]), node("Conv", ["a", "w"], ["y"], "conv", strides=[0, 0])], [w],
                    r"node 'conv' \(#1, op Conv\) is invalid: attribute 'strides' is \[0, 0\]"),
        "maxpool_s0": ([node("MaxPool", ["x"], ["y"], "mp", kernel_shape=[2, 2], strides=[0, 0])], [],
                       r"node 'mp' \(#0, op MaxPool\) is invalid: attribute 'strides'"),
        "avgpool_s0": ([node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[0, 0])], [],
                       r"node 'AveragePool_0' \(#0, op AveragePool\) is invalid: attribute 'strides'"),
        "lppool_s0": ([node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[0, 0])], [], "op LpPool.*strides"),
        "convT_s0": ([node("ConvTranspose", ["x", "w"], ["y"], strides=[0, 0])], [w], "op ConvTranspose.*strides"),
        "dil0": ([node("Conv", ["x", "w"], ["y"], dilations=[0, 1])], [w], "'dilations' is \\[0, 1\\]"),
        "k0": ([node("MaxPool", ["x"], ["y"], kernel_shape=[0, 2])], [], "'kernel_shape' is \\[0, 2\\]"),
        "negpad": ([node("Conv", ["x", "w"], ["y"], pads=[-1, 0, 0, 0])], [w], "'pads' is .* non-negative"),
        "group0": ([node("Conv", ["x", "w"], ["y"], group=0)], [w], "'group' is 0"),
    }
    paths = {}
    for name, (nodes, inits, _) in cases.items():
        paths[name] = tmp_path / f"{name}.onnx"
        onnx.save(model(nodes, X, ["y"], inits), str(paths[name]))
    # In a child process: were a check missing, inference would kill it (SIGFPE), not this one.
    code = ("import sys, mlsys_onnx\nfor p in sys.argv[1:]:\n    try:\n        mlsys_onnx.import_model(p)\n"
            "        print('ok')\n    except mlsys_onnx.OnnxImportError as e:\n        print(e)\n")
    r = subprocess.run([sys.executable, "-c", code, *map(str, paths.values())], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=PKG), timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr)
    lines = r.stdout.splitlines()
    assert len(lines) == len(cases)
    for line, (name, (_, _, pattern)) in zip(lines, cases.items()):
        assert "is invalid" in line, (name, line)
        assert __import__("re").search(pattern, line), (name, line)
    r = run_cli(paths["conv_s0"], "-o", tmp_path / "p.json")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "strides" in r.stderr
    assert not (tmp_path / "p.json").exists()


# ----- 2 and 13. invalid nodes are named; no traceback ever ---------------------------------------

@pytest.mark.parametrize("nodes,inputs,inits,pattern", [
    ([node("MatMul", ["x"], ["y"])], [("x", [4, 4])], [], r"'MatMul_0' \(#0, op MatMul\) is invalid: it has 1 input; "
                                                          r"MatMul \(opset 17\) takes 2"),
    ([node("Gemm", ["x"], ["y"])], [("x", [4, 4])], [], "op Gemm.*takes 2 to 3"),
    ([node("Conv", ["x"], ["y"])], X, [], "op Conv.*takes 2 to 3"),
    ([node("Relu", ["x", "x"], ["y"])], [("x", [4, 4])], [], "op Relu.*2 inputs; Relu .* takes 1"),
    ([node("Add", ["x", "x", "x"], ["y"])], [("x", [4, 4])], [], "op Add.*3 inputs"),
    ([node("Relu", ["x"], ["y"]), node("Sigmoid", ["x"], ["y"])], [("x", [4, 4])], [],
     r"'Sigmoid_1' \(#1, op Sigmoid\) is invalid: its output 'y' is already the output of node #0"),
    ([node("Relu", ["b"], ["a"]), node("Relu", ["a"], ["b"])], [("x", [4, 4])], [], "not in topological order"),
    ([node("Relu", ["q"], ["y"])], [("x", [4, 4])], [], "its input 'q' is no graph input"),
    ([node("Relu", ["x"], ["a"]), node("MaxPool", ["a"], ["y"])], X, [], "no attribute 'kernel_shape'"),
    ([node("Relu", ["x"], ["a"]), node("Conv", ["a", "w"], ["y"])], X, [const("w", np.ones([4, 4, 3]))],
     r"'Conv_1' \(#1, op Conv\) is invalid: its weight 'w' has rank 3"),
    ([node("Relu", ["x"], ["a"]), node("Conv", ["a", "w"], ["y"])], X, [const("w", np.ones([4, 3, 3, 3]))],
     "3 input channels per group x group 1 but its input .* has 4 channels"),
    ([node("Relu", ["x"], ["a"]), node("Conv", ["a", "w"], ["y"], kernel_shape=[5, 5])], X,
     [const("w", np.ones([4, 4, 3, 3]))], r"kernel_shape \[5, 5\] disagrees with its weight"),
    ([node("Relu", ["x"], ["a"]), node("Conv", ["a", "w"], ["y"])], X, [const("w", np.ones([4, 4, 9, 9]))],
     "the window does not fit"),
    ([node("Relu", ["x"], ["a"]), node("Transpose", ["a"], ["y"], perm=[1, 0])], X, [], "perm .* not a permutation"),
    ([node("Relu", ["x"], ["a"]), node("Concat", ["a", "a"], ["y"], axis=9)], X, [], "axis 9 is out of range"),
    ([node("Relu", ["x"], ["a"]), node("Slice", ["a", "s", "e", "ax", "st"], ["y"])], X,
     [const(n, v, np.int64) for n, v in (("s", [0]), ("e", [4]), ("ax", [1]), ("st", [0]))], "steps .* contain 0"),
    ([node("Relu", ["x"], ["a"]), node("Tile", ["a", "r"], ["y"])], X, [const("r", [1, -1, 1, 1], np.int64)],
     "negative count"),
    ([node("Relu", ["x"], ["a"]), node("Expand", ["a", "r"], ["y"])], X, [const("r", [3, 5, 8, 8], np.int64)],
     "cannot be broadcast"),
])
def test_invalid_nodes_are_refused_by_name(nodes, inputs, inits, pattern):
    m = model(nodes, inputs, ["y"], inits)
    with pytest.raises(OnnxImportError, match=pattern):
        imp(m)
    with pytest.raises(OnnxImportError, match="is invalid"):  # not bridged: the model is wrong
        imp(m, skip_unsupported=True)


def test_last_resort_catch_all_memory_error_and_interrupt(tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(model([node("Relu", ["x"], ["y"])], [("x", [4, 4])], ["y"]), str(src))
    out = tmp_path / "p.json"
    for exc, rc, want in (("ZeroDivisionError('boom\\nline two')", 1,
                           "internal error: ZeroDivisionError: boom line two (please report it with the model)\n"),
                          ("MemoryError()", 1, "error: out of memory while importing"),
                          ("KeyboardInterrupt()", 130, "")):
        code = f"import mlsys_onnx.cli as c\ndef bad(*a, **k):\n    raise {exc}\nc.import_model = bad"
        r = run_cli(src, "-o", out, code=code)
        assert r.returncode == rc, r.stderr
        assert "Traceback" not in r.stderr and r.stderr.count("\n") == (1 if want else 0)
        assert want in r.stderr
    assert not out.exists()


def test_non_utf8_and_control_character_names():
    m = model([node("Relu", ["x"], ["h"], "NNNN"), node("Relu", ["h"], ["y"], "MMMM")], [("x", [4, 4])], ["y"])
    data = m.SerializeToString().replace(b"NNNN", b"\xff\xfeNN").replace(b"MMMM", b"a\nb\x01")
    bad = onnx.ModelProto()
    bad.ParseFromString(data)
    p = imp(bad)
    assert p["op_names"] == ["\ufffd\ufffdNN", "a\nb\x01"]
    long = "n" * 300
    m = model([node("Relu", ["x"], ["h"], "ctl\n\x7f"), node("Hardmax", ["h"], ["y"], long)], [("x", [4, 4])], ["y"])
    with pytest.raises(OnnxImportError, match=r"node 'n{200}\.\.\. \(300 bytes in all\)' \(#1, op Hardmax\)"):
        imp(m)
    m = model([node("Hardmax", ["x"], ["y"], "ctl\n\x7f")], [("x", [4, 4])], ["y"])
    with pytest.raises(OnnxImportError, match=r"node 'ctl\\x0a\\x7f' \(#0"):
        imp(m)


def test_dim_and_throughput_overflows_are_clear_errors(tmp_path):
    m = model([node("Relu", ["x"], ["y"])], [("x", ["b", 4])], ["y"])
    with pytest.raises(OnnxImportError, match="dim 'b' = .* too large"):
        imp(m, dims={"b": 1 << 63})
    src = tmp_path / "m.onnx"
    onnx.save(m, str(src))
    r = run_cli(src, "-o", tmp_path / "p.json", "--dim", "b=99999999999999999999999")
    assert r.returncode == 1 and "too large" in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(OnnxImportError, match="matmul_throughput 1e-320 is too small"):
        imp(m, dims={"b": 4}, accelerator={"matmul_throughput": 1e-320})
    mm = model([node("MatMul", ["x", "w"], ["y"], "mm")], [("x", [4, 64]), ("w", [64, 4])], ["y"])
    with pytest.raises(OnnxImportError, match=r"op 0 'mm' \(MatMul\) has a base cost of 2,097,152,\d{3},\d{3}, above "
                                              r"the problem format's limit 2\^40.*--matmul-throughput"):
        imp(mm, accelerator={"matmul_throughput": 1e-6})
    with pytest.raises(OnnxImportError, match="bandwidth .* above the problem format's limit 2\\^40"):
        imp(mm, accelerator={"bandwidth": (1 << 40) + 1})
    with pytest.raises(OnnxImportError, match="native .* limit 2\\^24"):
        imp(mm, accelerator={"native": (1 << 24) + 1})
    with pytest.raises(OnnxImportError, match="capacity .* limit 2\\^62"):
        imp(mm, accelerator={"capacity": (1 << 62) + 1})


# ----- 3-4. the bridge and the written problem ---------------------------------------------------

def test_bridge_refuses_a_zero_size_output():
    m = model([node("Resize", ["x", "", "s"], ["y"], "rs")], X, ["y"], [const("s", [1, 1, 0, 0])])
    with pytest.raises(OnnxImportError, match=r"node 'rs' \(#0, op Resize\) is not supported \(no lowering rule.*"
                                              r"cannot be bridged either: tensor 'y' has a zero or negative dim"):
        imp(m, skip_unsupported=True)


def test_problem_limits_of_the_reader():
    m = model([node("Relu", ["x"], ["y"])], [("x", [(1 << 24) + 1, 4])], ["y"])
    with pytest.raises(OnnxImportError, match=r"tensor 'x' \(#0\) has a height \(rows\) of 16,777,217, outside the "
                                              r"problem format's range \[1, 2\^24 = 16,777,216\]"):
        imp(m)
    conv = model([node("Conv", ["x", "w"], ["y"], "conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                 [("x", ["batch", 4, 64, 64]), ("w", [8, 4, 3, 3])], ["y"])
    with pytest.raises(OnnxImportError, match=r"tensor 'x@im2col' .* 16,781,312.*2\^24.*batch=4097 given"):
        imp(conv, dims={"batch": 4097})
    assert imp(conv, dims={"batch": 1})["heights"][0] == 4096
    big = model([node("Relu", ["x"], ["y"])], [("x", [1 << 32, 1 << 32, 4])], ["y"])
    with pytest.raises(OnnxImportError, match="more than a tensor of the problem format can hold"):
        imp(big)
    mm = model([node("MatMul", ["x", "w"], ["y"], "mm")], [("x", [4, 8]), ("w", [8, 4])], ["y"])
    with pytest.raises(OnnxImportError, match=r"op 0 'mm' \(MatMul\) reads 2 tensors: its smallest working set is "
                                              r"3 elements, more than the fast memory capacity 2"):
        imp(mm, accelerator={"capacity": 2})
    assert imp(mm, accelerator={"capacity": 3})["fast_memory_capacity"] == 3


# ----- 5. constant folding allocates nothing huge -------------------------------------------------

def test_folding_checks_the_output_size_first():
    add = node("Add", ["a", "b"], ["c"])
    assert not fold.out_size_ok(add, [np.ones((65536, 1), np.float32), np.ones((1, 65536), np.float32)])
    assert fold.evaluate(add, [np.ones((3, 1)), np.ones((1, 2))])[0].shape == (3, 2)
    gather = node("Gather", ["a", "i"], ["c"], axis=0)
    assert not fold.out_size_ok(gather, [np.ones((256, 256)), np.zeros(65536, np.int64)])
    # a 512 KB model whose Add of two constants would be 2^32 elements (16 GiB): left unfolded
    m = model([node("Add", ["a", "b"], ["c"]), node("Add", ["x", "c"], ["y"], "add")], [("x", [65536, 65536])],
              ["y"], [const("a", np.ones((65536, 1))), const("b", np.ones((1, 65536)))])
    p = imp(m)
    assert p["op_names"] == ["add"] and p["heights"] == [65536] * 3
    # x * ones: a constant of 1s compared only when small; a big one is an input of the op
    ones = model([node("Mul", ["x", "c"], ["y"], "mul")], [("x", [64, 128])], ["y"], [const("c", np.ones((64, 128)))])
    assert imp(ones)["op_names"] == ["mul"]


# ----- 6. inference and folding to the fixpoint ------------------------------------------------------

def shape_chain(n):
    """n blocks Relu -> Shape -> Abs -> Reshape: each Reshape target is known one round later."""
    nodes, prev = [], "x"
    for k in range(n):
        nodes += [node("Relu", [prev], [f"r{k}"], f"relu{k}"), node("Shape", [f"r{k}"], [f"s{k}"]),
                  node("Abs", [f"s{k}"], [f"t{k}"]), node("Reshape", [f"r{k}", f"t{k}"], [f"h{k}"])]
        prev = f"h{k}"
    return model(nodes, [("x", [4, 8])], [prev])


def test_inference_and_folding_run_to_the_fixpoint(monkeypatch):
    assert imp(shape_chain(10))["op_names"] == [f"relu{k}" for k in range(10)]  # 11 rounds (6 were the cap)
    monkeypatch.setattr(graph, "MAX_ROUNDS", 5)
    with pytest.raises(OnnxImportError, match="did not settle in 5 rounds"):
        imp(shape_chain(10))


def test_no_static_shape_says_inference_not_dims():
    m = model([node("Relu", ["x"], ["y"], "relu")], [("x", None)], ["y"])
    with pytest.raises(OnnxImportError, match=r"graph input 'x' .* has no shape in the model"):
        imp(m)
    g = helper.make_graph([node("Reshape", ["x", "s"], ["t"], "reshape"), node("Relu", ["t"], ["y"], "relu")], "g",
                          [vi("x", [4, 8]), helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                          [vi("y", None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match=r"tensor 't' \(the output of node 'reshape' \(#0, op Reshape\)\) has "
                                              r"no static shape: ONNX shape inference could not determine it.*"
                                              r"onnx.checker") as e:
        imp(m)
    assert "--dim" not in str(e.value)


# ----- 7-12. behaviours ------------------------------------------------------------------------------

def test_graph_output_that_is_a_graph_input_keeps_its_shape():
    m = model([node("Relu", ["x"], ["a"], "relu")], [("x", [4, 8])], ["a", "x"])
    p = imp(m)
    assert p["op_names"] == ["relu"] and p["heights"] == [4, 4] and p["widths"] == [8, 8]


def test_empty_dim_param_is_bound_as_input_axis():
    m = model([node("Relu", ["x"], ["y"], "relu")], [("x", ["", 8])], ["y"])
    with pytest.raises(OnnxImportError, match=r"'x:0' \(input 'x' axis 0\)"):
        imp(m)
    assert imp(m, dims={"x:0": 5})["heights"] == [5, 5]


def test_gemm_with_a_full_size_source_bias_adds_it():
    for inits in ([], [const("C", np.ones((32, 16)))]):
        ins = [("A", [32, 64]), ("B", [64, 16])] + ([("C", [32, 16])] if not inits else [])
        p = imp(model([node("Gemm", ["A", "B", "C"], ["y"], "gemm")], ins, ["y"], inits))
        assert p["op_names"] == ["gemm", "gemm/bias"] and p["inputs"] == [[0, 1], [2, 3]]
        assert p["onnx"]["tensor_names"] == ["A", "B", "y", "C", "y+C"] and p["base_costs"] == [64, 16]
    p = imp(model([node("Gemm", ["A", "B", "c"], ["y"], "gemm")], [("A", [32, 64]), ("B", [64, 16])], ["y"],
                  [const("c", np.ones(16))]))
    assert p["op_names"] == ["gemm"]  # a broadcast bias stays folded


def test_elementwise_before_a_conv_is_channels_last():
    m = model([node("Sub", ["x", "m"], ["a"], "sub"), node("Div", ["a", "s"], ["b"], "div"),
               node("Conv", ["b", "w"], ["y"], "conv")], X, ["y"],
              [const("m", np.ones([1, 4, 1, 1])), const("s", np.full([1, 4, 1, 1], 2.0)),
               const("w", np.ones([6, 4, 1, 1]))])
    p = imp(m)
    assert p["onnx"]["cuts"] == [] and p["op_names"] == ["sub", "div", "conv"]
    assert p["inputs"] == [[0], [1], [2, 3]] and p["heights"][:3] == [64, 64, 64] and p["widths"][:3] == [4, 4, 4]
    assert p["onnx"]["tensor_names"][0] == "x@nhwc"


@pytest.mark.parametrize("auto", ["SAME_UPPER", "SAME_LOWER", "VALID"])
def test_conv_1x1_with_auto_pad_reads_its_input(auto):
    m = model([node("Conv", ["x", "w"], ["c"], "c1"), node("Conv", ["c", "w2"], ["y"], "c2", auto_pad=auto)], X, ["y"],
              [const("w", np.ones([6, 4, 1, 1])), const("w2", np.ones([6, 6, 1, 1]))])
    p = imp(m)
    assert p["onnx"]["cuts"] == [] and p["inputs"] == [[0, 1], [2, 3]]


def test_model_files_that_are_not_regular_files(tmp_path, monkeypatch):
    fifo = tmp_path / "fifo.onnx"
    os.mkfifo(fifo)
    with pytest.raises(OnnxImportError, match="fifo.onnx' is a FIFO, not an ONNX model file"):
        imp(str(fifo))
    with pytest.raises(OnnxImportError, match="is a directory, not an ONNX model file"):
        imp(str(tmp_path))
    src = tmp_path / "m.onnx"
    onnx.save(model([node("Relu", ["x"], ["y"])], [("x", [4, 4])], ["y"]), str(src))
    monkeypatch.setattr(graph, "MAX_MODEL_BYTES", 16)
    with pytest.raises(OnnxImportError, match="bytes, more than the 2 GiB"):
        imp(str(src))


def test_text_files_give_one_line_without_warnings(tmp_path):
    for name, data in (("text.onnx", b"hello world\n"), ("nul.onnx", b"\0" * 100)):
        (tmp_path / name).write_bytes(data)
        r = run_cli(tmp_path / name, "-o", tmp_path / "p.json")
        assert r.returncode == 1 and r.stderr.count("\n") == 1 and "Warning" not in r.stderr, r.stderr


def test_output_through_symlinks_fifos_mode_and_signals(tmp_path, capsys):
    src = tmp_path / "m.onnx"
    onnx.save(model([node("Relu", ["x"], ["y"], "relu")], [("x", [4, 4])], ["y"]), str(src))
    d = tmp_path / "out"
    d.mkdir()
    (d / "real.json").write_text("old")
    os.symlink("real.json", d / "link.json")
    old = os.umask(0o027)
    try:
        assert cli.main([str(src), "-o", str(d / "link.json"), "-q"]) == 0
        assert cli.main([str(src), "-o", str(d / "new.json"), "-q"]) == 0
    finally:
        os.umask(old)
    assert os.path.islink(d / "link.json") and json.loads((d / "real.json").read_text())["op_names"] == ["relu"]
    assert stat.S_IMODE(os.stat(d / "new.json").st_mode) == 0o640
    os.mkfifo(d / "fifo.json")
    assert cli.main([str(src), "-o", str(d / "fifo.json"), "-q"]) == 1
    assert "it is a FIFO, not a regular file" in capsys.readouterr().err
    assert sorted(os.listdir(d)) == ["fifo.json", "link.json", "new.json", "real.json"]
    # SIGTERM while writing: the temporary file is removed, the exit status is 128 + 15
    code = "import os, signal\nos.fsync = lambda fd: os.kill(os.getpid(), signal.SIGTERM)"
    r = run_cli(src, "-o", d / "t.json", code=code)
    assert r.returncode == 128 + 15 and "Traceback" not in r.stderr, r.stderr
    assert sorted(os.listdir(d)) == ["fifo.json", "link.json", "new.json", "real.json"]
