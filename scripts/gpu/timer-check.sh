#!/usr/bin/env bash
# Benchmark: is kbench's timer right? On a GPU machine after the build (and, for the eager part, the
# export of the problems named below):
#  1. kernels of 10 us to 10 ms (tests/bench/timer_bench.cpp) timed by kbench five times: the mean
#     and the run-to-run spread of the five means;
#  2. the same kernels under Nsight Compute (gpu__time_duration, caches flushed, clocks untouched):
#     kbench's mean against ncu's;
#  3. eager references timed by `kbench baseline` (C++, TorchScript run op by op) against the same
#     models timed from Python with the same protocol (scripts/tools/time_reference.py), and, to show what
#     TorchScript's own optimizer would change, the archive timed from Python with fusion allowed.
# Usage: scripts/gpu/timer-check.sh [build-dir] [out-dir]
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
OUT_DIR=${2:-${OUT:-/tmp}}
PROBLEMS=${TIMER_CHECK_PROBLEMS:-1:23,1:19,1:1,2:12,2:1,3:4}
mkdir -p "$OUT_DIR"

"$BUILD/tests/kbench_timer_bench" >"$OUT_DIR/timer-kbench.jsonl" || exit 1
iters=$(python3 -c 'import json,sys; print(",".join(str(json.loads(l)["iters"]) for l in open(sys.argv[1])))' "$OUT_DIR/timer-kbench.jsonl")
ncu --clock-control none --cache-control all --metrics gpu__time_duration.sum --csv --page raw -k regex:spin_ \
  "$BUILD/tests/kbench_timer_bench" --iters "$iters" --launches 20 >"$OUT_DIR/timer-ncu.csv" 2>"$OUT_DIR/timer-ncu.log"

: >"$OUT_DIR/eager-cpp.jsonl"
for lp in ${PROBLEMS//,/ }; do
  "$BUILD/kbench" --json baseline --no-record --level "${lp%%:*}" --problem "${lp##*:}" >>"$OUT_DIR/eager-cpp.jsonl" 2>>"$OUT_DIR/eager-cpp.log"
done
python3 scripts/tools/time_reference.py --problems "$PROBLEMS" >"$OUT_DIR/eager-python.jsonl" 2>"$OUT_DIR/eager-python.log"
python3 scripts/tools/time_reference.py --problems "$PROBLEMS" --scripted --fuse >"$OUT_DIR/eager-fused.jsonl" 2>>"$OUT_DIR/eager-python.log"

python3 - "$OUT_DIR" <<'PY'
import csv, json, sys, pathlib, statistics
out = pathlib.Path(sys.argv[1])
# 1 + 2: kbench against Nsight Compute.
kb = [json.loads(l) for l in (out / "timer-kbench.jsonl").read_text().splitlines() if l.strip()]
rows = [r for r in csv.reader(l for l in (out / "timer-ncu.csv").read_text().splitlines() if l.startswith('"'))]
ncu = {}
if rows:
    head = rows[0]
    name_col, time_col = head.index("Kernel Name"), head.index("gpu__time_duration.sum")
    scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0, "s": 1e3, "second": 1e3}
    unit = scale.get(rows[1][time_col], None) if len(rows) > 1 else None
    for r in rows[1 + (unit is not None):]:
        ncu.setdefault(r[name_col], []).append(float(r[time_col].replace(",", "")) * (unit or 1e-6))
print(f"{'kernel':12s} {'kbench mean':>12s} {'ncu mean':>10s} {'diff':>7s} {'spread of 5 runs':>17s} {'hidden':>6s}")
for k in kb:
    n = statistics.mean(ncu[k["kernel"]]) if k["kernel"] in ncu else float("nan")
    print(f"{k['kernel']:12s} {k['mean_ms']:10.4f}ms {n:8.4f}ms {100 * (k['mean_ms'] - n) / n:6.2f}% {k['spread_pct']:16.2f}% {k.get('hidden_work_trials', 0):6d}")
# 3: eager from C++ against eager from Python.
cpp, text, at = {}, (out / "eager-cpp.jsonl").read_text(), 0
decoder = json.JSONDecoder()
while text[at:].strip():  # one pretty-printed document per kbench baseline call
    at = len(text) - len(text[at:].lstrip())
    doc, at = decoder.raw_decode(text, at)
    for p in doc.get("problems", []):
        if "eager" in p:
            cpp[(p["level"], p["id"])] = p["eager"]["mean_ms"]
fused = {}
for l in (out / "eager-fused.jsonl").read_text().splitlines():
    p = json.loads(l)
    if "mean" in p:
        fused[(p["level"], p["id"])] = p["mean"]
print(f"\n{'problem':44s} {'C++ (op by op)':>16s} {'Python (module)':>16s} {'diff':>7s} {'TorchScript fused':>18s}")
for l in (out / "eager-python.jsonl").read_text().splitlines():
    p = json.loads(l)
    if "mean" not in p:
        print(f"L{p['level']} {p['name']}: {p.get('error') or p.get('skipped')}")
        continue
    c = cpp.get((p["level"], p["id"]), float("nan"))
    f = fused.get((p["level"], p["id"]), float("nan"))
    print(f"L{p['level']} {p['name']:41s} {c:14.4f}ms {p['mean']:14.4f}ms {100 * (c - p['mean']) / p['mean']:6.2f}% {f:16.4f}ms")
PY
