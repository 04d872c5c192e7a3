"""`mlsys import` (the C++ command that runs mlsys_onnx in its place), the names it carries into
`report`, mlsys.Problem.from_onnx, and one torchvision model end to end (import, solve -s 2,
evaluate). Needs MLSYS_BIN (the mlsys binary); the Python module's test needs PYTHONPATH to hold
the build's python/ folder; the torchvision test needs Debian's python3-torch and
python3-torchvision and never runs in CI (CI=true): it exports a real network (seconds).
"""
import json
import os
import subprocess

import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

BIN = os.environ.get("MLSYS_BIN")
pytestmark = pytest.mark.skipif(not BIN, reason="MLSYS_BIN (the mlsys binary) is not set")


def mlsys(*args, env=None, **kw):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, env=env, timeout=300, **kw)


def small_model(path, op="Relu"):
    """x[batch, 256] @ w[256, 128] -> Relu (or `op`) -> y, with a symbolic batch dim."""
    f = TensorProto.FLOAT
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"], name="/fc/MatMul"), helper.make_node(op, ["h"], ["y"], name="/act")],
        "g", [helper.make_tensor_value_info("x", f, ["batch", 256]), helper.make_tensor_value_info("w", f, [256, 128])],
        [helper.make_tensor_value_info("y", f, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_import_solve_report_with_node_names(tmp_path):
    m = small_model(tmp_path / "m.onnx")
    out = tmp_path / "p.json"
    r = mlsys("import", m, "-o", out, "--dim", "batch=512", "--bandwidth", "10")
    assert r.returncode == 0, r.stderr
    assert "mlsys import: " in r.stderr and "2 ops (1 MatMul, 1 Pointwise)" in r.stderr
    p = json.loads(out.read_text())
    assert p["op_names"] == ["/fc/MatMul", "/act"]
    assert p["heights"][0] == 512 and p["slow_memory_bandwidth"] == 10
    sched, page = tmp_path / "s.json", tmp_path / "r.html"
    assert mlsys("solve", out, sched, "-s", "1", "-q").returncode == 0
    ev = mlsys("evaluate", out, sched)
    assert ev.returncode == 0 and "valid" in ev.stdout
    rep = mlsys("report", out, sched, "-o", page)
    assert rep.returncode == 0, rep.stderr
    html = page.read_text()
    assert "op 0 MatMul /fc/MatMul" in html and "op 1 Pointwise /act" in html


def test_import_errors_and_usage_pass_through(tmp_path):
    m = small_model(tmp_path / "m.onnx", op="Hardmax")
    out = tmp_path / "p.json"
    r = mlsys("import", m, "-o", out, "--dim", "batch=4")
    assert r.returncode == 1
    assert "node '/act'" in r.stderr and "Hardmax" in r.stderr and "--skip-unsupported" in r.stderr
    assert not out.exists()
    r = mlsys("import", small_model(tmp_path / "ok.onnx"), "-o", out)
    assert r.returncode == 1 and "batch" in r.stderr and "--dim" in r.stderr
    assert mlsys("import", m).returncode == 2  # no -o
    r = mlsys("import", small_model(tmp_path / "ok2.onnx"), "-o", out, "--dim", "batch=4", "--dim", "batch=5")
    assert r.returncode == 2 and "--dim batch is given twice (4 and 5)" in r.stderr and not out.exists()
    r = mlsys("import", small_model(tmp_path / "ok3.onnx"), "-o", tmp_path / "twice.json", "--dim", "batch=4",
              "--dim", "batch=4")
    assert r.returncode == 0, r.stderr  # the same value twice is no conflict
    h = mlsys("import", "--help")
    assert h.returncode == 0 and h.stdout.startswith("usage: mlsys import")
    (tmp_path / "not.onnx").write_text('{"widths": [1]}')
    r = mlsys("import", tmp_path / "not.onnx", "-o", out)
    assert r.returncode == 1 and "not.onnx" in r.stderr and not out.exists()


def test_importer_not_found_or_onnx_missing(tmp_path):
    m = small_model(tmp_path / "m.onnx")
    env = dict(os.environ, MLSYS_ONNX_DIR=str(tmp_path / "nowhere"))
    r = mlsys("import", m, "-o", tmp_path / "p.json", env=env)
    assert r.returncode == 1 and "MLSYS_ONNX_DIR" in r.stderr
    # An interpreter without python3-onnx: a package `onnx` that cannot be imported, first on the path.
    fake = tmp_path / "fake" / "onnx"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'onnx'\", name='onnx')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "fake"))
    r = mlsys("import", m, "-o", tmp_path / "p.json", "--dim", "batch=1", env=env)
    assert r.returncode == 1 and "python3-onnx" in r.stderr and "Traceback" not in r.stderr
    assert mlsys("import", "--help", env=env).returncode == 0
    env = dict(os.environ, MLSYS_PYTHON=str(tmp_path / "no-python"))
    r = mlsys("import", m, "-o", tmp_path / "p.json", env=env)
    assert r.returncode == 1 and "MLSYS_PYTHON" in r.stderr


def test_python_problem_from_onnx(tmp_path):
    mlsys_py = pytest.importorskip("mlsys")  # the build's python/ folder on PYTHONPATH
    m = small_model(tmp_path / "m.onnx")
    p = mlsys_py.Problem.from_onnx(m, dims={"batch": 256}, capacity=200000)
    assert p.num_ops == 2 and p.op_names == ["/fc/MatMul", "/act"] and p.name == "m"
    assert p.to_dict()["fast_memory_capacity"] == 200000
    with pytest.raises(mlsys_py.InputError, match="batch"):
        mlsys_py.Problem.from_onnx(m)
    r = mlsys_py.solve(p, seconds=0.5, threads=1)
    assert mlsys_py.evaluate(p, r.schedule).valid


@pytest.mark.skipif(os.environ.get("CI") == "true", reason="exports a torchvision model: never in CI")
def test_torchvision_resnet18_end_to_end(tmp_path):
    torch = pytest.importorskip("torch", reason="python3-torch is not installed: the export step is skipped")
    tv = pytest.importorskip("torchvision", reason="python3-torchvision is not installed")
    net = tv.models.resnet18(weights=None).eval()
    path = tmp_path / "resnet18.onnx"
    torch.onnx.export(net, torch.zeros(1, 3, 224, 224), str(path), opset_version=17, export_params=False,
                      input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    prob, sched = tmp_path / "r.json", tmp_path / "s.json"
    r = mlsys("import", path, "-o", prob, "--dim", "batch=1")
    assert r.returncode == 0, r.stderr
    assert mlsys("solve", prob, sched, "-s", "2", "-q").returncode == 0
    ev = mlsys("evaluate", prob, sched)
    assert ev.returncode == 0 and "valid" in ev.stdout


def test_import_refuses_zero_strides_in_one_line(tmp_path):
    """A Conv with strides 0 used to kill `mlsys import` (SIGFPE in ONNX shape inference)."""
    f = TensorProto.FLOAT
    w = helper.make_tensor("w", f, [4, 4, 3, 3], [1.0] * 144)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["a"]),
                           helper.make_node("Conv", ["a", "w"], ["y"], strides=[0, 0])],
                          "g", [helper.make_tensor_value_info("x", f, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", f, None)], [w])
    m = tmp_path / "s0.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(m))
    env = dict(os.environ, MLSYS_ONNX_DIR=os.path.join(os.path.dirname(__file__), "..", "..", "engine", "onnx"))
    r = mlsys("import", m, "-o", tmp_path / "p.json", env=env)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr == "mlsys import: error: node 'Conv_1' (#1, op Conv) is invalid: attribute 'strides' is [0, 0]: " \
                       "each must be a positive integer\n"
    assert not (tmp_path / "p.json").exists()
