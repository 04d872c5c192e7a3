"""What an ONNX tensor is during lowering: an activation (Act) or a source (Src).

Act: the output of emitted ops. Its storage is P tensors (parts) of rows x cols each (P = 1: a
whole tensor), laid out as one virtual array [P, rows, cols]; the ONNX value is a strided view of
that storage (shape and strides, in elements). Transposes and reshapes only change the view; a
reshape numpy could not do without a copy leaves the view (mode "rows": the last axis is still the
storage's columns but the rows are permuted, which rule 3 counts as a view; otherwise the value
is "lost" and becomes a cut Src). A consumer reads the value as parts [batch..., r, c]; match()
says which stored tensor each batch position is, or None when the consumer needs a relayout (a
cut).

Src: a graph input or initializer, or what is computed from sources only (folded), or a relayout
of activations (a cut; then deps lists the tensors it is read from). A source is stored in
whatever layout its consumer needs, so shape ops on it only change its shape and its tag (the
transposes applied, to tell W from W^T).
"""
import math

import numpy as np

from .errors import OnnxImportError, show

MAX_PARTS = 1 << 16  # per-head parts of one ONNX tensor


def check_parts(bshape, node):
    """Refuse a per-head lowering into more than MAX_PARTS ops or tensors."""
    n = math.prod(int(d) for d in bshape)
    if n > MAX_PARTS:
        raise OnnxImportError(f"node '{show(node)}' would be lowered per head into {n:,} parts (batch shape "
                              f"{list(bshape)}), more than {MAX_PARTS:,}")


def layout2d(shape, spatial=False):
    """Rule 1: [rows, cols] of an ONNX shape (spatial: channels-last [N*H*W, C])."""
    if spatial:
        n, c, h, w = shape
        return n * h * w, c
    if len(shape) == 0:
        return 1, 1
    return math.prod(shape[:-1]), int(shape[-1])


def pad_to(shape, r):
    """shape with leading 1s up to rank r (numpy broadcasting)."""
    return (1,) * (r - len(shape)) + tuple(shape)


def contiguous_strides(shape):
    st, acc = [], 1
    for d in reversed(shape):
        st.append(acc)
        acc *= d
    return tuple(reversed(st))


def nocopy_reshape(shape, strides, newshape):
    """Strides of newshape viewing the same elements as (shape, strides) in C order, or None when
    that needs a copy (numpy's _attempt_nocopy_reshape)."""
    old = [(d, s) for d, s in zip(shape, strides) if d != 1]
    od, os_ = [d for d, _ in old], [s for _, s in old]
    new = list(newshape)
    ns = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(od):
        np_, op = new[ni], od[oi]
        while np_ != op:
            if np_ < op:
                if nj >= len(new):
                    return None
                np_ *= new[nj]
                nj += 1
            else:
                if oj >= len(od):
                    return None
                op *= od[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if os_[ok] != od[ok + 1] * os_[ok + 1]:
                return None
        ns[nj - 1] = os_[oj - 1]
        for nk in range(nj - 1, ni, -1):
            ns[nk - 1] = ns[nk] * new[nk]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    if oi < len(od):
        return None
    last = ns[ni - 1] if ni >= 1 else 1
    for nk in range(ni, len(new)):
        ns[nk] = last
    return tuple(ns)


def rows_permuted(shape, strides, cols):
    """True when the axes (all but the last) cover rows 0..R-1 of a [R, cols] storage exactly
    once each, in some order, and the last axis is its columns."""
    if not shape or shape[-1] != cols or (cols > 1 and strides[-1] != 1):
        return False
    axes = sorted((s, d) for d, s in zip(shape[:-1], strides[:-1]) if d != 1)
    expect = cols
    for s, d in axes:
        if s != expect:
            return False
        expect *= d
    return True


class Act:
    """An activation (see the module docstring)."""
    __slots__ = ("tids", "rows", "cols", "shape", "strides", "spatial", "chain", "origin")

    def __init__(self, tids, rows, cols, shape, strides, spatial=False, chain=(), origin=""):
        self.tids = np.asarray(tids, dtype=np.int64)
        self.rows, self.cols = rows, cols
        self.shape, self.strides = tuple(shape), (None if strides is None else tuple(strides))
        self.spatial, self.chain, self.origin = spatial, tuple(chain), origin

    @staticmethod
    def whole(tid, rows, cols, shape, spatial=False, origin=""):
        """One tensor [rows, cols] holding an ONNX value of the given shape: row-major (rule 1),
        or channels-last for a spatial 4-D NCHW value."""
        if spatial:
            n, c, h, w = shape
            strides = (h * w * c, 1, w * c, c)
        else:
            strides = contiguous_strides(shape)
        return Act(np.array(tid), rows, cols, shape, strides, spatial, (), origin)

    @staticmethod
    def parts(tids, rows, cols, origin=""):
        """P tensors [rows, cols], the ONNX value of shape tids.shape + (rows, cols)."""
        tids = np.asarray(tids, dtype=np.int64)
        shape = tids.shape + (rows, cols)
        return Act(tids, rows, cols, shape, contiguous_strides(shape), False, (), origin)

    @property
    def nparts(self):
        return int(self.tids.size)

    def all_tids(self):
        return [int(t) for t in self.tids.reshape(-1)]

    def with_shape(self, shape, strides, kind, origin, spatial=False):
        return Act(self.tids, self.rows, self.cols, shape, strides, spatial, self.chain + (kind,), origin)

    def transpose(self, perm, origin):
        shape = tuple(self.shape[p] for p in perm)
        if self.strides is None:  # rows mode: fine while the last axis stays last
            return self.with_shape(shape, None, "transpose", origin) if perm[-1] == len(perm) - 1 else None
        return self.with_shape(shape, tuple(self.strides[p] for p in perm), "transpose", origin)

    def reshape(self, shape, kind, origin):
        shape = tuple(shape)
        if self.strides is not None:
            st = nocopy_reshape(self.shape, self.strides, shape)
            if st is not None:
                return self.with_shape(shape, st, kind, origin)
            if not (self.nparts == 1 and rows_permuted(self.shape, self.strides, self.cols)):
                return None
        # rows mode: the columns are intact, the rows in some order
        if shape and shape[-1] == self.cols and self.nparts == 1:
            return self.with_shape(shape, None, kind, origin)
        return None

    def _view(self, nb, spatial):
        shape, strides = self.shape, self.strides
        if spatial:
            if len(shape) != 4 or nb:
                return None, None
            shape = (shape[0], shape[2], shape[3], shape[1])
            strides = None if strides is None else (strides[0], strides[2], strides[3], strides[1])
        return shape, strides

    def match(self, nb, rows, cols, spatial=False):
        """The stored tensor ids (an array over the value's first nb axes) when reading the value
        as [batch..., rows, cols] needs no relayout; else None. spatial: read a 4-D NCHW value
        channels-last as [N*H*W, C] (nb must be 0)."""
        if (rows, cols) != (self.rows, self.cols):
            return None
        shape, strides = self._view(nb, spatial)
        if shape is None:
            return None
        core = shape[nb:]
        if strides is None:  # rows mode: the last (logical) axis is the columns
            ok = nb == 0 and not spatial and self.nparts == 1 and core and core[-1] == cols
            return self.tids.reshape(()) if ok else None
        cst = strides[nb:]
        st = nocopy_reshape(core, cst, (rows, cols))
        if st is None or (rows > 1 and st[0] != cols) or (cols > 1 and st[1] != 1):
            if not (nb == 0 and self.nparts == 1 and rows_permuted(core, cst, cols)):
                return None
        size = rows * cols
        offsets = self._offsets(shape[:nb], strides[:nb])
        if np.any(offsets % size):
            return None
        idx = offsets // size
        if np.any(idx >= self.nparts):
            return None
        return self.tids.reshape(-1)[idx]

    @staticmethod
    def _offsets(bshape, bstrides):
        off = np.zeros(bshape, dtype=np.int64)
        for ax, (d, s) in enumerate(zip(bshape, bstrides)):
            shp = [1] * len(bshape)
            shp[ax] = d
            off = off + (np.arange(d, dtype=np.int64) * s).reshape(shp)
        return off

    def deps(self, nb, spatial=False):
        """For a relayout read over the first nb axes: per batch position, the stored tensors the
        new tensor is read from (a range of parts where the view says, else all of them)."""
        shape, strides = self._view(nb, spatial)
        everything = self.all_tids()
        bshape = tuple(self.shape[:nb]) if shape is None else tuple(shape[:nb])
        out = np.empty(bshape, dtype=object)
        if shape is None or strides is None or self.nparts == 1:
            for pos in np.ndindex(bshape):
                out[pos] = everything
            return out
        size = self.rows * self.cols
        lo = self._offsets(shape[:nb], strides[:nb])
        span = sum((d - 1) * s for d, s in zip(shape[nb:], strides[nb:]))
        flat = self.tids.reshape(-1)
        for pos in np.ndindex(bshape):
            a, b = int(lo[pos]) // size, (int(lo[pos]) + span) // size
            out[pos] = [int(t) for t in flat[a:b + 1]]
        return out

    def cut_reason(self, default):
        if "transpose" in self.chain:
            return "transpose"
        if self.chain:
            return "reshape"
        return default


class Src:
    """A source (see the module docstring)."""
    __slots__ = ("origin", "shape", "tag", "const", "deps", "why", "via")

    def __init__(self, origin, shape, tag=(), const=False, deps=(), why="", via=""):
        self.origin, self.shape, self.tag, self.const = origin, tuple(shape), tuple(tag), const
        self.deps, self.why, self.via = tuple(deps), why, via

    def with_shape(self, shape, tag_item=None):
        tag = self.tag + ((tag_item,) if tag_item is not None else ())
        return Src(self.origin, shape, tag, self.const, self.deps, self.why, self.via)

    @property
    def pure(self):
        """A graph input, initializer or constant computation: no relayout of an activation."""
        return not self.deps
