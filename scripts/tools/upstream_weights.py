#!/usr/bin/env python3
"""Records, for each of upstream KernelBench's 250 problems, the state its Model draws under kbench's seed.

  upstream_weights.py --upstream DIR [--commit SHA] [--out FILE] [--only L:P ...]

DIR is the KernelBench/ directory of a KernelBench checkout (the one holding level1/ level2/ level3/).
For every problem there this builds upstream's Model on the CPU, float32 as constructed, the way
KernelBench's eval does it: get_init_inputs() first, then torch.manual_seed(1234) (kbench's
MODEL_SEED, scripts/tools/export_problems.py), then Model(*init_inputs). It writes, in state_dict() order,
one row per entry to tests/fixtures/problems/upstream_weights.json, which tests/problems/weights_match_upstream.py
compares with kbench's own problems (no upstream checkout needed there). A developer runs this once,
and again only when the seed or the KernelBench commit changes (about 6 min on 2 cores, 8.6 GB of
memory for level3/2). It records facts (names, shapes, fingerprints), no code.

A row is [name, shape, fingerprint, kind] (plus the dtype as a 5th item when it is not float32).
kind: "p" a parameter, "b" a buffer (both in state_dict() order first), then the tensors the model
holds outside its state_dict, in named_modules() order: "n" a non-persistent buffer, "t" a plain
tensor attribute (level3/33's hidden state upstream). fingerprint:
  - ["=", value] for a tensor whose elements are all equal (BatchNorm's ones and zeros, counters);
  - [sum, sumsq, first, last] for any other: sum and sumsq are the sums of the values and of their
    squares, accumulated in float64 (the tensor copied into float64 in chunks of 2**24 elements,
    then torch.sum and torch.dot), written with 10 significant digits; first and last are the first
    and last element in row-major order, written with 9 significant digits, which is exact for a
    float32. Two different draws of one shape differ in all four (a fresh draw moves the sum by about
    sqrt(sumsq), i.e. by 1/sqrt(n) relative to sqrt(n*sumsq), at least 2e-5 here); the same draw gives
    the same first/last exactly and the same sums up to float64 summation order (about 1e-12
    relative) and the 10-digit rounding (5e-10 relative).
  - ["empty"] for a tensor without elements.
Problems whose file imports einops (level3 48 and 49) are built with a stub einops module in
sys.modules: their constructors never call it.

The JSON holds {"about", "kernelbench_commit", "seed", "torch", "problems": {"L:P": {"name", "state":
[rows]}}}, one problem per line (about 350 KB). The test imports fingerprint() and tensors() from here,
so both sides fingerprint the same way.
"""
import argparse
import gc
import hashlib
import importlib.util
import json
import subprocess
import sys
import time
import types
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "problems" / "upstream_weights.json"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from export_problems import MODEL_SEED  # noqa: E402  kbench's seed for every reference model
CHUNK = 1 << 24


_BUFFER = []  # one float64 chunk, kept for the whole run: fresh large allocations are slow to fault in


def _chunk_buffer():
    if not _BUFFER:
        _BUFFER.append(torch.empty(CHUNK, dtype=torch.float64))
    return _BUFFER[0]


def _all_equal(flat):
    head = flat[:4096]
    if not bool((head == head[0]).all()):
        return False  # the usual case for a drawn tensor, decided without touching the rest
    return all(bool((flat[i:i + CHUNK] == flat[0]).all()) for i in range(0, flat.numel(), CHUNK))


def fingerprint(t):
    """The fingerprint of a tensor (see the module docstring), unrounded: the caller rounds."""
    flat = t.detach().reshape(-1)
    n = flat.numel()
    if n == 0:
        return ["empty"]
    if flat.dtype == torch.bool:
        flat = flat.to(torch.int64)
    first, last = flat[0].item(), flat[-1].item()
    if _all_equal(flat):
        return ["=", first]
    buf = _chunk_buffer()
    s = ss = 0.0
    for start in range(0, n, CHUNK):
        chunk = flat[start:start + CHUNK]
        b = buf[:chunk.numel()]
        b.copy_(chunk)
        s += b.sum().item()
        ss += torch.dot(b, b).item()
    return [s, ss, first, last]


def rounded(fp):
    """The fingerprint as written to the JSON: sums with 10 significant digits, values with 9."""
    if fp[0] == "empty":
        return fp
    if fp[0] == "=":
        return ["=", _num(fp[1])]
    return [float(f"{fp[0]:.10g}"), float(f"{fp[1]:.10g}"), _num(fp[2]), _num(fp[3])]


def _num(x):
    return x if isinstance(x, (int, bool)) else float(f"{x:.9g}")


def tensors(model):
    """(name, tensor, kind) for what the model holds: its state_dict() in order (kind "p" or "b"),
    then non-persistent buffers ("n") and plain tensor attributes ("t") in named_modules() order."""
    out = [(name, t, "p" if isinstance(t, torch.nn.Parameter) else "b")
           for name, t in model.state_dict(keep_vars=True).items()]
    seen = {name for name, _, _ in out}
    for prefix, module in model.named_modules():
        dot = prefix + "." if prefix else ""
        extra = [(k, "n") for k in module._buffers if k in module._non_persistent_buffers_set]
        extra += [(k, "t") for k, v in vars(module).items() if isinstance(v, torch.Tensor)]
        for k, kind in extra:
            t = getattr(module, k)
            if dot + k not in seen and isinstance(t, torch.Tensor):
                seen.add(dot + k)
                out.append((dot + k, t, kind))
    return out


def rows(model):
    out = []
    for name, t, kind in tensors(model):
        row = [name, list(t.shape), rounded(fingerprint(t)), kind]
        if t.dtype != torch.float32:
            row.append(str(t.dtype).replace("torch.", ""))
        out.append(row)
    return out


def einops_stub():
    stub = types.ModuleType("einops")

    def unavailable(*args, **kwargs):
        raise RuntimeError("einops stub: only construction is supported")

    stub.rearrange = stub.repeat = stub.reduce = stub.einsum = unavailable
    return stub


def load(path):
    name = "upstream_problem_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return name, module


def record(path):
    name, module = load(path)
    try:
        init_inputs = module.get_init_inputs()  # KernelBench's eval: init inputs, then the seed, then Model
        torch.manual_seed(MODEL_SEED)
        model = module.Model(*init_inputs)
        state = rows(model)
        del model
    finally:
        del sys.modules[name]
        gc.collect()
    return {"name": path.stem, "state": state}


def commit_of(upstream):
    try:
        return subprocess.run(["git", "-C", str(upstream), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upstream", required=True, type=Path, help="a KernelBench checkout's KernelBench/ directory")
    ap.add_argument("--out", type=Path, default=OUT, help=f"default {OUT.relative_to(ROOT)}")
    ap.add_argument("--commit", help="the KernelBench commit DIR holds (default: git rev-parse HEAD in DIR)")
    ap.add_argument("--only", nargs="+", metavar="L:P", help="only these problems; others are kept from --out")
    args = ap.parse_args()
    sys.modules.setdefault("einops", einops_stub())

    files = []
    for level in (1, 2, 3):
        for path in (args.upstream / f"level{level}").glob("*.py"):
            files.append((level, int(path.name.split("_")[0]), path))
    files.sort()
    if len(files) != 250:
        print(f"warning: {len(files)} problem files under {args.upstream} (expected 250)", file=sys.stderr)
    problems = {}
    if args.only:
        wanted = {tuple(int(x) for x in spec.split(":")) for spec in args.only}
        files = [f for f in files if f[:2] in wanted]
        if args.out.exists():
            problems = json.loads(args.out.read_text())["problems"]
    commit = args.commit or commit_of(args.upstream)
    failed = 0
    for level, pid, path in files:
        t0 = time.time()
        try:
            problems[f"{level}:{pid}"] = record(path)
            print(f"recorded  level{level}/{path.stem}  {len(problems[f'{level}:{pid}']['state'])} entries"
                  f"  {time.time() - t0:.1f}s", flush=True)
        except Exception as e:  # one bad problem must not stop the others
            failed += 1
            print(f"FAILED    level{level}/{path.stem}: {type(e).__name__}: {e}", flush=True)
    keys = sorted(problems, key=lambda k: tuple(int(x) for x in k.split(":")))
    head = {"about": "Generated by scripts/tools/upstream_weights.py (its docstring defines the rows); do not edit "
                     "by hand. Row: [name, shape, fingerprint, kind(, dtype)]; fingerprint: [sum, sumsq, first, "
                     "last] or ['=', value]; kind: p parameter, b buffer, n non-persistent buffer, t tensor attribute.",
            "kernelbench_commit": commit, "seed": MODEL_SEED, "torch": torch.__version__}
    lines = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()) + ', "problems": {']
    lines += [f" {json.dumps(k)}: {json.dumps(problems[k], separators=(',', ':'))}"
              + ("," if i + 1 < len(keys) else "") for i, k in enumerate(keys)]
    lines.append("}}")
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB): {len(keys)} problems, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
