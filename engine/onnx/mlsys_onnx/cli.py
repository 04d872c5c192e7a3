"""The command line: python3 -m mlsys_onnx MODEL.onnx -o PROBLEM.json [options]."""
import argparse
import os
import sys
import tempfile

from . import __version__, import_model, summary, to_json
from .accel import Accelerator
from .errors import OnnxImportError

D = Accelerator()
# The prefix of its stderr lines: "mlsys import" when run by the C++ command, else the module's name.
PREFIX = os.environ.get("MLSYS_IMPORT_PROG") or "mlsys-onnx"
EPILOG = """\
The lowering rules and the accelerator model are in engine/onnx/README.md.

Exit codes:
  0  the problem is written
  1  bad input: a malformed or non-ONNX file, an unsupported node (named, with its op type and
     index), a symbolic dim without --dim, a dim or accelerator value that is not positive;
     no output file is left behind
  2  usage error (unknown option, missing argument, --dim without '=')

Example:
  PYTHONPATH=engine/onnx python3 -m mlsys_onnx resnet18.onnx -o resnet18.json --dim batch=1
"""


def parser():
    p = argparse.ArgumentParser(
        prog=os.environ.get("MLSYS_IMPORT_PROG") or "python3 -m mlsys_onnx",  # `mlsys import` sets it formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Import an ONNX model as an MLSys 2026 graph-scheduling problem (the contest's JSON): "
                    "MatMul and Pointwise ops over 2-D tensors, with base costs from an accelerator model.")
    p.add_argument("model", metavar="MODEL.onnx", help="the ONNX model")
    p.add_argument("-o", "--output", metavar="PROBLEM.json", required=True,
                   help="where to write the problem ('-' for stdout); written atomically")
    p.add_argument("--dim", metavar="NAME=VALUE", action="append", default=[],
                   help="bind a symbolic dim of the graph inputs (repeatable); an unnamed dim is INPUT:AXIS")
    p.add_argument("--skip-unsupported", action="store_true",
                   help="bridge unsupported nodes as Pointwise ops (listed on stderr and in onnx.skipped) "
                        "instead of failing")
    p.add_argument("--capacity", type=int, default=D.capacity, metavar="N",
                   help=f"fast memory capacity, elements (default {D.capacity})")
    p.add_argument("--bandwidth", type=int, default=D.bandwidth, metavar="B",
                   help=f"slow memory bandwidth, elements per time unit (default {D.bandwidth})")
    p.add_argument("--native", type=int, default=D.native, metavar="N",
                   help=f"native tile size N (N x N; default {D.native})")
    p.add_argument("--matmul-throughput", type=float, default=D.matmul_throughput, metavar="F",
                   help=f"MatMul flops per time unit (default {D.matmul_throughput:g}: a 128x128 MAC array)")
    p.add_argument("--pointwise-throughput", type=float, default=D.pointwise_throughput, metavar="F",
                   help=f"Pointwise flops per time unit (default {D.pointwise_throughput:g})")
    p.add_argument("--name", metavar="NAME", help="the problem's name, stored in onnx.name (default: the model's)")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary on stderr")
    p.add_argument("--version", action="version", version=f"mlsys_onnx {__version__}")
    return p


def parse_dims(p, items):
    """NAME=VALUE pairs: a missing '=' is a usage error (2), a bad value bad input (1)."""
    dims = {}
    for it in items:
        name, eq, value = it.partition("=")
        if not eq or not name:
            p.error(f"--dim {it!r}: expected NAME=VALUE")
        try:
            v = int(value)
        except ValueError:
            v = None
        if v is None or v <= 0:
            raise OnnxImportError(f"--dim {name}={value}: the value must be a positive integer")
        dims[name] = v
    return dims


def write_atomic(path, text):
    """Write text to path through a temporary file in the same directory and a rename."""
    if path == "-":
        sys.stdout.write(text)
        return
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def main(argv=None):
    p = parser()
    a = p.parse_args(argv)
    try:
        dims = parse_dims(p, a.dim)
        acc = {"capacity": a.capacity, "bandwidth": a.bandwidth, "native": a.native,
               "matmul_throughput": a.matmul_throughput, "pointwise_throughput": a.pointwise_throughput}
        problem, report = import_model(a.model, dims=dims, skip_unsupported=a.skip_unsupported,
                                       accelerator=acc, name=a.name)
        write_atomic(a.output, to_json(problem))
    except OnnxImportError as e:
        print(f"{PREFIX}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{PREFIX}: error: cannot write '{a.output}': {e.strerror or e}", file=sys.stderr)
        return 1
    if not a.quiet:
        for line in summary(report):
            print(f"{PREFIX}: {line}", file=sys.stderr)
        if a.output != "-":
            print(f"{PREFIX}: wrote {a.output}", file=sys.stderr)
    return 0
