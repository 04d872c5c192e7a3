"""The tensor and op tables the lowering fills, dead-code removal, renumbering and the JSON text."""
import json

from .accel import MAX_BANDWIDTH, MAX_CAPACITY, MAX_COST, MAX_DIM, cost_text
from .errors import OnnxImportError, show

MAX_NAME = 1024  # the reader's limit on an op name, in bytes


class Table:
    """Tensors (rows x cols) and ops in emission order (topological: every op is emitted after the
    ops producing its inputs), plus the cuts (dropped ordering edges)."""

    def __init__(self, acc):
        self.acc = acc
        self.rows, self.cols, self.tnames = [], [], []
        self.producer = []         # tensor id -> op index or None (a graph input)
        self.ops = []              # dicts: type, inputs, output, cost, name
        self.cuts = []             # dicts: from, to, node, why (+ via)
        self.keys = {}             # memo of the graph inputs made for sources and cuts

    def tensor(self, rows, cols, name):
        assert rows >= 1 and cols >= 1, (rows, cols, name)
        self.rows.append(int(rows))
        self.cols.append(int(cols))
        self.tnames.append(name)
        self.producer.append(None)
        return len(self.rows) - 1

    def op(self, kind, inputs, rows, cols, cost, name, tname):
        ins = list(dict.fromkeys(int(t) for t in inputs))  # an op may not read a tensor twice
        out = self.tensor(rows, cols, tname)
        self.producer[out] = len(self.ops)
        self.ops.append({"type": kind, "inputs": ins, "output": out, "cost": int(cost), "name": name})
        return out

    def cut(self, frm, to, node, why, via=""):
        c = {"from": int(frm), "to": int(to), "node": node, "why": why}
        if via and via != node:
            c["via"] = via
        self.cuts.append(c)

    def check(self):
        """Guard against lowering bugs: the contest's shape rules (F2, F3)."""
        for o in self.ops:
            ins, out = o["inputs"], o["output"]
            if o["type"] == "MatMul":
                lhs, rhs = ins if len(ins) == 2 else (ins[0], ins[0])
                ok = (len(ins) == 2 and self.cols[lhs] == self.rows[rhs] and self.rows[lhs] == self.rows[out]
                      and self.cols[rhs] == self.cols[out])
            else:
                ok = ins and all((self.rows[t], self.cols[t]) == (self.rows[out], self.cols[out]) for t in ins)
            if not ok:
                shapes = [(self.rows[t], self.cols[t]) for t in ins + [out]]
                raise AssertionError(f"internal error: op '{o['name']}' ({o['type']}) has shapes {shapes}")

    def live_ops(self, roots):
        """Indices of the ops that the tensors in roots need, through inputs and cuts."""
        need = set(roots)
        cut_from = {}
        for c in self.cuts:
            cut_from.setdefault(c["to"], []).append(c["from"])
        live = []
        for i in range(len(self.ops) - 1, -1, -1):
            o = self.ops[i]
            if o["output"] not in need:
                continue
            live.append(i)
            for t in o["inputs"]:
                need.add(t)
                need.update(cut_from.get(t, ()))
        # a cut's source tensors, of cuts read by live ops, may themselves be graph inputs: fine
        return sorted(live)

    def finish(self, roots, meta):
        """The contest problem dict: live ops only, tensors renumbered densely in first-use order."""
        self.check()
        live = self.live_ops(roots)
        ids = {}

        def tid(t):
            if t not in ids:
                ids[t] = len(ids)
            return ids[t]
        inputs, outputs, costs, types, names = [], [], [], [], []
        for i in live:
            o = self.ops[i]
            inputs.append([tid(t) for t in o["inputs"]])
            outputs.append([tid(o["output"])])
            costs.append(o["cost"])
            types.append(o["type"])
            names.append(o["name"].encode()[:MAX_NAME].decode(errors="ignore"))
        order = sorted(ids, key=ids.get)
        cuts = []
        for c in self.cuts:
            if c["to"] in ids and c["from"] in ids:
                cuts.append(dict(c, **{"from": ids[c["from"]], "to": ids[c["to"]]}))
        onnx_meta = dict(meta)
        onnx_meta["cuts"] = cuts
        onnx_meta["tensor_names"] = [self.tnames[t] for t in order]
        return {
            "widths": [self.cols[t] for t in order],
            "heights": [self.rows[t] for t in order],
            "inputs": inputs,
            "outputs": outputs,
            "base_costs": costs,
            "op_types": types,
            "fast_memory_capacity": self.acc.capacity,
            "slow_memory_bandwidth": self.acc.bandwidth,
            "native_granularity": [self.acc.native, self.acc.native],
            "op_names": names,
            "onnx": onnx_meta,
        }


def _dims_hint(p):
    dims = p["onnx"].get("dims") or {}
    given = ", ".join(f"{show(k, 60)}={v}" for k, v in dims.items())
    return f"; smaller --dim values ({given} given)" if given else ""


def check_problem(p):
    """Refuse a problem the reader would refuse (cost/model/problem.cpp): widths and heights in
    [1, 2^24], base costs in [1, 2^40], capacity [1, 2^62], bandwidth [1, 2^40], native
    [1, 2^24], and every op fitting fast memory at granularity [1,1,1] (one element per input
    plus one for its output)."""
    tn, names = p["onnx"]["tensor_names"], p["op_names"]
    for key, what in (("heights", "a height (rows)"), ("widths", "a width (columns)")):
        for t, v in enumerate(p[key]):
            if not 1 <= v <= MAX_DIM:
                raise OnnxImportError(f"tensor '{show(tn[t])}' (#{t}) has {what} of {v:,}, outside the problem "
                                      f"format's range [1, 2^24 = {MAX_DIM:,}]" + _dims_hint(p))
    for o, c in enumerate(p["base_costs"]):
        if not 1 <= c <= MAX_COST:
            flag = "--matmul-throughput" if p["op_types"][o] == "MatMul" else "--pointwise-throughput"
            raise OnnxImportError(f"op {o} '{show(names[o])}' ({p['op_types'][o]}) has a base cost of "
                                  f"{cost_text(c)}, above the problem format's limit 2^40 = {MAX_COST:,}; "
                                  f"raise {flag} or lower --native")
    cap, bw, n = p["fast_memory_capacity"], p["slow_memory_bandwidth"], p["native_granularity"][0]
    for what, v, hi, limit in (("fast memory capacity", cap, MAX_CAPACITY, "2^62"),
                               ("slow memory bandwidth", bw, MAX_BANDWIDTH, "2^40"),
                               ("native size", n, MAX_DIM, "2^24")):
        if not 1 <= v <= hi:
            raise OnnxImportError(f"the {what} {v:,} is outside the problem format's range [1, {limit}]")
    for o, ins in enumerate(p["inputs"]):
        need = len(ins) + len(p["outputs"][o])
        if need > cap:
            raise OnnxImportError(f"op {o} '{show(names[o])}' ({p['op_types'][o]}) reads {len(ins)} tensors: its "
                                  f"smallest working set is {need} elements, more than the fast memory capacity "
                                  f"{cap:,} (--capacity)")


def to_json(problem):
    """The problem as JSON text: one line per key, the onnx metadata indented."""
    lines = []
    for k, v in problem.items():
        if k == "onnx":
            inner = []
            for kk, vv in v.items():
                if isinstance(vv, list) and vv and isinstance(vv[0], dict):
                    body = ",\n      ".join(json.dumps(x) for x in vv)
                    inner.append(f'    {json.dumps(kk)}: [\n      {body}\n    ]')
                else:
                    inner.append(f"    {json.dumps(kk)}: {json.dumps(vv)}")
            lines.append('  "onnx": {\n' + ",\n".join(inner) + "\n  }")
        else:
            lines.append(f"  {json.dumps(k)}: {json.dumps(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"
