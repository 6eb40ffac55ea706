#!/usr/bin/env bash
# On a GPU machine, the steps of a verification session, each printing a few lines; a device call
# (10 minutes at most) runs the steps it names and the next call on the same machine finds the
# build and the archives still there. Logs go to one tarball in $OUT (the device tool brings back
# at most 8 files), or to build-gpu/logs.
#   scripts/gpu/gpu-session.sh build newcomer export degenerate tests ci timing throughput phases serve-tests serve serve-throughput
# build       configure (preset gpu) and build, timed (BUILD_TARGETS: only those targets, e.g. kbench)
# newcomer    a new user's first verdict: export L1#19 and evaluate its reference kernel, timed
# readme      the README's runnable blocks with build-gpu/kbench first on the PATH (after build):
#             those marked <!-- run: gpu --> (tests/readme/run_readme_blocks.py --kind gpu), then
#             those marked <!-- run: cpu -->, which must pass on the GPU build too
# export      every problem's archive (one process)
# degenerate  kbench degenerate --write over all problems (problems/degenerate.json, copied to $OUT)
# baselines   every problem exported (one process per level), then kbench baseline on every visible GPU until
#             BASELINE_TIME_LIMIT_S (default 480): what it recorded (baselines/<gpu>/) copied to $OUT; run it
#             again until it says nothing is left
# tests       ctest -L gpu
# ci-forbid   kbench ci --torch-ops forbid: kernels that leave work to PyTorch refused, every other one correct
# ci          kbench ci against results/ci/<gpu>.json, after exporting its problems (CI_RECORD=1: --record, copied to $OUT)
# compare-bench  tests/bench/compare_bench.cpp: what a check's output comparison costs, against a copy's bandwidth
# state-bench tests/bench/process_state_bench.cpp: what reading PyTorch's dispatcher costs a ModelNew's checks
# throughput  scripts/bench/throughput-bench.sh (200 submissions through kbench batch; THROUGHPUT_PASSES, default
#             "adaptive both": the throughput figure, then adaptive against all-calls speedups)
# timing      kbench ci --timing both, twice: adaptive against all-calls speedups of the reference
#             kernels on the same calls, and each figure's run-to-run spread (scripts/bench/timing-agreement.py)
# phases      scripts/bench/eval-phases.sh
# adversarial the adversarial table alone (tests/fixtures/adversarial/expected.json), exporting only its problems
# protocol    three reference kernels evaluated, with where their checks and timed calls spend time
# redraws     scripts/bench/redraw-bench.py: a timed call's input draw against the bandwidth floor
# disturbance scripts/bench/context-disturbance.py: timed calls beside processes that start on the GPU (what the
#             quiet lock keeps from a spare's CUDA context and first kernels), ~2 min
# process-end scripts/bench/process-end-bench.py: what a retired process's end costs by the GPU memory it holds, ~2 min
# serve-tests the kbench serve tests, CPU and GPU (the test binary, after exporting their problems)
# serve       scripts/bench/serve-bench.sh latency load (warm latency; load test with a SIGTERM), ~4 min
# serve-throughput  scripts/bench/serve-bench.sh throughput (the 200-submission mix: batch, then serve), ~6 min
# serve-hostile  scripts/bench/serve-bench.sh hostile killed (1,000 idle + 200 slow connections; a worker SIGKILLed), ~2 min
# serve-scaling  scripts/bench/serve-bench.sh scaling (the mix on one GPU, then on all visible: the ratio), ~6 min on 2 GPUs
#             (MIX_TIMING=adaptive: the requests' timing, ~3 min)
# serve-modelnew  scripts/bench/serve-bench.sh modelnew-warm (L1#19's ReLU as .cu and as ModelNew through serve: the
#             p50 difference, goal <= 0.5 s), ~2 min
# unprepared  the steps after it run with KBENCH_SPARES_PREPARE_GPU=0 (ModelNew spares do not prepare their GPU
#             ahead), their logs in unprepared/: "serve-modelnew unprepared serve-modelnew" compares the two
# profile     scripts/gpu/profile-check.sh (--profile on L1#19, L1#37, L2#12, L3#4; --ncu; a feedback prompt; its GPU tests)
# modelnew    KernelBench's ModelNew format: export their problems; the ModelNew and Triton fixture tests (CPU and gpu);
#             over 4 min on an H100 (each fixture's extension is an nvcc build): run it with --background
# process-state  submissions that change the worker's process state: the GPU test, then
#             scripts/gpu/process-state-check.sh (each fixture beside its twin; batch and serve, poisoner first)
# modelnew-bench  scripts/bench/modelnew-bench.sh (ModelNew against .cu eval times)
# build-bench scripts/bench/build-bench.sh: ModelNew extension builds, PyTorch's route against kbench's fast
#             route (about 60 files each way, 8 at a time), then 50 files through --build-only, then a
#             lone cold file against load_inline; ~12 min on an H100 machine: run it with --background
# upstream-agreement  KernelBench's verdict against upstream's own eval on every ModelNew fixture
#             (UPSTREAM=<a KernelBench checkout>, never committed): its GPU test, then
#             scripts/bench/upstream-agreement.py's table; about 15 extension builds, run it with --background
# footprint   every problem exported, then kbench footprint --gpu-memory ${GPU_MEMORY_GIB:-22} --write (problems/footprint.json saved)
# gpu-memory  kbench ci --gpu-memory ${GPU_MEMORY_GIB:-22}: every reference kernel evaluated as on a GPU that small
# A device call lasts 10 minutes at most, and the machine stays only while calls follow each other.
# For steps that take longer, start them in a process session of their own, which outlives the call,
# then follow them with calls of --wait:
#   scripts/gpu/gpu-session.sh --background build tests ci   # returns at once; log: /tmp/kbench-gpu-session/build-gpu/session/log
#   scripts/gpu/gpu-session.sh --wait 560                    # follows the log until the steps end or 560 s
#                                                            # pass; copies the logs and saved files to $OUT;
#                                                            # exits 2 at once where none were started here
#   scripts/gpu/gpu-session.sh --stop                        # ends the background steps
set -uo pipefail
cd "$(dirname "$0")/../.."
# Background steps run in a copy of the tree outside the checkout, which keeps its build-gpu from one
# --background to the next: the device tool brings the working tree again at every call, and a batch
# still running across a call's start got harness errors for 36 evaluations in a row, right after it.
COPY=${KBENCH_SESSION_COPY:-/tmp/kbench-gpu-session}
SESSION=$COPY/build-gpu/session
case ${1:-} in
--background)
  shift
  # The tree afresh (a file gone from the checkout must not stay in the copy), the build kept.
  mkdir -p "$COPY" && find "$COPY" -mindepth 1 -maxdepth 1 ! -name build-gpu -exec rm -rf {} + &&
    tar --exclude=./build-gpu --exclude=./build -cf - . | tar -xf - -C "$COPY" || exit 1
  rm -rf "$SESSION" && mkdir -p "$SESSION/logs" "$SESSION/out"
  OUT= LOGS=$SESSION/logs SAVE=$SESSION/out setsid bash -c '"$0" "$@"; echo "== steps ended"; touch '"$SESSION"'/done' \
    "$COPY/scripts/gpu/gpu-session.sh" "$@" >"$SESSION/log" 2>&1 </dev/null &
  echo $! >"$SESSION/pid"
  echo "started in $COPY: $*"
  exit 0 ;;
--stop)
  # setsid made the steps a process group of their own: end all of it.
  [[ -f $SESSION/pid ]] && kill -- -"$(cat "$SESSION/pid")" 2>/dev/null && echo "stopped the background steps"
  exit 0 ;;
--wait)
  # A machine given back between calls comes back bare: say so now, not after the whole wait.
  if [[ ! -f $SESSION/pid ]]; then
    echo "== no background steps on this machine (a fresh one?): start them again with --background"
    exit 2
  fi
  start=$SECONDS
  while [[ ! -f $SESSION/done ]] && ((SECONDS - start < ${2:-560})); do sleep 5; done
  [[ -f $SESSION/done ]] || echo "== still running after $((SECONDS - start)) s"
  cat "$SESSION/log"
  if [[ -n ${OUT:-} ]]; then
    # Without the caches steps keep beside their logs (build-bench's extensions): they would pass
    # the device tool's size limit, and nothing would come back.
    tar czf "$OUT/session-logs.tgz" -C "$SESSION" --exclude=cache --exclude=files logs
    # What a baselines step has recorded so far, also while it runs (each entry is written whole).
    tar czf "$OUT/baselines.tgz" -C "$COPY" baselines
    cp -r "$SESSION"/out/* "$OUT/" 2>/dev/null
  fi
  exit 0 ;;
esac
LOGS=${LOGS:-$(mktemp -d)}
ALL_LOGS=$LOGS  # a step may move LOGS into a folder of it (unprepared)
export KBENCH_CACHE=${KBENCH_CACHE:-$PWD/build-gpu/cache}
KB=build-gpu/kbench
GPU_SLUG=$(python3 -c 'import torch, re; n = torch.cuda.get_device_name(0); print(re.sub("[^A-Za-z0-9]", "_", n[7:] if n.startswith("NVIDIA ") else n))')
timed() {  # timed NAME COMMAND...: runs it, prints its wall time and exit code
  local name=$1 start=$SECONDS rc
  shift
  "$@" >"$LOGS/$name.log" 2>&1
  rc=$?
  echo "== $name: $((SECONDS - start)) s, rc=$rc"
  return $rc
}
# level:id of every reference kernel (levelN/<id>_<Name>.cu, and the Triton ones levelN/<id>/triton.py):
# what kbench ci evaluates.
reference_kernel_problems() { ls level*/*.cu level*/*/*.py | sed -E 's#level([0-9])/([0-9]+)[_/].*#\1:\2#' | sort -u; }
SAVE=${SAVE:-${OUT:-}}
save() { [[ -n $SAVE ]] && cp "$@" "$SAVE/" ; }

for step in "$@"; do
  case $step in
  build)
    # shellcheck disable=SC2046  # cpp-httplib unpacked from .deb/ where it is not installed
    timed configure cmake --preset gpu -DKBENCH_TEST_MAX_WEIGHT_BYTES=17179869184 $(scripts/fetch-debs.sh cmake-args build-gpu/debs) \
      || tail -20 "$LOGS/configure.log"
    # shellcheck disable=SC2086  # BUILD_TARGETS: a list of targets (e.g. "kbench" where no test runs), default all
    timed build cmake --build --preset gpu -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} || grep -E -A6 "error|FAILED" "$LOGS/build.log" | head -60 ;;
  newcomer)
    timed export-one python3 scripts/tools/export_problems.py --only 1:19
    timed first-eval $KB eval level1/19_ReLU.cu --level 1 --problem 19
    tail -6 "$LOGS/first-eval.log" ;;
  export)
    timed export-all python3 scripts/tools/export_problems.py
    tail -1 "$LOGS/export-all.log" ;;
  compiled-on-demand)
    # eval's --compiled on-demand path: a figure made in a child for a problem that has none recorded
    # (L2#12 unless this GPU's compiled.json has it), then the same eval again, which finds it made.
    timed export-on-demand python3 scripts/tools/export_problems.py --only 2:12
    for pass in 1 2; do
      timed on-demand-$pass $KB eval level2/12_Gemm_Multiply_LeakyReLU.cu --level 2 --problem 12 --compiled on-demand \
        --out "$LOGS/on-demand-$pass.json"
      python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); t = r.get("timing") or {}
print(r["verdict"], "speedup_compiled", t.get("speedup_compiled"), "|", (t.get("compiled") or {}).get("source"))' "$LOGS/on-demand-$pass.json"
    done ;;
  baselines)
    for level in 1 2 3; do python3 scripts/tools/export_problems.py --level $level >"$LOGS/export-$level.log" 2>&1 & done
    wait
    timed baselines $KB baseline --time-limit "${BASELINE_TIME_LIMIT_S:-480}"
    grep -E "^eager:|FAILED|summary|^baseline:" "$LOGS/baselines.log" | cut -c1-220
    [[ -n $SAVE ]] && mkdir -p "$SAVE/baselines" && cp -r "baselines/$GPU_SLUG" "$SAVE/baselines/" ;;
  degenerate)
    timed degenerate $KB degenerate --write
    grep -v '\[\]' "$LOGS/degenerate.log" | cut -c1-160
    save problems/degenerate.json ;;
  tests)
    timed ctest ctest --test-dir build-gpu -L gpu --output-on-failure -j1
    grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|Timeout|Not Run" "$LOGS/ctest.log" | head -20
    grep -E "^adversarial .*|^l[0-9]_.*: " "$LOGS/ctest.log" | awk '{printf "%s %s %s | ", $2, $3, $4}' | head -c 6000; echo ;;
  ci)
    timed export-ci python3 scripts/tools/export_problems.py --only $(reference_kernel_problems)
    timed ci $KB ci --out "$LOGS/ci.jsonl" ${CI_RECORD:+--record}
    tail -45 "$LOGS/ci.log" | cut -c1-150
    # What a speedup change is made of: the kernel's time, the eager reference's, and the SM clocks.
    python3 - "$LOGS/ci.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); t = r.get("timing") or {}; c = t.get("candidate") or {}; e = t.get("eager") or {}
    clk = c.get("clocks") or {}
    print("%-48s kernel %8.4f ms  eager %8.4f ms  SM %s-%s MHz%s" % (r["batch"]["file"][:48], c.get("mean_ms", 0), e.get("mean_ms", 0),
          clk.get("sm_mhz_min"), clk.get("sm_mhz_max"), "  throttled" if c.get("throttled") else ""))
PY
    [[ -n ${CI_RECORD:-} ]] && save "results/ci/$GPU_SLUG.json" ;;
  compare-bench)
    timed compare-bench build-gpu/tests/kbench_compare_bench
    cat "$LOGS/compare-bench.log" ;;
  state-bench)
    timed state-bench build-gpu/tests/kbench_process_state_bench
    cat "$LOGS/state-bench.log" ;;
  throughput)
    timed throughput scripts/bench/throughput-bench.sh build-gpu "$LOGS"
    grep -v "^export" "$LOGS/throughput.log" | tail -60 | cut -c1-400 ;;
  timing)
    timed export-ci python3 scripts/tools/export_problems.py --only $(reference_kernel_problems)
    # TIMING_PASSES=1: one pass (adaptive against all calls on the same calls, no run-to-run spread).
    for ((pass = 1; pass <= ${TIMING_PASSES:-2}; pass++)); do
      timed timing-$pass $KB ci --timing both --out "$LOGS/ci-both-$pass.jsonl"
      tail -1 "$LOGS/timing-$pass.log"
    done
    python3 scripts/bench/timing-agreement.py "$LOGS"/ci-both-*.jsonl ;;
  ci-forbid)
    timed export-ci python3 scripts/tools/export_problems.py --only $(reference_kernel_problems)
    timed ci-forbid $KB ci --torch-ops forbid --out "$LOGS/ci-forbid.jsonl"
    grep -E "REGRESSED|refused|kernels," "$LOGS/ci-forbid.log" | cut -c1-200 ;;
  phases)
    timed phases scripts/bench/eval-phases.sh build-gpu "$LOGS"
    tail -12 "$LOGS/phases.log" ;;
  adversarial)
    read -ra problems < <(python3 -c 'import json; d = json.load(open("tests/fixtures/adversarial/expected.json"))
print(" ".join(sorted({"%d:%d" % (e["level"], e["problem"]) for e in d["submissions"]})))')
    timed export-adversarial python3 scripts/tools/export_problems.py --only "${problems[@]}"
    timed adversarial build-gpu/tests/kbench_tests "every adversarial submission gets its verdict*"
    grep -E "^adversarial |FAILED|failed|passed" "$LOGS/adversarial.log" | cut -c1-200 ;;
  protocol)
    timed export-protocol python3 scripts/tools/export_problems.py --only 1:19 2:12 3:4
    for c in "level1/19_ReLU.cu 1 19" "level2/12_Gemm_Multiply_LeakyReLU.cu 2 12" "level3/4_LeNet5.cu 3 4"; do
      read -r file level problem <<<"$c"
      $KB eval "$file" --level "$level" --problem "$problem" --out "$LOGS/protocol-$level-$problem.json" >/dev/null
      python3 - "$LOGS/protocol-$level-$problem.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); ph = r.get("phases_ms", {}); t = r.get("timing", {}); c = t.get("candidate", {})
p = c.get("protocol", {}); own = ph.get("correctness_split", {}).get("own", {}); rob = ph.get("correctness_split", {}).get("robustness", {})
print(f'{r["problem"]["name"]:28s} {r["verdict"]:10s} total {ph.get("total", 0):6.0f} ms: correctness {ph.get("correctness", 0):5.0f} '
      f'(own candidate {own.get("candidate", 0):4.0f}, robustness candidate {rob.get("candidate", 0):4.0f}) timing {ph.get("timing", 0):5.0f} '
      f'(redraws {p.get("redraw_ms", 0):4.0f}, checks {p.get("checks_ms", 0):4.0f}, {p.get("checked")}/{p.get("timed_calls")} checked) '
      f'speedup {t.get("speedup_eager", 0):.2f} own {c.get("mean_ms", 0):.3f} ms dists '
      + " ".join(f'{d}={s["mean_ms"]:.3f}' for d, s in c.get("distributions", {}).items())
      + f' audit {t.get("audit", {}).get("flagged")}')
PY
    done ;;
  redraws)
    timed redraws python3 scripts/bench/redraw-bench.py
    cat "$LOGS/redraws.log" ;;
  disturbance)
    timed disturbance python3 scripts/bench/context-disturbance.py
    cat "$LOGS/disturbance.log" ;;
  process-end)
    timed process-end python3 scripts/bench/process-end-bench.py
    cat "$LOGS/process-end.log" ;;
  serve-tests)
    # The test binary directly, with only the problems its GPU tests use exported (ctest's fixture
    # exports all 250 first).
    timed export-serve python3 scripts/tools/export_problems.py --only 1:19 1:21 2:12 3:4
    timed serve-tests build-gpu/tests/kbench_tests "serve:*"
    grep -E "passed|failed|FAILED|with message|==|\.cu:" "$LOGS/serve-tests.log" | cut -c1-300 | head -30 ;;
  serve)
    timed serve-bench scripts/bench/serve-bench.sh build-gpu "$LOGS" latency load
    grep -v "^export" "$LOGS/serve-bench.log" | cut -c1-260 ;;
  serve-throughput)
    timed serve-throughput scripts/bench/serve-bench.sh build-gpu "$LOGS" throughput
    grep -v "^export" "$LOGS/serve-throughput.log" | cut -c1-300 ;;
  serve-hostile)
    timed serve-hostile scripts/bench/serve-bench.sh build-gpu "$LOGS" hostile killed
    grep -v "^export" "$LOGS/serve-hostile.log" | cut -c1-300 ;;
  serve-scaling)
    timed serve-scaling scripts/bench/serve-bench.sh build-gpu "$LOGS" scaling
    grep -v "^export" "$LOGS/serve-scaling.log" | cut -c1-300 ;;
  serve-modelnew)
    timed serve-modelnew scripts/bench/serve-bench.sh build-gpu "$LOGS" modelnew-warm
    grep -v "^export" "$LOGS/serve-modelnew.log" | cut -c1-300 ;;
  unprepared)
    # The steps after it with KBENCH_SPARES_PREPARE_GPU=0, their logs in unprepared/.
    export KBENCH_SPARES_PREPARE_GPU=0
    LOGS=$LOGS/unprepared && mkdir -p "$LOGS"
    echo "== the steps after this one: ModelNew spares do not prepare their GPU ahead (KBENCH_SPARES_PREPARE_GPU=0)" ;;
  profile)
    timed profile scripts/gpu/profile-check.sh build-gpu "$LOGS/profile"
    cat "$LOGS/profile.log" | cut -c1-240
    save "$LOGS/profile/profile-2-12.json" ;;
  modelnew)
    timed export-modelnew python3 scripts/tools/export_problems.py --only 1:1 1:19 1:23 1:94 2:1 2:12 2:18 2:24 2:76 3:3 3:4
    timed ctest-modelnew ctest --test-dir build-gpu -R "ModelNew|modelnew|Triton fixture|launch entry point|extension|TORCH_CUDA_ARCH_LIST|build that fails" -FA '.*' -V -j1
    grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|Timeout|Not Run" "$LOGS/ctest-modelnew.log" | head -20
    grep -E -A10 "^[0-9]+: .*(FAILED|failed):?$" "$LOGS/ctest-modelnew.log" | cut -c1-300 | head -60  # which assertion
    grep -E "^[0-9]+: (modelnew|triton) (batch|eval)" "$LOGS/ctest-modelnew.log" | sed -E 's/^[0-9]+: //' | cut -c1-150 | head -80 ;;
  process-state)
    timed export-process-state python3 scripts/tools/export_problems.py --only 1:19 2:1
    timed ctest-process-state ctest --test-dir build-gpu -R "process state|poisoner" -FA '.*' -V -j1
    grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|Timeout|Not Run" "$LOGS/ctest-process-state.log" | head -20
    grep -E "^[0-9]+: poisoner batch" "$LOGS/ctest-process-state.log" | sed -E 's/^[0-9]+: //' | cut -c1-170
    timed process-state-check scripts/gpu/process-state-check.sh build-gpu "$LOGS"
    cat "$LOGS/process-state-check.log" | cut -c1-220 ;;
  footprint)
    timed export-all python3 scripts/tools/export_problems.py
    timed footprint $KB footprint --gpu-memory "${GPU_MEMORY_GIB:-22}" --write
    grep -E "OUT OF MEMORY|FAILED|problems:" "$LOGS/footprint.log" | cut -c1-220
    sort -k4 -g -r <(grep -E "GiB at its peak" "$LOGS/footprint.log") | head -8 | cut -c1-160
    save problems/footprint.json ;;
  gpu-memory)
    timed export-ci python3 scripts/tools/export_problems.py --only $(reference_kernel_problems)
    timed ci-gpu-memory $KB ci --gpu-memory "${GPU_MEMORY_GIB:-22}" --out "$LOGS/ci-gpu-memory.jsonl"
    tail -1 "$LOGS/ci-gpu-memory.log"
    python3 - "$LOGS/ci-gpu-memory.jsonl" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
print("%d records, %d correct, %d with every robustness trial counted" % (len(records), sum(r.get("verdict") == "correct" for r in records),
      sum("could not count" not in r.get("message", "") for r in records if r.get("verdict") == "correct")))
for r in records:
    if r.get("verdict") != "correct" or r.get("candidate_output_offloaded") or "could not count" in r.get("message", ""):
        print("%-44s %-12s %s%s" % (r["batch"]["file"][:44], r.get("verdict"), "offloaded; " if r.get("candidate_output_offloaded") else "",
                                    r.get("message", "")[:150]))
PY
    ;;
  modelnew-bench)
    timed modelnew-bench scripts/bench/modelnew-bench.sh build-gpu "$LOGS"
    tail -9 "$LOGS/modelnew-bench.log" | cut -c1-200 ;;
  build-bench)
    timed build-bench scripts/bench/build-bench.sh build-gpu "$LOGS/build-bench"
    grep -v "^logs:" "$LOGS/build-bench.log" | cut -c1-220 ;;
  upstream-agreement)
    # AGREEMENT_FIXTURES: a subset of the fixtures (file names), where the whole table would take too long.
    # AGREEMENT_JOBS: upstream's evals at once (default 3; L1#19's 6 GiB inputs ran out of memory at 3).
    timed export-agreement python3 scripts/tools/export_problems.py --only 1:1 1:19 1:94 2:1 2:12 2:18 3:4 3:46
    # shellcheck disable=SC2086  # a list of names
    timed upstream-agreement python3 scripts/bench/upstream-agreement.py "${UPSTREAM:?set UPSTREAM to a KernelBench checkout}" --kbench $KB \
      --jobs "${AGREEMENT_JOBS:-3}" ${AGREEMENT_FIXTURES:+--only $AGREEMENT_FIXTURES}
    tail -22 "$LOGS/upstream-agreement.log" | cut -c1-220
    # After the table, so that the fixtures' extensions are built (and cached) once.
    timed ctest-kernelbench-rule ctest --test-dir build-gpu -R "KernelBench-rule fixture" -V -j1
    grep -E "tests passed|tests failed|FAILED|REQUIRE|CHECK\(" "$LOGS/ctest-kernelbench-rule.log" | head -20 ;;
  readme)
    timed readme-gpu python3 tests/readme/run_readme_blocks.py --kind gpu --kbench-dir build-gpu
    timed readme-cpu python3 tests/readme/run_readme_blocks.py --kind cpu --kbench-dir build-gpu
    grep -h "^readme: " "$LOGS"/readme-gpu.log "$LOGS"/readme-cpu.log | grep -v '^readme: [$] ' | cut -c1-240 ;;
  *) echo "unknown step: $step" ;;
  esac
done
[[ -n ${OUT:-} ]] && tar czf "$OUT/session-logs.tgz" -C "$ALL_LOGS" .
exit 0
