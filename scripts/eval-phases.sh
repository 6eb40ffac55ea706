#!/usr/bin/env bash
# Benchmark: where `kbench eval` spends its time, for a level-1 and a level-2 problem, on a GPU
# machine after the build and the export. Each submission is evaluated with an empty compile cache
# (cold NVRTC) and again with it filled; the table splits the wall time of the whole command into
# start-up (process, worker), problem load, NVRTC, host compile, the GPU's preparation (CUDA
# context, reference load, memory held for poisoning; beside NVRTC, so only the wait for it adds),
# and the correctness trials (inputs, candidate, checks, reference, compare) and timing. Usage: scripts/eval-phases.sh [build-dir] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
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
  for cache in cold warm; do
    [[ $cache == cold ]] && rm -rf "${KBENCH_CACHE:-$HOME/.cache/kbench}/compile"
    start=$(date +%s%N)
    "$BUILD/kbench" eval "$file" --level "$level" --problem "$problem" --out "$OUT_DIR/phases-$level-$problem-$cache.json" >/dev/null || true
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
print(f"{'submission':42s} {'cache':5s} {'lines':>5s} {'wall':>8s} {'start-up':>8s} {'nvrtc':>7s} {'host':>6s} "
      f"{'load':>5s} {'env':>5s} {'ctx':>6s} {'ref load':>8s} {'hold':>6s} {'wait':>6s} {'hold2':>6s} {'params':>6s} {'inputs':>7s} {'cand.':>7s} {'checks':>7s} {'ref':>7s} {'compare':>7s} {'timing':>8s} {'verdict'}")
for (f, cache), wall in walls.items():
    level, problem = f.split("/")[0][-1], f.split("/")[1].split("_")[0]
    r = json.loads((out / f"phases-{level}-{problem}-{cache}.json").read_text())
    p = r.get("phases_ms", {})
    split = p.get("correctness_split", {})
    gpu = p.get("gpu_prepare", {})
    lines = len(pathlib.Path(f).read_text().splitlines())
    # In-process phases start when the worker begins the request; the rest of the wall is start-up.
    startup = wall - p.get("total", 0)
    print(f"{f:42s} {cache:5s} {lines:5d} {wall:8.0f} {startup:8.0f} {p.get('nvrtc', 0):7.1f} {p.get('host_compile', 0):6.1f} "
          f"{p.get('problem_load', 0):5.0f} {p.get('environment', 0):5.0f} {gpu.get('cuda_context', 0):6.1f} {gpu.get('reference_load', 0):8.1f} {gpu.get('memory_hold', 0):6.1f} "
          f"{p.get('gpu_wait', 0):6.1f} {p.get('memory_hold', 0):6.1f} {p.get('params', 0):6.1f} {split.get('inputs', 0):7.1f} {split.get('candidate', 0):7.1f} "
          f"{split.get('checks', 0):7.1f} {split.get('reference', 0):7.1f} {split.get('compare', 0):7.1f} "
          f"{p.get('timing', 0):8.0f} {r.get('verdict')}")
print("(ms; correctness columns are sums over the 5 trials; 'cand.' includes poisoning free memory and the out-of-bounds check)")
PY
