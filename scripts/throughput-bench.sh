#!/usr/bin/env bash
# Throughput benchmark of `kbench batch` (run on a GPU machine after the build and the export):
# 200 submissions across the three levels — the reference kernels (correct), the submission and
# adversarial fixtures (incorrect, non-compiling, hostile but quick), each copied as several
# distinct samples — scored end to end, then summarised with `kbench report`.
# Usage: scripts/throughput-bench.sh [build-dir] [out-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
OUT_DIR=${2:-${OUT:-/tmp}}
RUN=$(mktemp -d)/run
mkdir -p "$RUN"
sources=()
for f in level1/*.cu level2/*.cu level3/*.cu; do sources+=("$f"); done
for f in tests/submissions/l1_19_*.cu; do [[ $f == *endless_loop* ]] || sources+=("$f"); done
for f in tests/adversarial/*.cu; do
  case $f in *sleeps*|*endless*|*flood*) ;; *) sources+=("$f") ;; esac
done
# Problem of a fixture: its header comment names it ("Level 1 problem 21 ..."); a reference kernel's
# path does (levelL/P_Name.cu).
n=0
while ((n < 200)); do
  for f in "${sources[@]}"; do
    ((n < 200)) || break
    if [[ $f =~ ^level([0-9])/([0-9]+)_ ]]; then L=${BASH_REMATCH[1]}; P=${BASH_REMATCH[2]}
    else read -r L P < <(sed -nE '1s#.*[Ll]evel ([0-9]) problem ([0-9]+).*#\1 \2#p' "$f"); fi
    # A distinct sample: same code, one comment line more, so content hashes differ.
    { cat "$f"; echo "// sample $n"; } >"$RUN/level_${L}_problem_${P}_sample_${n}_kernel.cu"
    n=$((n + 1))
  done
done
"$BUILD/kbench" batch "$RUN" --out "$OUT_DIR/throughput.jsonl" --check-budget 30 --timing-budget 120 \
  | tee "$OUT_DIR/throughput-summary.txt"
"$BUILD/kbench" report "$OUT_DIR/throughput.jsonl" --markdown "$OUT_DIR/report.md" --svg "$OUT_DIR/fast_p.svg"
python3 - "$OUT_DIR/throughput.jsonl" <<'PY'
import json, sys
phases = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    for k, v in r.get("phases_ms", {}).items():
        phases[k] = phases.get(k, 0) + v
print("summed phases (s):", {k: round(v / 1000, 1) for k, v in sorted(phases.items())})
PY
