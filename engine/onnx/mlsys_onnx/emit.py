"""The tensor and op tables the lowering fills, dead-code removal, renumbering and the JSON text."""
import json

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
