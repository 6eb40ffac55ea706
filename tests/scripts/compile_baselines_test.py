#!/usr/bin/env python3
"""CPU test of scripts/tools/compile_baselines.py's --path inductor logic: no GPU, no torch.compile needed
(CI has PyTorch 1.13; only the planning check imports torch, through export_problems.too_old).

Covers:
  - planning and resume: which problems a sitting skips given a record with an inductor figure, a
    reason and an AOTInductor figure; --force; --retry-failed; the order (level 3, 2, 1, each by
    weight bytes, largest first);
  - the record entries: a figure built from a fake worker result (fields, path text, eager mean of
    the sitting, the check) and a no-figure entry (a reason, no mean);
  - the record file: atomic writing (no temporary left, stale ones removed, other entries kept), the
    formatting that src/report/baselines.cpp writes (nlohmann's dump(2)), NaN refused;
  - the summary's arithmetic (problems per minute, projection for all problems, record counts) and
    the first line of an error;
  - the parent's scheduler with fake work in real spawned workers: figures and reasons recorded as
    they finish, timings serialised by the GPU lock, the compile limit not counting the wait for
    the lock, the timing limit, a worker that dies, an OOM retried alone, --time-limit-s cutting
    workers off without recording them.
The GPU path itself (torch.compile, timing on CUDA) runs only on a GPU machine
(scripts/gpu/compiled-baselines.sh).

Run:  python3 tests/scripts/compile_baselines_test.py      last line: "N passed, M failed"; exit 0 if M == 0.
"""
import contextlib
import io
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "tools"))
import compile_baselines as cb  # noqa: E402
import problem_source  # noqa: E402

GPU = "NVIDIA H100 80GB HBM3"
SLUG = "H100_80GB_HBM3"
CHECKS = []
SCRATCH = []  # the run's temporary directory (made in main: spawned workers import this module too)


def check(fn):
    CHECKS.append(fn)
    return fn


def tmpdir():
    return Path(tempfile.mkdtemp(dir=SCRATCH[0]))


def inductor_args(record, *extra):
    return cb.parse_args(["--record", str(record), *extra])


def fake_result(mean=0.5, eager=1.0, matches=True, note=""):
    """What compile_and_time returns, without a GPU."""
    stats = {"mean": mean, "std": 0.01, "min": mean - 0.02, "max": mean + 0.03, "median": mean,
             "num_trials": 100, "cv": 0.02, "noisy": False, "hidden_work_trials": 0}
    return {"status": "ok", "compiled": stats, "eager": dict(stats, mean=eager), "compile_s": 41.2749,
            "matches_eager": matches, "max_abs_error": 1.5e-6, "note": note, "atol": 0.01, "rtol": 0.01,
            "stochastic": False, "torch": "2.11.0+cu130", "hardware": GPU, "device": "cuda:0"}


# ---------------------------------------------------------------------------------------------------
# Planning and resume

PLANNED = ["1:1", "1:19", "2:1", "3:1", "3:4"]


def fake_manifest():
    """Manifest entries that match today's sources (the test must not depend on the real manifest's
    freshness), with weights that set the order within level 1."""
    manifest = {}
    for spec in PLANNED:
        level, pid = map(int, spec.split(":"))
        source = next(cb.export_problems.problem_files([level], pid))[2]
        manifest[(level, pid)] = {"sha256": problem_source.source_sha256(source), "input_bytes": 1 << 20,
                                  "weight_bytes": {(1, 1): 10, (1, 19): 20}.get((level, pid), 0)}
    return manifest


def plan_statuses(record_doc, *flags):
    d = tmpdir()
    record = d / "compiled.json"
    cb.write_record(record, record_doc)
    args = inductor_args(record, "--problems", *PLANNED, *flags)
    path = cb.InductorPath(args, SLUG, GPU, "2.11.0")
    return [(f"{level}:{pid}", status) for level, pid, _, status, _, _ in cb.plan(args, fake_manifest(), path)]


def sample_record():
    """Level 2 #1 has an inductor figure, level 3 #1 an AOTInductor one, level 1 #19 a reason."""
    doc = {}
    for level, name, entry in (
            (2, "1_Conv2D_ReLU_BiasAdd", cb.figure_entry(fake_result(), "t")),
            (3, "1_MLP", {"mean": 3.75, "std": 0.01, "path": cb.AOTI_PATH, "hardware": GPU}),
            (1, "19_ReLU", cb.reason_entry("compile failed: RuntimeError: boom", "2.11.0", GPU, "t"))):
        level_key, file_key = cb.record_keys(level, name)
        doc.setdefault(level_key, {})[file_key] = entry
    return doc


@check
def plan_skips_recorded_problems_and_runs_slowest_first():
    assert plan_statuses(sample_record()) == [
        ("3:1", "recorded"), ("3:4", "run"), ("2:1", "recorded"), ("1:19", "has-reason"), ("1:1", "run")]


@check
def retry_failed_runs_only_the_reasons():
    assert dict(plan_statuses(sample_record(), "--retry-failed")) == {
        "3:4": "run", "3:1": "recorded", "2:1": "recorded", "1:19": "run", "1:1": "run"}


@check
def force_runs_everything_even_aoti_figures():
    assert all(status == "run" for _, status in plan_statuses(sample_record(), "--force"))


@check
def order_is_level_then_weight():
    manifest = {(1, 1): {"weight_bytes": 5}, (1, 2): {"weight_bytes": 50}, (2, 7): {}, (3, 9): {"weight_bytes": 1}}
    problems = [(1, 1, "a"), (2, 7, "b"), (1, 2, "c"), (3, 9, "d"), (1, 3, "e")]
    assert [p[:2] for p in cb.slowest_first(problems, manifest)] == [(3, 9), (2, 7), (1, 2), (1, 1), (1, 3)]


@check
def compare_mode_records_into_the_side_file():
    d = tmpdir()
    args = inductor_args(d / "main.json", "--compare-with-recorded", "--side-record", str(d / "side.json"))
    path = cb.InductorPath(args, SLUG, GPU, "2.11.0")
    assert path.record == d / "side.json" and path.main_record == d / "main.json"


@check
def options_of_the_other_path_are_refused():
    for argv in (["--path", "aoti", "--retry-failed"], ["--eval"], ["--side-record", "x"],
                 ["--problems", "1:1", "--level", "1"], ["--problems", "1-1"]):
        with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
            try:
                cb.parse_args(argv)
            except SystemExit:
                continue
        raise AssertionError(f"accepted: {argv}")
    args = cb.parse_args(["--problems", "2:1,2:3", "3:4"])
    assert args.problems == [(2, 1), (2, 3), (3, 4)] and args.problem_timeout_s == 300
    assert cb.parse_args(["--path", "aoti"]).problem_timeout_s is None


# ---------------------------------------------------------------------------------------------------
# Entries

@check
def figure_entry_fields():
    entry = cb.figure_entry(fake_result(note=""), "2026-01-02T03:04:05+0000")
    assert set(entry) == {"mean", "std", "min", "max", "median", "num_trials", "cv", "noisy", "hidden_work_trials",
                          "hardware", "device", "torch", "path", "eager_mean_same_sitting", "compile_s",
                          "matches_eager", "max_abs_error", "atol", "rtol", "stochastic", "created"}, sorted(entry)
    assert entry["path"] == ("torch.compile (inductor, default mode), in process; timed from Python with "
                             "kbench's protocol")
    assert entry["mean"] == 0.5 and entry["eager_mean_same_sitting"] == 1.0 and entry["compile_s"] == 41.27
    assert entry["matches_eager"] is True and entry["created"] == "2026-01-02T03:04:05+0000"
    mismatch = cb.figure_entry(fake_result(matches=False, note="output 0 has shape (2,)"), "t")
    assert mismatch["matches_eager"] is False and mismatch["note"] == "output 0 has shape (2,)"
    assert "MISMATCH" in cb.check_text(mismatch)


@check
def reason_entry_has_no_mean():
    entry = cb.reason_entry("ran past 300 s (compile limit)", "2.11.0", GPU, "t")
    assert entry == {"path": cb.INDUCTOR_PATH, "reason": "ran past 300 s (compile limit)", "torch": "2.11.0",
                     "hardware": GPU, "created": "t"}
    assert not cb.has_figure(entry) and cb.has_figure({"mean": 1.0})


# ---------------------------------------------------------------------------------------------------
# The record file

# What nlohmann::json's dump(2) writes for this document (checked against the library once).
NLOHMANN_TEXT = """{
  "level1": {},
  "level2": {
    "1_Conv2D_ReLU_BiasAdd.py": {
      "compile_s": 41.27,
      "empty": {},
      "list": [
        1,
        2.5e-07,
        1e+20
      ],
      "max_abs_error": null,
      "mean": 0.5,
      "noisy": false,
      "num_trials": 100,
      "reason": "compile failed: RuntimeError: x \u00d7 y \\"quoted\\"",
      "std": 0.0125
    }
  }
}
"""


@check
def record_is_formatted_as_cpp_writes_it():
    doc = {"level2": {"1_Conv2D_ReLU_BiasAdd.py": {
        "std": 0.0125, "mean": 0.5, "num_trials": 100, "noisy": False, "max_abs_error": None, "compile_s": 41.27,
        "reason": "compile failed: RuntimeError: x \u00d7 y \"quoted\"", "empty": {}, "list": [1, 2.5e-07, 1e20]}},
        "level1": {}}
    assert cb.format_record(doc) == NLOHMANN_TEXT
    try:
        cb.format_record({"x": float("nan")})
    except ValueError:
        return
    raise AssertionError("NaN written")


@check
def record_writes_are_atomic_and_keep_other_entries():
    d = tmpdir()
    record = d / "compiled.json"
    cb.write_record(record, sample_record())
    (d / "compiled.json.tmp4242").write_text("{half a file")  # a writer killed mid-write
    (d / "compiled.json.tmp").write_text("{")  # the C++ side's name: not ours to remove
    cb.remove_stale_tmp(record)
    assert sorted(p.name for p in d.iterdir()) == ["compiled.json", "compiled.json.tmp"]
    cb.store_entry(record, 1, "1_Square_matrix_multiplication_", cb.figure_entry(fake_result(), "t"))
    doc = cb.read_record(record)
    assert record.read_text() == cb.format_record(doc)
    assert doc["level3"]["1_MLP.py"]["path"] == cb.AOTI_PATH and "reason" in doc["level1"]["19_ReLU.py"]
    assert doc["level1"]["1_Square_matrix_multiplication_.py"]["mean"] == 0.5
    assert sorted(p.name for p in d.iterdir()) == ["compiled.json", "compiled.json.tmp"]
    record.write_text("{not json")
    try:
        cb.read_record(record)
    except ValueError as e:
        assert str(record) in str(e)
        return
    raise AssertionError("a broken record was read as empty (and would have been overwritten)")


# ---------------------------------------------------------------------------------------------------
# Summary and messages

@check
def throughput_and_projection():
    per_min, all_min = cb.throughput(done=30, elapsed_s=540, total=250)
    assert abs(per_min - 30 / 9) < 1e-9 and abs(all_min - 75.0) < 1e-9
    assert cb.throughput(0, 540, 250) == (0.0, None) and cb.throughput(3, 0, 250) == (0.0, None)
    problems = [(1, "19_ReLU"), (2, "1_Conv2D_ReLU_BiasAdd"), (3, "1_MLP"), (3, "4_LeNet5")]
    assert cb.record_counts(sample_record(), problems) == (2, 1)


@check
def summary_line_and_comparison_table():
    d = tmpdir()
    cb.write_record(d / "main.json", sample_record())
    side = {"level3": {"1_MLP.py": cb.figure_entry(fake_result(mean=3.0, eager=6.0), "t")}}
    cb.write_record(d / "side.json", side)
    args = inductor_args(d / "main.json", "--jobs", "4", "--compare-with-recorded",
                         "--side-record", str(d / "side.json"))
    path = cb.InductorPath(args, SLUG, GPU, "2.11.0")
    reporter = cb.Reporter(False, path.statuses)
    reporter.counts.update({"figure": 9, "reason": 3, "cut-off": 2})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cb.print_sitting_summary(args, path, reporter, 360.0, "time limit (540 s)")
        cb.print_comparison(path, [(3, 1, "1_MLP", "run", "", None)])
    summary, header, row = out.getvalue().splitlines()
    fields = dict(f.split("=", 1) for f in summary.split(": ", 1)[1].split() if "=" in f)
    total = len(cb.all_problems())
    assert total == 250 and fields["jobs"] == "4" and fields["done"] == "12" and fields["per_min"] == "2.00"
    assert fields["all_250_min"] == "125.0" and fields["records"] == "1/250" and fields["cut_off"] == "2"
    assert fields["remaining_min"] == "124.5" and fields["stopped"] == "time_limit_(540_s)"
    assert row.split()[:5] == ["level3/1_MLP", "3.7500", "3.0000", "6.0000", "0.80"], row


@check
def error_line_takes_the_line_that_says_what_failed():
    e = RuntimeError("backend='inductor' raised:\nRuntimeError: CUDA error: boom\n\nSet TORCHDYNAMO_VERBOSE=1")
    assert cb.error_line(e) == "RuntimeError: backend='inductor' raised: RuntimeError: CUDA error: boom"
    assert cb.error_line(ValueError("")) == "ValueError: "


@check
def a_phase_without_limit_is_never_overdue():
    run = cb.Running({"name": "x"}, None)
    limits = {"compile": 300, "timing": 180}
    assert run.overdue(limits, run.since + 299) is None and run.overdue(limits, run.since + 301) == 300
    run.enter("waiting")
    assert run.overdue(limits, run.since + 10_000) is None
    run.enter("timing")
    assert run.overdue(limits, run.since + 181) == 180


# ---------------------------------------------------------------------------------------------------
# The scheduler, with fake work in spawned workers

def fake_work(job, opts, phases):
    """Stands in for compile_and_time: job["fake"] says how it behaves."""
    how = job["fake"]
    if how == "raise":
        raise RuntimeError("backend='inductor' raised:\nAssertionError: fake compile error")
    if how == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "oom":
        with open(job["trace"], "a") as f:
            f.write("attempt\n")
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    if how == "hang":
        time.sleep(60)
    with cb.timing_slot(cb.GpuLock(opts["gpu_lock"]), phases, opts["nice"]):
        start = time.time()
        time.sleep(5 if how == "slow-timing" else 0.3)
        with open(job["trace"], "a") as f:
            f.write(f"{start} {time.time()}\n")
    return fake_result()


def hold_gpu_lock(lock_path, seconds):
    """Holds the GPU lock exclusively for `seconds` from a thread, as another problem's timing would."""
    acquired = threading.Event()

    def hold():
        with cb.GpuLock(lock_path).exclusive():
            acquired.set()
            time.sleep(seconds)

    thread = threading.Thread(target=hold)
    thread.start()
    acquired.wait()
    return thread


def run_fake(jobs, *flags, hold_lock_s=0.0):
    """Runs (id, behaviour) fake jobs through run_jobs with an InductorPath on a temporary record.
    Returns (why it stopped, reporter, the record's level-1 entries, the timing windows)."""
    d = tmpdir()
    args = inductor_args(d / "compiled.json", "--log-dir", str(d / "logs"), *flags)
    path = cb.InductorPath(args, SLUG, GPU, "2.11.0")
    path.work = fake_work
    path.opts["gpu_lock"] = str(d / "gpu.lock")
    full = [{"level": 1, "id": pid, "name": f"{pid}_Fake", "fake": how, "trace": str(d / "trace"), "estimate": 1,
             "exclusive": False, "retried": False, "log": str(d / "logs" / f"{pid}.log")} for pid, how in jobs]
    reporter = cb.Reporter(True, path.statuses)
    holder = hold_gpu_lock(path.opts["gpu_lock"], hold_lock_s) if hold_lock_s else None
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        stopped = cb.run_jobs(full, args, path, reporter, 1 << 40, time.time())
    if holder:
        holder.join()
    trace = (d / "trace").read_text().splitlines() if (d / "trace").exists() else []
    return stopped, reporter, cb.read_record(path.record).get("level1", {}), trace


@check
def workers_record_figures_and_reasons_as_they_finish():
    stopped, reporter, record, trace = run_fake(
        [(1, "ok"), (2, "raise"), (3, "die"), (4, "ok"), (5, "hang"), (6, "ok"), (7, "slow-timing")],
        "--jobs", "4", "--problem-timeout-s", "2", "--timing-timeout-s", "2")
    assert stopped is None
    assert all(cb.has_figure(record[f"{pid}_Fake.py"]) for pid in (1, 4, 6))
    assert record["1_Fake.py"]["path"] == cb.INDUCTOR_PATH
    assert record["2_Fake.py"]["reason"] == \
        "compile failed: RuntimeError: backend='inductor' raised: AssertionError: fake compile error"
    assert record["3_Fake.py"]["reason"] == "worker died (signal 9)"
    assert record["5_Fake.py"]["reason"] == "ran past 2 s (compile limit)"
    assert record["7_Fake.py"]["reason"] == "ran past 2 s (timing limit)"
    assert reporter.counts["figure"] == 3 and reporter.counts["reason"] == 4
    # One problem timed at a time: the timing windows do not overlap.
    windows = sorted(tuple(map(float, line.split())) for line in trace)
    assert len(windows) == 3 and all(a[1] <= b[0] for a, b in zip(windows, windows[1:])), windows


@check
def waiting_for_the_gpu_lock_is_not_compile_time():
    stopped, _, record, _ = run_fake([(1, "ok")], "--problem-timeout-s", "1", hold_lock_s=2.5)
    assert stopped is None and cb.has_figure(record["1_Fake.py"]), record


@check
def out_of_memory_is_retried_once_alone():
    d_record = run_fake([(1, "oom"), (2, "ok")], "--jobs", "2")
    _, _, record, trace = d_record
    assert trace.count("attempt") == 2, trace
    assert record["1_Fake.py"]["reason"].endswith("(run alone too)"), record
    assert "out of memory" in record["1_Fake.py"]["reason"] and cb.has_figure(record["2_Fake.py"])


@check
def time_limit_cuts_workers_off_without_recording_them():
    t0 = time.time()
    stopped, reporter, record, _ = run_fake([(1, "ok"), (2, "hang"), (3, "hang"), (4, "ok")],
                                            "--jobs", "2", "--time-limit-s", "4")
    assert stopped == "time limit (4 s)" and time.time() - t0 < 15
    assert set(record) == {"1_Fake.py"}, record
    assert reporter.counts["cut-off"] == 2 and reporter.counts["not-started"] == 1, reporter.counts


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="kbench-compile-baselines-test-") as scratch:
        SCRATCH.append(scratch)
        for fn in CHECKS:
            try:
                fn()
                passed += 1
                print(f"ok   {fn.__name__}", flush=True)
            except Exception:
                failed += 1
                print(f"FAIL {fn.__name__}:\n{traceback.format_exc()}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
