#!/usr/bin/env bash
# The 200-submission mix of the throughput benchmarks (throughput-bench.sh through kbench batch,
# serve-bench.sh through kbench serve): the sources in scripts/bench/throughput-mix.list (reference
# kernels, correct; submission and adversarial fixtures, incorrect, non-compiling, hostile but
# quick), each copied as several distinct samples, written as level_<L>_problem_<P>_sample_<N>_kernel.cu
# into DIR. The list is fixed so that a new fixture does not change what an earlier figure measured.
# Usage: scripts/bench/throughput-mix.sh DIR [count, default 200]
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=$1
COUNT=${2:-200}
mkdir -p "$DIR"
mapfile -t sources < <(grep -v '^#' scripts/bench/throughput-mix.list)
# Problem of a fixture: its header comment names it ("Level 1 problem 21 ..."); a reference kernel's
# path does (levelL/P_Name.cu).
n=0
while ((n < COUNT)); do
  for f in "${sources[@]}"; do
    ((n < COUNT)) || break
    if [[ $f =~ ^level([0-9])/([0-9]+)_ ]]; then L=${BASH_REMATCH[1]}; P=${BASH_REMATCH[2]}
    else read -r L P < <(sed -nE '1s#.*[Ll]evel ([0-9]) problem ([0-9]+).*#\1 \2#p' "$f"); fi
    # A distinct sample: same code, one comment line more, so content hashes differ.
    { cat "$f"; echo "// sample $n"; } >"$DIR/level_${L}_problem_${P}_sample_${n}_kernel.cu"
    n=$((n + 1))
  done
done
