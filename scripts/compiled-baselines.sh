#!/usr/bin/env bash
# On a GPU machine with PyTorch >= 2.6, in one sitting: make AOTInductor packages of as many
# problems as a time limit allows (levels in the order given), then time each package beside its
# eager reference with `kbench baseline --compiled`, which records baselines/<gpu>/compiled.json
# (and refreshes those problems' eager entries). The build and the export run beside the package
# compiles. Usage: [TIME_LIMIT_S=540] scripts/compiled-baselines.sh "2 1" [seconds to start compiles] [jobs]
set -uo pipefail
cd "$(dirname "$0")/.."
LOGS=${OUT:-build-gpu/logs}
mkdir -p "$LOGS"
export KBENCH_CACHE=${KBENCH_CACHE:-$PWD/build-gpu/cache}
LEVELS=${1:-"1 2 3"}
DEADLINE=${2:-600}
JOBS=${3:-16}
level_args=()
for l in $LEVELS; do level_args+=(--level "$l"); done

(cmake --preset gpu >"$LOGS/configure.log" 2>&1 && cmake --build --preset gpu -j 6 >"$LOGS/build.log" 2>&1
 echo "build rc=$? at ${SECONDS}s") &
(for l in $LEVELS; do python3 scripts/export_problems.py --level "$l" >>"$LOGS/export.log" 2>&1; done
 echo "export done at ${SECONDS}s") &
python3 scripts/compile_baselines.py "${level_args[@]}" --jobs "$JOBS" --deadline-s "$DEADLINE" \
  --problem-timeout-s 300 --json >"$LOGS/compile.jsonl" 2>"$LOGS/compile.err"
echo "compiles done at ${SECONDS}s: $(tail -1 "$LOGS/compile.jsonl")"
wait

python3 - "$LOGS/compile.jsonl" >"$LOGS/packaged.txt" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("status") in ("ok", "cached"):
        print(r["level"], r["id"])
PY
# TIME_LIMIT_S: time no further package after that many seconds of this script (a device call's limit).
while read -r level problem; do
  if ((SECONDS > ${TIME_LIMIT_S:-1000000})); then echo "time limit: L$level#$problem and later packages not timed"; break; fi
  build-gpu/kbench baseline --level "$level" --problem "$problem" --compiled 2>&1 | grep -E "^L[0-9]|FAILED"
done <"$LOGS/packaged.txt"
echo "timed at ${SECONDS}s"
cp baselines/*/compiled.json baselines/*/eager.json "$LOGS/" 2>/dev/null
