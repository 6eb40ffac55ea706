#!/usr/bin/env bash
# kbench serve's benchmark on a GPU machine, after the build (scripts/gpu/gpu-session.sh build): warm
# request latency, throughput beside kbench batch on the same mix, a bounded load test with a
# SIGTERM in the middle, scaling over GPUs, hostile connections, a worker killed from outside and
# ModelNew requests beside .cu ones (scripts/bench/serve_bench.py says what each measures). Prints figures
# beside the goals of issues #24, #35 and #37; asserts nothing. Each part exports the problems it
# needs first.
# Usage: scripts/bench/serve-bench.sh [build-dir] [out-dir] [part ...]
#   parts: latency (~1.5 min on an H100), throughput (~6 min: batch, then serve), load (~2 min),
#   scaling (~3 min a run: one GPU, then all visible), hostile (~1 min), killed (~1 min),
#   modelnew-warm (~2 min, the extension's first build included);
#   default: latency, throughput and load
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
OUT_DIR=${2:-${OUT:-/tmp}}
exec python3 scripts/bench/serve_bench.py "$BUILD" "$OUT_DIR" "${@:3}"
