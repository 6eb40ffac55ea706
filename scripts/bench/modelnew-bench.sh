#!/usr/bin/env bash
# KernelBench's ModelNew format on a GPU machine, after the GPU build and the export of L1#19
# (python3 scripts/tools/export_problems.py --only 1:19): one ReLU kernel as a ModelNew
# (tests/fixtures/modelnew/l1_19_relu.py) and in kbench's format (level1/19_ReLU.cu). The ModelNew's first
# eval builds its extension; then each is evaluated three times with every build cached: wall times,
# and the difference of the medians (the goal: the ModelNew within 0.5 s of the .cu). Extension
# build times: scripts/bench/build-bench.sh.
#   scripts/bench/modelnew-bench.sh [build-dir (build-gpu)] [log-dir]
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
LOGS=${2:-$(mktemp -d)}
KB=$BUILD/kbench
export KBENCH_CACHE=${KBENCH_CACHE:-$PWD/$BUILD/cache}
now() { date +%s.%N; }

# wall seconds, verdict and the record's own total (ms) of one eval
eval_once() {  # eval_once FILE LABEL
  local start end
  start=$(now)
  $KB --json eval "$1" --level 1 --problem 19 >"$LOGS/$2.json" 2>"$LOGS/$2.err"
  end=$(now)
  python3 - "$LOGS/$2.json" "$start" "$end" "$2" <<'EOF'
import json, sys
path, start, end, label = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{label:14s} no record ({e})"); sys.exit()
ext = r.get("compile", {}).get("extensions", [])
built = ", ".join(("cached" if x.get("from_cache") else f"built {x.get('seconds', 0):.1f} s") for x in ext)
speed = r.get("timing", {}).get("speedup_eager")
ph = r.get("phases_ms", {})
if "python_start" in ph:
    split = ph.get("python_start_split", {})
    built += (f"  python_start {ph['python_start']:.0f} ms ("
              + ", ".join(f"{k} {v:.0f}" for k, v in split.items()) + f"), modelnew_load {ph.get('modelnew_load', 0):.0f} ms")
print(f"{label:14s} wall {float(end) - float(start):6.2f} s  verdict {r.get('verdict')}  "
      f"record total {r.get('phases_ms', {}).get('total', 0) / 1000:.2f} s  "
      f"speedup {speed if speed is None else round(speed, 3)}  {built}")
EOF
}

echo "== the same ReLU as ModelNew and as .cu (L1#19)"
eval_once tests/fixtures/modelnew/l1_19_relu.py py-first
for i in 1 2 3; do
  eval_once tests/fixtures/modelnew/l1_19_relu.py "py-$i"
  eval_once level1/19_ReLU.cu "cu-$i"
done | tee "$LOGS/evals.txt"
python3 - "$LOGS/evals.txt" <<'EOF'
import re, statistics, sys
walls = {"py": [], "cu": []}
for line in open(sys.argv[1]):
    m = re.match(r"(py|cu)-\d+\s+wall\s+([\d.]+)", line)
    if m:
        walls[m.group(1)].append(float(m.group(2)))
if walls["py"] and walls["cu"]:
    py, cu = statistics.median(walls["py"]), statistics.median(walls["cu"])
    print(f"median wall: ModelNew {py:.2f} s, .cu {cu:.2f} s, difference {py - cu:+.2f} s "
          f"({'within' if py - cu <= 0.5 else 'NOT within'} 0.5 s)")
EOF

echo "logs: $LOGS"
