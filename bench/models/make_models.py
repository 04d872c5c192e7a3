#!/usr/bin/env python3
"""Build the shelf of real models: export architectures to ONNX and import them as mlsys problems.

Every model is built without weights (torchvision ``weights=None``; ``torch.nn`` modules with a
seeded random fill), in eval mode, batch 1, and exported with ``torch.onnx.export`` (opset 17,
``export_params=False``, ``do_constant_folding=True``, input ``x``, output ``y``, a symbolic
batch dimension ``batch`` on both). Each ONNX file is then imported with the ONNX importer
(``python3 -m mlsys_onnx MODEL.onnx -o PROBLEM.json --dim batch=1``), and the problem is written
to ``instances/models/NAME.json`` when it is at most ``--max-bytes`` bytes.

The models:

  resnet18, resnet50, mobilenet_v2, vit_b_16   torchvision, 1x3x224x224
  encoder-s128, encoder-s512                   12 x nn.TransformerEncoderLayer(512, 8 heads,
                                               ff 2048, ReLU, post-norm, batch_first), 1xLx512
  decoder-s128, decoder-s512                   GPT-like decoder-only stack: 12 x
                                               nn.TransformerEncoderLayer(512, 8, 2048, GELU,
                                               pre-norm, batch_first) with a causal mask, and a
                                               final LayerNorm, 1xLx512

The decoder is nn.TransformerEncoderLayer with a causal (upper-triangular -inf) attention mask,
not nn.TransformerDecoderLayer: a GPT block is self-attention + MLP, and a DecoderLayer would add a
cross-attention over a "memory" input that GPT does not have.

Why the parameters are filled with distinct random values: nn.TransformerEncoder deep-copies one
layer 12 times, and the exporter (torch 1.13) merges parameters of equal value into one graph input
plus Identity nodes, so all 12 layers would share layer 0's weights (and every zero bias would be
one tensor). A real model has distinct weights per layer.

Why the export runs with autograd on and parameters requiring grad: in eval mode under
torch.no_grad(), nn.TransformerEncoderLayer and nn.MultiheadAttention take a fused fast path
(aten::_transformer_encoder_layer_fwd, aten::_native_multi_head_attention) even while tracing,
which ONNX cannot express (the export fails). The graph is checked for such nodes after export.

Exit codes: 0 every selected model exported and imported (problems over --max-bytes are skipped,
not failures); 1 some export or import failed, or --check found a difference; 2 usage;
77 torch/torchvision/onnx missing (skip).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SKIP = 77

VISION = ["resnet18", "resnet50", "mobilenet_v2", "vit_b_16"]
SEQS = [128, 512]
NAMES = VISION + [f"{kind}-s{L}" for kind in ("encoder", "decoder") for L in SEQS]

D_MODEL, HEADS, FF, LAYERS = 512, 8, 2048, 12


def need_torch():
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        hint = ""
        if sys.executable != "/usr/bin/python3" and Path("/usr/bin/python3").exists():
            hint = (" (Debian's python3-torch, python3-torchvision and python3-onnx are for"
                    " /usr/bin/python3: run `/usr/bin/python3 bench/models/make_models.py`)")
        print(f"make_models: skipped: {e.name or e} is not importable from {sys.executable}{hint}",
              file=sys.stderr)
        sys.exit(SKIP)


# ---------------------------------------------------------------------------------------------
# The models


def build(name: str):
    """Return (module in eval mode, example input) for a shelf name."""
    import torch
    import torchvision
    from torch import nn

    torch.manual_seed(0)
    if name in VISION:
        model = getattr(torchvision.models, name)(weights=None)
        x = torch.zeros(1, 3, 224, 224)
    else:
        kind, seq = name.split("-s")
        L = int(seq)
        if kind == "encoder":
            layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, batch_first=True)
            model = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        else:
            model = causal_decoder(L)
        x = torch.zeros(1, L, D_MODEL)
    model.eval()
    fill_distinct(model, zlib.crc32(name.encode()))
    return model, x


def causal_decoder(L: int):
    """GPT-like: pre-norm self-attention + GELU MLP blocks, a causal mask, a final LayerNorm.
    (The class is defined here so that --help and the skip work without torch.)"""
    import torch
    from torch import nn

    class CausalDecoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, batch_first=True,
                                               norm_first=True, activation="gelu")
            self.blocks = nn.TransformerEncoder(layer, LAYERS, norm=nn.LayerNorm(D_MODEL),
                                                enable_nested_tensor=False)
            # A buffer, not built in forward: built in forward it is folded into one LxL
            # Constant node per layer (12 MB of ONNX at L=512); as a buffer it is one graph input.
            self.register_buffer("causal_mask",
                                 torch.triu(torch.full((L, L), float("-inf")), diagonal=1))

        def forward(self, x):
            return self.blocks(x, mask=self.causal_mask)

    return CausalDecoder()


def fill_distinct(model, seed: int):
    """Deterministic, distinct values for every parameter and float buffer (see the docstring)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.rand(p.shape, generator=g) * 0.2 - 0.1)
        for bname, b in model.named_buffers():
            if not b.is_floating_point() or "mask" in bname:
                continue
            if bname.endswith("running_var"):
                b.copy_(torch.rand(b.shape, generator=g) + 0.5)
            else:
                b.copy_(torch.rand(b.shape, generator=g) * 0.2 - 0.1)
    for p in model.parameters():
        p.requires_grad_(True)


FUSED = ("_transformer_encoder_layer_fwd", "_native_multi_head_attention", "ATen", "aten")


def export(name: str, path: Path) -> float:
    """Export one model to path; return the seconds it took."""
    import onnx
    import torch

    model, x = build(name)
    t0 = time.perf_counter()
    with torch.enable_grad(), warnings.catch_warnings():  # enable_grad: see the docstring
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.onnx.export(model, (x,), str(path), opset_version=17, export_params=False,
                          do_constant_folding=True, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    seconds = time.perf_counter() - t0
    graph = onnx.load(str(path)).graph
    bad = [n.op_type for n in graph.node if n.domain or n.op_type.startswith(FUSED)]
    if bad:
        raise RuntimeError(f"{name}: the export holds nodes ONNX cannot express: {sorted(set(bad))}")
    return seconds


# ---------------------------------------------------------------------------------------------
# The ops inventory (--inventory)


def inventory(name: str, path: Path) -> str:
    """A Markdown section: the op types on the data path and on the shape path (nodes computed
    only from Shape and Constant, which --dim batch=1 makes constant), and the matmul shapes as
    the torch trace sees them at batch 1 (ONNX shape inference stops at the computed Reshapes)."""
    import onnx
    import torch

    g = onnx.load(str(path)).graph
    static = set()  # values computed from Shape/Constant alone
    for n in g.node:
        if n.op_type in ("Shape", "Constant") or (
                n.input and all(i in static for i in n.input if i)):
            static.update(n.output)
    data = collections.Counter(n.op_type for n in g.node if n.output[0] not in static)
    shape = collections.Counter(n.op_type for n in g.node if n.output[0] in static)
    model, x = build(name)
    with torch.enable_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(model, (x,), check_trace=False)
    mm = collections.Counter()
    for n in traced.inlined_graph.nodes():
        if n.kind() in ("aten::matmul", "aten::bmm", "aten::baddbmm", "aten::linear", "aten::addmm",
                        "aten::mm", "aten::_convolution"):
            sizes = []
            for i in n.inputs():
                t = i.type()
                if isinstance(t, torch._C.TensorType) and t.sizes():
                    sizes.append("x".join(map(str, t.sizes())))
            mm[f"{n.kind()[6:]}({', '.join(sizes)})"] += 1
    lines = [f"### {name}", "",
             f"{len(g.node)} nodes, {len(g.input) - 1} weight inputs (no initializers)", "",
             "data path: " + ", ".join(f"{k} {v}" for k, v in data.most_common()), "",
             "shape path: " + (", ".join(f"{k} {v}" for k, v in shape.most_common()) or "none"), ""]
    if mm:
        lines += ["traced products (activation shapes at batch 1; weights not shown): "
                  + "; ".join(f"{k} x{v}" for k, v in mm.most_common()), ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Import


def importer_command(arg: str | None):
    env = dict(os.environ)
    if arg:
        return shlex.split(arg), env
    onnx_dir = str(REPO / "engine" / "onnx")
    env["PYTHONPATH"] = onnx_dir + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return [sys.executable, "-m", "mlsys_onnx"], env


def run_import(cmd, env, onnx_path: Path, out: Path, dims=("batch=1",)):
    args = list(cmd) + [str(onnx_path), "-o", str(out)]
    for d in dims:
        args += ["--dim", d]
    t0 = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True)
    return proc, time.perf_counter() - t0


def cuts_from(text: str):
    """The importer's count of cuts, when its output names one ("cuts: 3", "3 cuts", "cuts=3")."""
    m = re.search(r"\bcuts?\b\s*[:=]\s*(\d+)", text) or re.search(r"(\d+)\s+cuts?\b", text)
    return int(m.group(1)) if m else None


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Example: /usr/bin/python3 bench/models/make_models.py --only resnet18,encoder-s128"
               " --check. Models: " + ", ".join(NAMES) + ".",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", type=Path,
                    help="where the ONNX files (and the importer's raw output) go; default a temporary"
                         " directory, removed at the end")
    ap.add_argument("--instances", type=Path, default=REPO / "instances" / "models",
                    help="where NAME.json problems are written (default: %(default)s)")
    ap.add_argument("--only", help="comma-separated model names (default: all)")
    ap.add_argument("--mlsys-import", metavar="CMD",
                    help="the importer command, run as CMD MODEL.onnx -o PROBLEM.json --dim batch=1"
                         " (default: python3 -m mlsys_onnx with PYTHONPATH=<repo>/engine/onnx;"
                         " e.g. 'build/release/mlsys import')")
    ap.add_argument("--max-bytes", type=int, default=1_000_000,
                    help="largest problem written to --instances (default: %(default)s)")
    ap.add_argument("--no-import", action="store_true", help="export only (with --out-dir to keep them)")
    ap.add_argument("--inventory", type=Path, metavar="FILE",
                    help="also write a Markdown inventory of the ONNX op types and MatMul shapes")
    ap.add_argument("--check", action="store_true",
                    help="export and import everything a second time and check the bytes are equal")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    a = ap.parse_args()

    if a.list:
        print("\n".join(NAMES))
        return 0
    names = NAMES
    if a.only:
        names = [n.strip() for n in a.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in NAMES]
        if unknown:
            ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(NAMES)}")
    need_torch()
    import onnx
    import torch

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

    tmp = None
    if a.out_dir:
        out_dir = a.out_dir
        out_dir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.mkdtemp(prefix="mlsys-models-")
        out_dir = Path(tmp)
    cmd, env = importer_command(a.mlsys_import)
    if not a.no_import:
        a.instances.mkdir(parents=True, exist_ok=True)

    rows, failures, sections = [], 0, []
    try:
        for name in names:
            row = {"model": name}
            rows.append(row)
            onnx_path = out_dir / f"{name}.onnx"
            try:
                row["export_s"] = export(name, onnx_path)
            except Exception as e:  # noqa: BLE001 (report and go on with the next model)
                row["status"] = f"export failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
                failures += 1
                continue
            row["nodes"] = len(onnx.load(str(onnx_path)).graph.node)
            row["onnx_sha"] = sha(onnx_path)
            if a.inventory:
                sections.append(inventory(name, onnx_path))
            if a.check:
                again = out_dir / f"{name}.again.onnx"
                export(name, again)
                row["det_onnx"] = sha(again) == row["onnx_sha"]
                again.unlink()
            if a.no_import:
                row["status"] = "exported"
                continue
            raw = out_dir / f"{name}.json"
            proc, row["import_s"] = run_import(cmd, env, onnx_path, raw)
            said = (proc.stdout + "\n" + proc.stderr).strip()
            if proc.returncode != 0 or not raw.exists():
                last = [ln for ln in said.splitlines() if ln.strip()][-1:] or ["(no output)"]
                row["status"] = f"import failed (exit {proc.returncode}): {last[0][:300]}"
                failures += 1
                continue
            data = raw.read_bytes()
            problem = json.loads(data)
            meta = problem.get("onnx") if isinstance(problem.get("onnx"), dict) else {}
            # the importer's own record of cuts when it keeps one, else what its summary says
            row["cuts"] = len(meta["cuts"]) if isinstance(meta.get("cuts"), list) else cuts_from(said)
            if meta.get("skipped"):
                row["note"] = (f"{len(meta['skipped'])} unsupported node(s) bridged as Pointwise: "
                               + ", ".join(sorted({s.get('op_type', '?') for s in meta['skipped']})))
            kinds = collections.Counter(problem.get("op_types", []))
            row["matmul"], row["pointwise"] = kinds.get("MatMul", 0), kinds.get("Pointwise", 0)
            row["tensors"] = len(problem.get("widths", []))
            row["bytes"] = len(data)
            row["problem_sha"] = hashlib.sha256(data).hexdigest()[:12]
            if a.check:
                raw2 = out_dir / f"{name}.again.json"
                run_import(cmd, env, onnx_path, raw2)
                row["det_problem"] = raw2.exists() and raw2.read_bytes() == data
            if len(data) <= a.max_bytes:
                (a.instances / f"{name}.json").write_bytes(data)
                row["status"] = f"written {a.instances / (name + '.json')}"
            else:
                row["status"] = f"not written: {len(data):,} bytes > --max-bytes {a.max_bytes:,}"
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    if a.inventory:
        a.inventory.write_text("\n".join(sections))
    print_table(rows, a.check)
    if a.check:
        diff = [r["model"] for r in rows
                if r.get("det_onnx") is False or r.get("det_problem") is False]
        print(f"\ndeterminism: {'differs for ' + ', '.join(diff) if diff else 'same bytes on two runs'}")
        failures += len(diff)
    return 1 if failures else 0


def print_table(rows, check):
    def fmt(r, k, spec="{}"):
        v = r.get(k)
        return "-" if v is None else spec.format(v)

    head = ["model", "ONNX nodes", "ops (MatMul/Pointwise)", "tensors", "cuts", "export s",
            "import s", "problem bytes"]
    if check:
        head.append("same twice")
    lines = []
    for r in rows:
        ops = "-" if "matmul" not in r else f"{r['matmul'] + r['pointwise']} ({r['matmul']}/{r['pointwise']})"
        cells = [r["model"], fmt(r, "nodes"), ops, fmt(r, "tensors"), fmt(r, "cuts"),
                 fmt(r, "export_s", "{:.2f}"), fmt(r, "import_s", "{:.2f}"), fmt(r, "bytes", "{:,}")]
        if check:
            same = [r.get("det_onnx"), r.get("det_problem")]
            cells.append("-" if all(s is None for s in same)
                         else "yes" if all(s in (True, None) for s in same) else "NO")
        lines.append(cells)
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" if i == 0 else "--:" for i in range(len(head))) + "|")
    for c in lines:
        print("| " + " | ".join(c) + " |")
    notes = [f"- {r['model']}: {r['status']}" for r in rows
             if r.get("status") and not r["status"].startswith("written")]
    notes += [f"- {r['model']}: {r['note']}" for r in rows if r.get("note")]
    if notes:
        print("\n" + "\n".join(notes))


if __name__ == "__main__":
    sys.exit(main())
