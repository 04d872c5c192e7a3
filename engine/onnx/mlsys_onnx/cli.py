"""The command line: python3 -m mlsys_onnx MODEL.onnx -o PROBLEM.json [options]."""
import argparse
import os
import signal
import stat
import sys
import tempfile

from . import __version__, import_model, summary, to_json
from .accel import Accelerator
from .errors import OnnxImportError, file_kind, show

MAX_DIM_VALUE = (1 << 63) - 1  # an int64 dim_value

D = Accelerator()
# The prefix of its stderr lines: "mlsys import" when run by the C++ command, else the module's name.
PREFIX = os.environ.get("MLSYS_IMPORT_PROG") or "mlsys-onnx"
EPILOG = """\
The lowering rules and the accelerator model are in engine/onnx/README.md.

Exit codes:
  0  the problem is written
  1  bad input: a malformed or non-ONNX file, an invalid or unsupported node (named, with its op
     type and index), a symbolic dim without --dim, a dim or accelerator value out of range, a
     problem the reader would refuse (a tensor over 2^24 rows or columns, a cost over 2^40, an op
     that does not fit --capacity); also an internal error (one line: please report it);
     no output file is left behind
  2  usage error (unknown option, missing argument, --dim without '=')
  130, 128+N  interrupted (Ctrl-C), terminated by signal N (SIGTERM, SIGHUP); no file is left behind

Example:
  PYTHONPATH=engine/onnx python3 -m mlsys_onnx resnet18.onnx -o resnet18.json --dim batch=1
"""


def parser():
    p = argparse.ArgumentParser(
        prog=os.environ.get("MLSYS_IMPORT_PROG") or "python3 -m mlsys_onnx",  # `mlsys import` sets it
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
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
        name, eq, value = it.rpartition("=")  # a dim_param may hold "=", a value never
        if not eq or not name:
            p.error(f"--dim {it!r}: expected NAME=VALUE")
        try:
            v = int(value)
        except ValueError:
            v = None
        if v is None or v <= 0:
            raise OnnxImportError(f"--dim {show(name)}={show(value, 40)}: the value must be a positive integer")
        if v > MAX_DIM_VALUE:
            raise OnnxImportError(f"--dim {show(name)}={show(value, 40)}: the value is too large (a dim is at most "
                                  "2^63 - 1, and a tensor of the problem at most 2^24 rows and columns)")
        if name in dims and dims[name] != v:
            p.error(f"--dim {show(name)} is given twice ({dims[name]} and {v})")
        dims[name] = v
    return dims


def _umask():
    old = os.umask(0o022)
    os.umask(old)
    return old


def write_atomic(path, text):
    """Write text to path through a temporary file in the same directory and a rename. A
    symlink is written through (its target is replaced); an existing target that is not a
    regular file (a FIFO, a device, a directory) is refused. The file gets mode 0666 & ~umask."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    if not path:
        raise OnnxImportError("-o '': the output needs a file name ('-' for stdout)")
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OnnxImportError(f"cannot write '{show(path)}': it is {file_kind(st.st_mode)}, not a regular file "
                              "(-o - writes to stdout)")
    d, base = os.path.split(target)
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + base[:200] + ".", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Terminated(BaseException):
    """SIGTERM or SIGHUP: raised in the main thread so that the temporary file is removed."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum, frame):
    raise Terminated(signum)


def _install_handlers():
    """Handlers for SIGTERM and SIGHUP (the old ones, to restore), where they can be set."""
    old = {}
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is None:
            continue
        try:
            if signal.getsignal(sig) is not signal.SIG_IGN:  # nohup keeps its meaning
                old[sig] = signal.signal(sig, _on_signal)
        except (ValueError, OSError):  # not the main thread
            pass
    return old


def run(p, a):
    """Import and write; returns the exit status. Errors of the input are one line on stderr."""
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
        print(f"{PREFIX}: error: cannot write '{show(a.output)}': {e.strerror or e}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{PREFIX}: error: out of memory while importing '{show(a.model)}'", file=sys.stderr)
        return 1
    if not a.quiet:
        for line in summary(report):
            print(f"{PREFIX}: {line}", file=sys.stderr)
        if a.output != "-":
            print(f"{PREFIX}: wrote {show(a.output)}", file=sys.stderr)
    return 0


def main(argv=None):
    p = parser()
    a = p.parse_args(argv)
    old = _install_handlers()
    try:
        return run(p, a)
    except KeyboardInterrupt:
        return 130
    except Terminated as e:
        return 128 + e.signum
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 (the last resort: a bug, never a traceback)
        msg = " ".join(str(e).split()) or "(no message)"
        print(f"{PREFIX}: internal error: {type(e).__name__}: {show(msg, 300)} (please report it with the model)",
              file=sys.stderr)
        return 1
    finally:
        for sig, h in old.items():
            try:
                signal.signal(sig, h)
            except (ValueError, OSError, TypeError):
                pass
