#!/usr/bin/env bash
# On a GPU machine: build (preset gpu), export the named problems only, and evaluate the given
# submissions, printing one line per verdict. For quick checks inside one device call; the full
# suite is scripts/gpu-check.sh.
# Usage: scripts/gpu-quick.sh "1:19 2:12" file.cu:L:P [file.cu:L:P ...]
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=${OUT:-build-gpu/logs}
mkdir -p "$LOGS"
cmake --preset gpu >"$LOGS/configure.log" 2>&1 || { tail -30 "$LOGS/configure.log"; exit 1; }
cmake --build --preset gpu -j "$(nproc)" >"$LOGS/build.log" 2>&1 \
  || { grep -E -A6 "error|FAILED" "$LOGS/build.log" | head -80; exit 1; }
for lp in $1; do python3 scripts/export_problems.py --level "${lp%%:*}" --problem "${lp##*:}" | head -1; done
shift
for spec in "$@"; do
  IFS=: read -r file level problem <<<"$spec"
  t0=$(date +%s%N)
  build-gpu/kbench eval "$file" --level "$level" --problem "$problem" --check-budget 30 --host-memory-budget 16 \
    --out "$LOGS/eval-$(basename "$file" .cu).json" >/dev/null 2>&1
  t1=$(date +%s%N)
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); t=r.get("timing",{}); print(f"{sys.argv[2]:34s} {r.get(\"verdict\"):16s} {int(sys.argv[3])/1e9:5.1f}s  {r.get(\"message\",\"\")[:150]}  {t.get(\"compiled\",{}).get(\"source\",\"\")[:60]}")' \
    "$LOGS/eval-$(basename "$file" .cu).json" "$(basename "$file")" "$((t1 - t0))" 2>/dev/null || echo "$file: no record"
done
