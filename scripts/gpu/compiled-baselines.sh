#!/usr/bin/env bash
# On a GPU machine with PyTorch >= 2.0, as one device call: compiled baselines (torch.compile,
# inductor, default mode, in process; timed from Python with kbench's protocol beside a fresh eager
# figure) for the problems of the given levels that have no record yet in baselines/<gpu>/compiled.json
# (or one made with another PyTorch), slowest compiles first, until TIME_LIMIT_S. Each problem's record is written as soon as it is done;
# workers still running at the limit are killed unrecorded, and the next call starts where this one
# stopped (copy $OUT/baselines/<gpu>/compiled.json back into the checkout between calls). Needs no
# C++ build and no exported archives.
#   Usage: [TIME_LIMIT_S=540] [DEADLINE_S=...] [DEVICES=0,1] scripts/gpu/compiled-baselines.sh ["3 2 1"] [jobs] [more compile_baselines.py options]
# e.g. `... "3 2 1" 8 --retry-failed`. Starts no problem after DEADLINE_S (default TIME_LIMIT_S - 120).
# DEVICES: the CUDA ordinals (--devices) that the workers (jobs: in all) are spread over, all of one
# GPU model; default every GPU that `nvidia-smi -L` lists (it ignores CUDA_VISIBLE_DEVICES: set
# DEVICES where that is set), or 0 where it lists none.
# Logs (and failed problems' worker logs) in $OUT, or build-gpu/logs.
set -uo pipefail
cd "$(dirname "$0")/../.."
LOGS=${OUT:-build-gpu/logs}
mkdir -p "$LOGS"
export KBENCH_CACHE=${KBENCH_CACHE:-$PWD/build-gpu/cache}
LEVELS=${1:-"3 2 1"}
JOBS=${2:-}
TIME_LIMIT_S=${TIME_LIMIT_S:-540}
DEADLINE_S=${DEADLINE_S:-$((TIME_LIMIT_S > 240 ? TIME_LIMIT_S - 120 : TIME_LIMIT_S / 2))}
if [[ -z ${DEVICES:-} ]]; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU ")
  DEVICES=$(seq -s, 0 $((gpus > 0 ? gpus - 1 : 0)))
fi

args=(--path inductor --time-limit-s "$TIME_LIMIT_S" --deadline-s "$DEADLINE_S" --log-dir "$LOGS/worker-logs"
      --devices "$DEVICES")
for l in $LEVELS; do args+=(--level "$l"); done
[[ -n $JOBS ]] && args+=(--jobs "$JOBS")
python3 scripts/tools/compile_baselines.py "${args[@]}" "${@:3}" 2>&1 | tee "$LOGS/compiled-baselines.log" \
  | grep -v -E "^(recorded|has-reason) "  # the problems already done: in the log only
rc=${PIPESTATUS[0]}
if [[ -n ${OUT:-} ]]; then
  # The record(s) this sitting wrote, at their place in the checkout: baselines/<gpu>/compiled.json
  cp --parents baselines/*/compiled.json "$OUT/"
fi
echo "compiled-baselines.sh: done at ${SECONDS}s (rc=$rc)"
exit "$rc"
