#!/usr/bin/env bash
# On a GPU machine: build (preset gpu), export the named problems only, and evaluate the given
# submissions, printing one line per verdict. For quick checks inside one device call; the full
# suite is scripts/gpu/gpu-check.sh.
# Usage: scripts/gpu/gpu-quick.sh "1:19 2:12" file.cu:L:P [file.cu:L:P ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
LOGS=${OUT:-build-gpu/logs}
mkdir -p "$LOGS"
# shellcheck disable=SC2046  # cpp-httplib unpacked from .deb/ where it is not installed
cmake --preset gpu $(scripts/fetch-debs.sh cmake-args build-gpu/debs) >"$LOGS/configure.log" 2>&1 || { tail -30 "$LOGS/configure.log"; exit 1; }
cmake --build --preset gpu -j "$(nproc)" >"$LOGS/build.log" 2>&1 \
  || { grep -E -A6 "error|FAILED" "$LOGS/build.log" | head -80; exit 1; }
# shellcheck disable=SC2086  # $1 is a list of L:P words
python3 scripts/tools/export_problems.py --only $1 | grep -v "^export"
shift
# One JSON line per evaluation in $LOGS/quick.jsonl (few files: the device tool returns a limited number).
: >"$LOGS/quick.jsonl"
for spec in "$@"; do
  IFS=: read -r file level problem <<<"$spec"
  t0=$(date +%s%N)
  build-gpu/kbench eval "$file" --level "$level" --problem "$problem" --check-budget 30 --host-memory-budget 16 \
    --out "$LOGS/record.json" >/dev/null 2>&1
  t1=$(date +%s%N)
  python3 - "$LOGS/record.json" "$file" "$((t1 - t0))" "$LOGS/quick.jsonl" <<'PY' || echo "$file: no record"
import json, sys
r = json.load(open(sys.argv[1]))
r["wall_s"] = int(sys.argv[3]) / 1e9
open(sys.argv[4], "a").write(json.dumps(r) + "\n")
source = r.get("timing", {}).get("compiled", {}).get("source", "")
print(f"{sys.argv[2].split('/')[-1]:34s} {r.get('verdict', '?'):16s} {r['wall_s']:5.1f}s  {r.get('message', '')[:150]}  {source[:70]}")
PY
  rm -f "$LOGS/record.json"
done
