#!/usr/bin/env python3
"""Every reference Model draws the same weights as upstream KernelBench's under the same seed.

kbench builds a problem's Model, and a submission's ModelNew, under torch.manual_seed(1234)
(scripts/tools/export_problems.py, MODEL_SEED), as KernelBench does with its seed. A ModelNew written in
upstream's construction order therefore gets the reference's weights only if kbench's Model draws
its weights in upstream's order. This test builds kbench's Model for all 250 problems exactly as the
exporter does (export_problems.build_model: CPU, float32, from get_init_inputs()) and compares what
it holds with tests/fixtures/problems/upstream_weights.json, which scripts/tools/upstream_weights.py recorded from
upstream KernelBench at commit 423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (423217d, "update all legacy
python commands to UV + document integration (#143)") under the same seed, with PyTorch 1.13. No
network and no upstream checkout are needed.

Per problem it checks: the state_dict names and their order, each entry's shape, dtype and value
fingerprint, and the tensors held outside the state_dict (non-persistent buffers, plain tensor
attributes). The fingerprint (defined in scripts/tools/upstream_weights.py) is the float64 sum and sum of
squares of the values plus the first and last value, or the single value of a constant tensor. The
first/last/constant values must agree exactly (in float32); the two sums within a tolerance, since
float64 summation order can differ between machines and the record keeps 10 significant digits:
  |sum - sum'| <= 1e-8 |sum'| + 1e-10 sqrt(n sumsq'),   |sumsq - sumsq'| <= 1e-8 sumsq'
(a different draw of n values moves the sum by about sqrt(sumsq), i.e. 1/sqrt(n) >= 2e-5 of
sqrt(n sumsq) for the largest tensor here, and a summation-order difference by about 1e-12).

Where upstream and kbench hold the same values in different kinds of slots (a parameter against a
buffer, or, as for level3/33's hidden state, a plain tensor attribute upstream against a
non-persistent buffer in kbench), the values decide: the difference is accepted and printed as a
`note` line. When values differ, the line says whose values kbench's entry holds instead (moved or
swapped with another entry) or that they match no upstream entry.

Run:  /usr/bin/python3 tests/problems/weights_match_upstream.py [L:P ...]
Prints one line per mismatch (`FAIL level3/20_MobileNetV2: ...`), `note` lines for accepted
differences, the elapsed seconds, and a final `N passed, M failed`; exit code 0 only if M == 0.
The largest model (level3/2, 2.1e9 parameters, 8.6 GB) is built alone and freed before the next:
peak memory about 8.4 GiB; about 225 s on 2 cores (most of it drawing level3/2's and level2/55-59's
weights).
"""
import gc
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts" / "tools"))
import export_problems  # noqa: E402
import problem_source  # noqa: E402
import upstream_weights  # noqa: E402

RECORD = ROOT / "tests" / "fixtures" / "problems" / "upstream_weights.json"
REL = 1e-8
ABS_OF_NORM = 1e-10
MAX_LINES = 40  # per problem; the rest is counted


def same_scalar(got, want, dtype):
    if isinstance(want, (int, bool)) or isinstance(got, (int, bool)):
        return got == want
    if dtype in ("float32", "float16", "bfloat16"):
        return np.float32(got) == np.float32(want)  # 9 significant digits round-trip a float32
    return abs(got - want) <= REL * max(abs(want), 1e-300)


def same_values(got, want, n, dtype):
    """got: the unrounded fingerprint of kbench's tensor; want: the recorded one."""
    if got[0] in ("empty", "=") or want[0] in ("empty", "="):
        return got[0] == want[0] and (got[0] == "empty" or same_scalar(got[1], want[1], dtype))
    s, ss, first, last = got
    s0, ss0, first0, last0 = want
    return (same_scalar(first, first0, dtype) and same_scalar(last, last0, dtype)
            and abs(s - s0) <= REL * abs(s0) + ABS_OF_NORM * math.sqrt(n * ss0)
            and abs(ss - ss0) <= REL * ss0)


def describe(fp):
    if fp[0] == "empty":
        return "no elements"
    if fp[0] == "=":
        return f"all {fp[1]:.9g}" if isinstance(fp[1], float) else f"all {fp[1]}"
    return f"sum {fp[0]:.10g}, sumsq {fp[1]:.10g}, first {fp[2]:.9g}, last {fp[3]:.9g}"


KINDS = {"p": "a parameter", "b": "a buffer", "n": "a non-persistent buffer", "t": "a plain tensor attribute"}


def kbench_rows(path):
    """(name, shape, fingerprint, kind, dtype) for kbench's Model, built as the exporter builds it."""
    module = problem_source.load_module(path)
    try:
        model = export_problems.build_model(module)
        out = [(name, list(t.shape), upstream_weights.fingerprint(t), kind, str(t.dtype).replace("torch.", ""))
               for name, t, kind in upstream_weights.tensors(model)]
        del model
    finally:
        sys.modules.pop(module.__name__, None)
        del module
        gc.collect()
    return out


def compare(got_rows, want_rows):
    """Returns (failures, notes): lines to print."""
    fails, notes = [], []
    got = {r[0]: r for r in got_rows}
    want = {r[0]: (r[0], r[1], r[2], r[3], r[4] if len(r) > 4 else "float32") for r in want_rows}
    for name in want:
        if name not in got:
            fails.append(f"{name} ({KINDS[want[name][3]]} upstream, shape {want[name][1]}) is missing")
    for name in got:
        if name not in want:
            fails.append(f"{name} ({KINDS[got[name][3]]}, shape {got[name][1]}) is not in upstream's Model")
    got_state = [r[0] for r in got_rows if r[3] in "pb" and r[0] in want and want[r[0]][3] in "pb"]
    want_state = [r[0] for r in want.values() if r[3] in "pb" and r[0] in got and got[r[0]][3] in "pb"]
    if got_state != want_state:
        i = next(i for i, (a, b) in enumerate(zip(got_state, want_state)) if a != b)
        fails.append(f"state_dict order differs from entry {i} on: upstream {want_state[i]}, kbench {got_state[i]}")

    differing = []
    for name, (_, shape, fp, kind, dtype) in got.items():
        if name not in want:
            continue
        _, shape0, fp0, kind0, dtype0 = want[name]
        if shape != shape0 or dtype != dtype0:
            fails.append(f"{name}: shape {shape} {dtype}, upstream {shape0} {dtype0}")
            continue
        if not same_values(fp, fp0, math.prod(shape), dtype):
            differing.append(name)
        elif kind != kind0:
            notes.append(f"{name} is {KINDS[kind0]} upstream and {KINDS[kind]} in kbench; "
                         "values match (accepted)")

    # Whose values does a differing entry hold? Only drawn (non-constant) values identify an entry.
    def holder(name):
        _, shape, fp, _, dtype = got[name]
        if fp[0] in ("empty", "="):
            return None
        for other, (_, shape0, fp0, _, dtype0) in want.items():
            if other != name and shape0 == shape and dtype0 == dtype and same_values(fp, fp0, math.prod(shape), dtype):
                return other
        return None

    holders = {name: holder(name) for name in differing}
    if differing:
        moved = sum(1 for h in holders.values() if h is not None)
        fails.append(f"{len(differing)} of {len(got)} entries hold other values than upstream's: {moved} hold "
                     f"another upstream entry's values (construction order), {len(differing) - moved} match "
                     "none (another initialisation or draw)")
    for name in differing:
        other = holders[name]
        if other is None:
            fails.append(f"{name}: values differ and match no upstream entry: kbench {describe(got[name][2])}; "
                         f"upstream {describe(want[name][2])}")
        elif holders.get(other) == name:
            if name < other:
                fails.append(f"{name} and {other}: values swapped (each holds what upstream draws for the other)")
        else:
            fails.append(f"{name}: values moved: kbench's {name} holds what upstream draws for {other}")
    return fails, notes


def main():
    t0 = time.time()
    record = json.loads(RECORD.read_text())
    if record["seed"] != export_problems.MODEL_SEED:
        print(f"FAIL: {RECORD.name} was recorded under seed {record['seed']}, kbench builds under "
              f"{export_problems.MODEL_SEED}: rerun scripts/tools/upstream_weights.py")
        print("0 passed, 250 failed")
        return 1
    wanted = None
    if len(sys.argv) > 1:
        wanted = {tuple(int(x) for x in arg.split(":")) for arg in sys.argv[1:]}
    files = [f for f in export_problems.problem_files([1, 2, 3]) if wanted is None or f[:2] in wanted]
    passed = failed = 0
    for level, pid, path in files:
        label = f"level{level}/{path.stem}"
        want = record["problems"].get(f"{level}:{pid}")
        if want is None:
            print(f"FAIL {label}: no upstream record in {RECORD.name}", flush=True)
            failed += 1
            continue
        try:
            got = kbench_rows(path)
            fails, notes = compare(got, want["state"])
        except Exception as e:  # one bad problem must not stop the others
            fails, notes = [f"could not build: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"], []
        if want["name"] != path.stem:
            fails.insert(0, f"upstream's file is {want['name']}.py")
        for line in notes:
            print(f"note {label}: {line}", flush=True)
        for line in fails[:MAX_LINES]:
            print(f"FAIL {label}: {line}", flush=True)
        if len(fails) > MAX_LINES:
            print(f"FAIL {label}: ... and {len(fails) - MAX_LINES} more differences", flush=True)
        if fails:
            failed += 1
        else:
            passed += 1
    print(f"elapsed {time.time() - t0:.1f} s (record: KernelBench {record['kernelbench_commit'][:7]}, "
          f"seed {record['seed']})")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
