#!/usr/bin/env bash
# On a GPU machine, the steps of a verification session, each printing a few lines; a device call
# (10 minutes at most) runs the steps it names and the next call on the same machine finds the
# build and the archives still there. Logs go to one tarball in $OUT (the device tool brings back
# at most 8 files), or to build-gpu/logs.
#   scripts/gpu-session.sh build newcomer export degenerate tests ci throughput phases
# build       configure (preset gpu) and build, timed
# newcomer    a new user's first verdict: export L1#19 and evaluate its reference kernel, timed
# export      every problem's archive (one process)
# degenerate  kbench degenerate --write over all problems (problems/degenerate.json, copied to $OUT)
# tests       ctest -L gpu
# ci          kbench ci against results/ci/<gpu>.json (CI_RECORD=1: --record, copied to $OUT)
# throughput  scripts/throughput-bench.sh (200 submissions through kbench batch)
# phases      scripts/eval-phases.sh
# modelnew    KernelBench's ModelNew format: export L1#1, L1#19, L2#12; the ModelNew tests (CPU and gpu)
# modelnew-bench  scripts/modelnew-bench.sh (ModelNew against .cu eval times; 50 extension builds)
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=$(mktemp -d)
export KBENCH_CACHE=${KBENCH_CACHE:-$PWD/build-gpu/cache}
KB=build-gpu/kbench
GPU_SLUG=$(python3 -c 'import torch, re; n = torch.cuda.get_device_name(0); print(re.sub("[^A-Za-z0-9]", "_", n[7:] if n.startswith("NVIDIA ") else n))')
timed() {  # timed NAME COMMAND...: runs it, prints its wall time and exit code
  local name=$1 start=$SECONDS rc
  shift
  "$@" >"$LOGS/$name.log" 2>&1
  rc=$?
  echo "== $name: $((SECONDS - start)) s, rc=$rc"
  return $rc
}
save() { [[ -n ${OUT:-} ]] && cp "$@" "$OUT/" ; }

for step in "$@"; do
  case $step in
  build)
    timed configure cmake --preset gpu -DKBENCH_TEST_MAX_WEIGHT_BYTES=17179869184 || tail -20 "$LOGS/configure.log"
    timed build cmake --build --preset gpu -j "$(nproc)" || grep -E -A6 "error|FAILED" "$LOGS/build.log" | head -60 ;;
  newcomer)
    timed export-one python3 scripts/export_problems.py --only 1:19
    timed first-eval $KB eval level1/19_ReLU.cu --level 1 --problem 19
    tail -6 "$LOGS/first-eval.log" ;;
  export)
    timed export-all python3 scripts/export_problems.py
    tail -1 "$LOGS/export-all.log" ;;
  degenerate)
    timed degenerate $KB degenerate --write
    grep -v '\[\]' "$LOGS/degenerate.log" | cut -c1-160
    save problems/degenerate.json ;;
  tests)
    timed ctest ctest --test-dir build-gpu -L gpu --output-on-failure -j1
    grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|Timeout|Not Run" "$LOGS/ctest.log" | head -20
    grep -E "^adversarial .*|^l[0-9]_.*: " "$LOGS/ctest.log" | awk '{printf "%s %s %s | ", $2, $3, $4}' | head -c 6000; echo ;;
  ci)
    timed ci $KB ci ${CI_RECORD:+--record}
    tail -45 "$LOGS/ci.log" | cut -c1-150
    [[ -n ${CI_RECORD:-} ]] && save "results/ci/$GPU_SLUG.json" ;;
  throughput)
    timed throughput scripts/throughput-bench.sh build-gpu "$LOGS"
    tail -22 "$LOGS/throughput.log" | cut -c1-400 ;;
  phases)
    timed phases scripts/eval-phases.sh build-gpu "$LOGS"
    tail -12 "$LOGS/phases.log" ;;
  modelnew)
    timed export-modelnew python3 scripts/export_problems.py --only 1:1 1:19 2:12
    timed ctest-modelnew ctest --test-dir build-gpu -R "ModelNew|modelnew|launch entry point|extension|TORCH_CUDA_ARCH_LIST|build that fails" -FA '.*' -V -j1
    grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|Timeout|Not Run" "$LOGS/ctest-modelnew.log" | head -20
    grep -E "^[0-9]+: modelnew (batch|eval)" "$LOGS/ctest-modelnew.log" | sed -E 's/^[0-9]+: //' | cut -c1-150 | head -60 ;;
  modelnew-bench)
    timed modelnew-bench scripts/modelnew-bench.sh build-gpu "$LOGS"
    tail -14 "$LOGS/modelnew-bench.log" | cut -c1-200 ;;
  *) echo "unknown step: $step" ;;
  esac
done
[[ -n ${OUT:-} ]] && tar czf "$OUT/session-logs.tgz" -C "$LOGS" .
exit 0
