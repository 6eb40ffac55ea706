#!/usr/bin/env bash
# Submissions that change the worker's shared process state (tests/fixtures/modelnew: dispatcher overrides
# from C++ and from Python, cuDNN switched off outside their own calls, an L2 persistence window),
# on a GPU machine after the GPU build. Prints three tables:
#  1. each such fixture alone, its verdict and speedup beside its honest twin's (and one that changes
#     a flag only during its own calls, which must keep its honest figure);
#  2. kbench batch: the honest samples of L1#19 and L2#1 alone, then with a poisoner as sample 0 of
#     their problem: each honest speedup and eager figure both ways;
#  3. kbench serve: the honest L2#1 and L1#19 .cu before and after a poisoner's request on the
#     same worker.
#   scripts/gpu/process-state-check.sh [build-dir (build-gpu)] [log-dir]
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
LOGS=${2:-$(mktemp -d)}
KB=$BUILD/kbench
export KBENCH_CACHE=${KBENCH_CACHE:-$PWD/$BUILD/cache}
M=tests/fixtures/modelnew
python3 scripts/tools/export_problems.py --only 1:19 2:1 >/dev/null || exit 1

# one line: label, verdict, eager ms, speedup, and what changed if anything
summary() {  # summary RECORD-JSON LABEL
  python3 - "$1" "$2" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]:44s} no record ({e})"); sys.exit()
t = r.get("timing", {})
eager = t.get("eager", {}).get("mean_ms", 0)
changed = r.get("process_state", {}).get("changed", "")
print(f"{sys.argv[2]:44s} {r.get('verdict', '?'):14s} eager {eager:8.3f} ms  speedup {t.get('speedup_eager', 0):6.2f}x  {changed[:90]}")
EOF
}

echo "== 1. each fixture alone, beside its honest twin"
for entry in l1_19_relu:1:19 l1_19_overrides_relu_in_cpp:1:19 l1_19_overrides_relu_under_its_name:1:19 \
             l1_19_overrides_relu_in_python:1:19 \
             l1_19_copy_with_relu_overridden:1:19 l1_19_l2_persisting_window:1:19 l2_1_conv_relu_bias:2:1 \
             l2_1_cudnn_off_outside_own_calls:2:1 l2_1_flag_during_own_calls:2:1; do
  IFS=: read -r name level problem <<<"$entry"
  $KB --json eval "$M/$name.py" --level "$level" --problem "$problem" >"$LOGS/alone-$name.json" 2>"$LOGS/alone-$name.err"
  summary "$LOGS/alone-$name.json" "$name"
done

echo "== 2. kbench batch: honest samples alone, then after a poisoner of their problem"
for run in alone poisoned; do
  dir=$LOGS/batch-$run
  rm -rf "$dir" && mkdir -p "$dir"
  cp $M/l1_19_relu.py "$dir/level_1_problem_19_sample_1_kernel.py"
  cp level1/19_ReLU.cu "$dir/level_1_problem_19_sample_2_kernel.cu"
  cp level2/1_Conv2D_ReLU_BiasAdd.cu "$dir/level_2_problem_1_sample_1_kernel.cu"
  cp $M/l2_1_conv_relu_bias.py "$dir/level_2_problem_1_sample_2_kernel.py"
  if [[ $run == poisoned ]]; then
    cp $M/l1_19_overrides_relu_in_cpp.py "$dir/level_1_problem_19_sample_0_kernel.py"
    cp $M/l2_1_cudnn_off_outside_own_calls.py "$dir/level_2_problem_1_sample_0_kernel.py"
  fi
  $KB batch "$dir" --out "$dir/results.jsonl" >"$LOGS/batch-$run.log" 2>&1
done
python3 - "$LOGS/batch-alone/results.jsonl" "$LOGS/batch-poisoned/results.jsonl" <<'EOF'
import json, sys
def load(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        out[r["batch"]["file"]] = r
    return out
alone, poisoned = load(sys.argv[1]), load(sys.argv[2])
for name in sorted(poisoned):
    p = poisoned[name]
    if name not in alone:
        print(f"{name:44s} {p.get('verdict'):14s} (the poisoner)")
        continue
    a = alone[name]
    sa, sp = a.get("timing", {}).get("speedup_eager", 0), p.get("timing", {}).get("speedup_eager", 0)
    ea, ep = (r.get("timing", {}).get("eager", {}).get("mean_ms", 0) for r in (a, p))
    print(f"{name:44s} alone {a.get('verdict')} {sa:6.2f}x (eager {ea:.3f} ms)   after poisoner {p.get('verdict')} "
          f"{sp:6.2f}x (eager {ep:.3f} ms)   ratio {sp / sa if sa else 0:.3f}")
EOF

echo "== 3. kbench serve: honest requests before and after a poisoner's, on one worker"
$KB serve --port 0 --json >"$LOGS/serve.out" 2>"$LOGS/serve.err" &
server=$!
for _ in $(seq 60); do grep -q listening "$LOGS/serve.out" 2>/dev/null && break; sleep 1; done
url=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["listening"])' "$LOGS/serve.out")
n=0
via_server() {  # via_server FILE LEVEL PROBLEM LABEL
  n=$((n + 1))
  $KB --json eval "$1" --level "$2" --problem "$3" --server "$url" >"$LOGS/serve-$n.json" 2>"$LOGS/serve-$n.err"
  summary "$LOGS/serve-$n.json" "$4"
}
via_server level2/1_Conv2D_ReLU_BiasAdd.cu 2 1 "L2#1 .cu, first"
via_server level2/1_Conv2D_ReLU_BiasAdd.cu 2 1 "L2#1 .cu, warm"
via_server $M/l2_1_cudnn_off_outside_own_calls.py 2 1 "L2#1 poisoner (cuDNN off)"
via_server level2/1_Conv2D_ReLU_BiasAdd.cu 2 1 "L2#1 .cu, after the poisoner"
via_server level2/1_Conv2D_ReLU_BiasAdd.cu 2 1 "L2#1 .cu, again"
via_server level1/19_ReLU.cu 1 19 "L1#19 .cu, first"
via_server $M/l1_19_overrides_relu_in_cpp.py 1 19 "L1#19 poisoner (aten::relu from C++)"
via_server level1/19_ReLU.cu 1 19 "L1#19 .cu, after the poisoner"
kill -TERM $server
wait $server
