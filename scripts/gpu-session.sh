#!/usr/bin/env bash
# On a GPU machine, in one device call: build (preset gpu), export only the problems the GPU tests
# use, run the `gpu` tests, then the eval-phases benchmark (start-up included). Compact output; logs in
# $OUT (or build-gpu/logs). Faster than scripts/gpu-check.sh, which exports all 250 problems.
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=${OUT:-build-gpu/logs}
mkdir -p "$LOGS"
export KBENCH_CACHE=${KBENCH_CACHE:-$PWD/build-gpu/cache}
cmake --preset gpu -DKBENCH_TEST_MAX_WEIGHT_BYTES=17179869184 >"$LOGS/configure.log" 2>&1 || { tail -30 "$LOGS/configure.log"; exit 1; }
cmake --build --preset gpu -j "$(nproc)" >"$LOGS/build.log" 2>&1 \
  || { grep -E -A6 "error|FAILED" "$LOGS/build.log" | head -80; exit 1; }
echo "== build done at ${SECONDS}s"
python3 scripts/export_problems.py --only 1:1 1:19 1:20 1:21 1:22 1:23 1:26 1:37 1:39 1:49 1:88 1:100 2:1 2:12 3:4 \
  >"$LOGS/export.log" 2>&1
echo "== export done at ${SECONDS}s"
if [[ -z ${SKIP_TESTS:-} ]]; then
  ctest --test-dir build-gpu -L gpu -FS archives --output-on-failure -j1 >"$LOGS/ctest.log" 2>&1
  grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|Timeout|Not Run" "$LOGS/ctest.log" | head -20
  grep -E "^l[0-9]_.*: |^[a-z_]+\.cu: " "$LOGS/ctest.log" | awk '{print}' ORS=' | ' | head -c 6000; echo
  echo "== tests done at ${SECONDS}s"
fi
scripts/eval-phases.sh build-gpu "$LOGS" 2>&1 | tail -21
