#!/usr/bin/env bash
# Benchmark: where `kbench eval` spends its time, for a level-1 and a level-2 problem, on a GPU
# machine after the build and the export. Each submission is evaluated with an empty compile cache
# (cold NVRTC) and again with it filled; the table splits the wall time of the whole command into
# start-up (process and libtorch, before the worker), problem load (with the
# device query's cuInit), NVRTC, host compile, the GPU's preparation (CUDA context, reference read
# on the CPU and moved to the GPU, memory held for poisoning; beside NVRTC, so only the wait for it
# adds), and the correctness trials (inputs, candidate, checks, reference, compare) and timing; L2#12
# once more with --profile ('profile' row: its 'prof' column is the profile stage, whose cost the
# last line sets against the warm run's wall time). Usage: scripts/bench/eval-phases.sh [build-dir] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
OUT_DIR=${2:-${OUT:-/tmp}}
mkdir -p "$OUT_DIR"
rm -f "$OUT_DIR/phases-wall.txt"
# The floor under every command: process start, loading libtorch's libraries, exit (no CUDA).
floor=()
for _ in 1 2 3; do
  start=$(date +%s%N); "$BUILD/kbench" --version >/dev/null; end=$(date +%s%N)
  floor+=($(((end - start) / 1000000)))
done
echo "kbench --version: ${floor[*]} ms (process start, libtorch loaded, exit; no CUDA)"
# L1#23 includes cooperative_groups.h (about 1.2 s of NVRTC on the H100's host for the CUDA 13
# headers it pulls in); L1#37 is a kernel of about 100 lines without such headers.
cases=("level1/23_Softmax.cu 1 23" "level1/37_FrobeniusNorm_.cu 1 37" "level2/12_Gemm_Multiply_LeakyReLU.cu 2 12")
for c in "${cases[@]}"; do
  read -r file level problem <<<"$c"
  modes="cold warm"
  [[ $level/$problem == 2/12 ]] && modes="cold warm profile"
  for cache in $modes; do
    [[ $cache == cold ]] && rm -rf "${KBENCH_CACHE:-$HOME/.cache/kbench}/compile"
    extra=()
    [[ $cache == profile ]] && extra=(--profile)
    start=$(date +%s%N)
    "$BUILD/kbench" eval "$file" --level "$level" --problem "$problem" "${extra[@]}" --out "$OUT_DIR/phases-$level-$problem-$cache.json" >/dev/null || true
    end=$(date +%s%N)
    echo "$file $cache $(((end - start) / 1000000))" >>"$OUT_DIR/phases-wall.txt"
  done
done
python3 - "$OUT_DIR" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
walls = {}
for line in (out / "phases-wall.txt").read_text().splitlines():
    f, cache, s = line.split()
    walls[(f, cache)] = float(s)
# One row per run, two lines: where the wall time went, then the GPU's preparation (a thread beside
# the NVRTC compile: only 'wait' adds to the wall) and the GPU's own work.
print(f"{'submission':40s} {'cache':5s} {'wall':>6s} {'start':>6s} {'other':>5s} {'load':>5s} {'env':>4s} "
      f"{'nvrtc':>7s} {'host':>5s} {'wait':>6s} {'hold2':>5s} {'params':>6s} {'check':>6s} {'timing':>6s} {'prof':>5s} {'non-GPU':>7s}  verdict")
rows = []
for (f, cache), wall in walls.items():
    level, problem = f.split("/")[0][-1], f.split("/")[1].split("_")[0]
    r = json.loads((out / f"phases-{level}-{problem}-{cache}.json").read_text())
    p = r.get("phases_ms", {})
    proc = p.get("process", {})
    start = proc.get("before_worker", 0)
    # 'other': fork, requests and records between the processes, output, killing the worker, exit.
    other = wall - start - p.get("total", 0)
    gpu_work = p.get("correctness", 0) + p.get("timing", 0)
    print(f"{f:40s} {cache:5s} {wall:6.0f} {start:6.0f} {other:5.0f} {p.get('problem_load', 0):5.0f} "
          f"{p.get('environment', 0):4.0f} {p.get('nvrtc', 0):7.1f} {p.get('host_compile', 0):5.1f} {p.get('gpu_wait', 0):6.1f} "
          f"{p.get('memory_hold', 0):5.1f} {p.get('params', 0):6.1f} {p.get('correctness', 0):6.0f} {p.get('timing', 0):6.0f} "
          f"{p.get('profile', 0):5.0f} {wall - gpu_work:7.0f}  {r.get('verdict')}")
    rows.append((f, cache, lines := len(pathlib.Path(f).read_text().splitlines()), p))
print("start: process start to the worker's request (libtorch loads before main; 10 ms ticks); the worker's end, which")
print("releases its context and held memory, goes on after kbench exits;")
print("non-GPU: wall minus correctness and timing. GPU preparation, beside NVRTC (ms):")
print(f"{'submission':40s} {'cache':5s} {'lines':>5s} {'context':>7s} {'ref read':>8s} {'read wait':>9s} {'to GPU':>7s} {'hold':>6s} "
      f"{'inputs':>7s} {'cand.':>7s} {'guard':>7s} {'checks':>7s} {'ref':>7s} {'compare':>7s}")
for f, cache, lines, p in rows:
    gpu = p.get("gpu_prepare", {})
    split = {k: sum(part.get(k, 0) for part in p.get("correctness_split", {}).values())
             for k in ("inputs", "candidate", "guard", "checks", "reference", "compare")}
    print(f"{f:40s} {cache:5s} {lines:5d} {gpu.get('cuda_context', 0):7.1f} {gpu.get('reference_read', 0):8.1f} "
          f"{gpu.get('reference_read_wait', 0):9.1f} {gpu.get('reference_to_gpu', 0):7.1f} {gpu.get('memory_hold', 0):6.1f} "
          f"{split.get('inputs', 0):7.1f} {split.get('candidate', 0):7.1f} {split.get('guard', 0):7.1f} {split.get('checks', 0):7.1f} "
          f"{split.get('reference', 0):7.1f} {split.get('compare', 0):7.1f}")
print("(correctness columns are sums over all trials; 'cand.' includes 'guard': poisoning free memory and the out-of-bounds check;")
print(" 'ref read' is the archive read on the CPU from the request's start, beside the device query and CUDA's start-up)")
profiled = [(f, p) for f, cache, lines, p in rows if cache == "profile"]
for f, p in profiled:
    split = p.get("profile_split", {})
    added = walls[(f, "profile")] - walls[(f, "warm")]
    print(f"--profile on {f}: profile stage {p.get('profile', 0):.0f} ms (candidate {split.get('candidate', 0):.0f}, "
          f"reference {split.get('reference', 0):.0f}); wall {added:+.0f} ms against the warm run (goal: at most 1000)")
PY
