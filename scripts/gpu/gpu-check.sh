#!/usr/bin/env bash
# On a GPU machine: configure against the installed PyTorch's libtorch (preset gpu), build, run every
# ctest test including label `gpu` (the export_problems fixture makes the archives first), and print
# a compact summary. Logs go to $OUT (the device tool's output folder) or build-gpu/logs.
# CTEST_ARGS passes extra ctest arguments (e.g. "-R gpu:").
set -uo pipefail
cd "$(dirname "$0")/../.."
LOGS=${OUT:-build-gpu/logs}
mkdir -p "$LOGS"
step() { echo "== $1"; }

step configure
# shellcheck disable=SC2046  # cpp-httplib unpacked from .deb/ where it is not installed
cmake --preset gpu -DKBENCH_TEST_MAX_WEIGHT_BYTES=${KBENCH_TEST_MAX_WEIGHT_BYTES:-17179869184} \
  $(scripts/fetch-debs.sh cmake-args build-gpu/debs) >"$LOGS/configure.log" 2>&1 || { tail -30 "$LOGS/configure.log"; exit 1; }
step build
cmake --build --preset gpu -j "$(nproc)" >"$LOGS/build.log" 2>&1 \
  || { grep -E -A6 "error|FAILED" "$LOGS/build.log" | head -60; exit 1; }
step environment
build-gpu/kbench --version
build-gpu/kbench doctor
step ctest
ctest --test-dir build-gpu --output-on-failure -j1 ${CTEST_ARGS:-} >"$LOGS/ctest.log" 2>&1
grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|Timeout|Not Run|Skipped\)" "$LOGS/ctest.log" | head -40
grep -E "^l[0-9]_.*: |^export \(|loaded, .* skipped|CPU forwards" "$LOGS/ctest.log" | head -80
