#!/usr/bin/env bash
# On a GPU machine: configure against the installed PyTorch's libtorch, build, export the problems
# (LEVELS, default "1 2 3"), run every ctest test including label `gpu`, and print a compact summary.
# Logs go to $OUT (the device tool's output folder) or build-gpu/logs.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
LEVELS=${LEVELS:-"1 2 3"}
LOGS=${OUT:-$BUILD/logs}
export KBENCH_CACHE=${KBENCH_CACHE:-$PWD/.cache/kbench}
mkdir -p "$LOGS"
step() { echo "== $1"; }

step configure
cmake -S . -B "$BUILD" -G Ninja -DKBENCH_TORCH_FROM_PYTHON=ON -DCMAKE_BUILD_TYPE=Release >"$LOGS/configure.log" 2>&1 \
  || { tail -30 "$LOGS/configure.log"; exit 1; }
step build
cmake --build "$BUILD" -j "$(nproc)" >"$LOGS/build.log" 2>&1 || { grep -E -A6 "error|FAILED" "$LOGS/build.log" | head -60; exit 1; }
step export
export_args=(); for l in $LEVELS; do export_args+=(--level "$l"); done
python3 scripts/export_problems.py "${export_args[@]}" >"$LOGS/export.log" 2>&1
grep -E "^(failed|FAILED)" "$LOGS/export.log" | head -20; tail -1 "$LOGS/export.log"
step environment
"$BUILD/kbench" --version
"$BUILD/kbench" doctor
step ctest
ctest --test-dir "$BUILD" --output-on-failure -j1 ${CTEST_ARGS:-} >"$LOGS/ctest.log" 2>&1
grep -E "tests passed|tests failed|Skipped|\(Failed\)|\(SEGFAULT\)|Timeout" "$LOGS/ctest.log" | head -40
grep -E "^l[0-9]_.*: " "$LOGS/ctest.log" | head -60
