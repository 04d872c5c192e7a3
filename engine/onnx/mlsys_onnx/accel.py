"""The accelerator model: how an ONNX op's work becomes a contest base_cost.

The contest charges a MatMul's base_cost once per N x N output tile over the whole reduction K, and
a Pointwise's base_cost once per N x N tile. So base_cost is the time one tile takes:
    MatMul:    ceil(2 * N * N * K / F_mm)            (2 flops per multiply-accumulate)
    Pointwise: ceil(N * N * flops_per_element / F_pw)
with F_mm and F_pw the flops per time unit of the matrix and vector units. Every cost is an
integer >= 1. Defaults: N = 128, F_mm = 32768 (a 128x128 MAC array: 16384 MACs, 2 flops each,
per time unit), F_pw = 1024, fast memory 1,048,576 elements, bandwidth 64 elements per time unit.
"""
from dataclasses import dataclass, asdict
import math

# Flops per output element of each Pointwise kind (README "The accelerator model").
FLOPS = {
    "Add": 1, "Sub": 1, "Mul": 1, "Neg": 1, "Abs": 1, "Max": 1, "Min": 1, "Where": 1,
    "Relu": 1, "LeakyRelu": 1, "PRelu": 1, "Clip": 1,
    "Div": 4, "Reciprocal": 4, "Sqrt": 4,
    "HardSigmoid": 2, "HardSwish": 4,
    "Sigmoid": 8, "Tanh": 8, "Erf": 8, "Exp": 8, "Log": 8, "Pow": 8,
    "Gelu": 16,
    "Softmax": 10, "LogSoftmax": 10,
    "LayerNormalization": 12, "BatchNormalization": 2,
}
MAX_DIM = 1 << 24        # the problem reader's limits: widths, heights, native
MAX_COST = 1 << 40       # base costs
MAX_BANDWIDTH = 1 << 40
MAX_CAPACITY = 1 << 62
OVERFLOW = 1 << 64       # a cost of 2^64 or more (or inf): above every limit


def cost_text(c):
    return "more than 2^64" if c >= OVERFLOW else f"{c:,}"


BRIDGE_FLOPS = 1  # a node bridged by --skip-unsupported
COPY_FLOPS = 1    # a cut-free copy (the RHS copy of x @ x)


@dataclass(frozen=True)
class Accelerator:
    native: int = 128                 # N: the native tile, N x N (and the k-step)
    capacity: int = 1048576           # fast memory, elements
    bandwidth: int = 64               # slow memory, elements per time unit
    matmul_throughput: float = 32768  # F_mm, flops per time unit
    pointwise_throughput: float = 1024  # F_pw, flops per time unit

    def check(self):
        from .errors import OnnxImportError
        for name, hi, limit in (("native", MAX_DIM, "2^24"), ("capacity", MAX_CAPACITY, "2^62"),
                                ("bandwidth", MAX_BANDWIDTH, "2^40")):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise OnnxImportError(f"accelerator {name} must be a positive integer, not {v!r}")
            if v > hi:
                raise OnnxImportError(f"accelerator {name} {v} is above the problem format's limit {limit} = {hi:,}")
        for name in ("matmul_throughput", "pointwise_throughput"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or math.isinf(v):
                raise OnnxImportError(f"accelerator {name} must be a positive number, not {v!r}")
        for name, cost in (("matmul_throughput", self.matmul_cost(1)),
                           ("pointwise_throughput", self.pointwise_cost(1))):
            if cost > MAX_COST:
                raise OnnxImportError(f"accelerator {name} {getattr(self, name)!r} is too small: even the cheapest "
                                      f"op would cost {cost_text(cost)}, above the problem format's limit 2^40")
        return self

    @staticmethod
    def _ceil(x):
        return max(1, math.ceil(x)) if math.isfinite(x) and x < OVERFLOW else OVERFLOW

    def matmul_cost(self, k):
        """base_cost of a MatMul with reduction length k: one N x N output tile over all of k
        (OVERFLOW when it is not a finite number)."""
        return self._ceil(2 * self.native * self.native * k / self.matmul_throughput)

    def pointwise_cost(self, flops_per_element):
        """base_cost of a Pointwise doing flops_per_element per element: one N x N tile."""
        return self._ceil(self.native * self.native * flops_per_element / self.pointwise_throughput)

    def to_dict(self):
        return asdict(self)

    @staticmethod
    def from_dict(d):
        """An Accelerator from None, an Accelerator, or a dict of some of its fields."""
        from .errors import OnnxImportError
        if d is None:
            return Accelerator()
        if isinstance(d, Accelerator):
            return d.check()
        if not isinstance(d, dict):
            raise OnnxImportError(f"accelerator must be a dict or an Accelerator, not {type(d).__name__}")
        known = set(Accelerator.__dataclass_fields__)
        bad = sorted(set(d) - known)
        if bad:
            raise OnnxImportError(f"unknown accelerator parameter(s) {bad}; known: {sorted(known)}")
        return Accelerator(**d).check()
