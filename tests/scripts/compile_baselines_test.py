#!/usr/bin/env python3
"""CPU test of scripts/tools/compile_baselines.py's --path inductor logic: no GPU, no torch.compile needed
(CI has PyTorch 1.13; only the planning checks import torch, through export_problems.too_old, and
the exit-code check, whose torch.cuda is patched to show one device).

Covers:
  - planning and resume: which problems a sitting skips given a record with an inductor figure, a
    reason and an AOTInductor figure; entries of another PyTorch (or none noted) redone as stale, and
    so shown by --dry-run; --force; --retry-failed; the order (--problems as given; --level: level 3,
    2, 1, each by weight bytes, largest first); a second sitting on a record waiting for the first,
    then skipping what it recorded;
  - --devices and --gpu-locks: parsing and usage errors, the default lock files (named after the GPU
    that CUDA_VISIBLE_DEVICES maps an ordinal to), a worker's CUDA_VISIBLE_DEVICES, the per-device
    budgets and the refusals (a device CUDA lacks, devices of two GPU models: exit code 2);
  - the record entries: a figure built from a fake worker result (fields, path text, eager mean of
    the sitting, the check) and a no-figure entry (a reason, no mean);
  - the record file: atomic writing (no temporary left, stale ones removed, other entries kept), the
    formatting that src/report/baselines.cpp writes (nlohmann's dump(2)), NaN refused;
  - the summary's arithmetic (problems per minute, projection for all problems, record counts), its
    devices, a finished problem's progress suffix, and the first line of an error;
  - the parent's scheduler with fake work in real spawned workers: figures and reasons recorded as
    they finish, timings serialised by the GPU lock, the compile limit not counting the wait for
    the lock, the timing limit, a worker that dies, an OOM retried alone, --time-limit-s cutting
    workers off without recording them; over two fake devices: workers spread by count and budget,
    each device's timings serialised by its own lock while the other device's go on, an OOM retried
    alone on its device while the other device goes on working.
The GPU path itself (torch.compile, timing on CUDA) runs only on a GPU machine
(`kbench baseline --only compiled`).

Run:  python3 tests/scripts/compile_baselines_test.py      last line: "N passed, M failed"; exit 0 if M == 0.
"""
import contextlib
import io
import json
import os
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "tools"))
import compile_baselines as cb  # noqa: E402
import problem_source  # noqa: E402

GPU = "NVIDIA H100 80GB HBM3"
SLUG = "H100_80GB_HBM3"
TORCH = "2.11.0+cu130"  # the sittings' PyTorch: the record's entries of another are stale
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
            "stochastic": False, "torch": TORCH, "hardware": GPU, "device": "cuda:0"}


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


def plan_details(record_doc, *flags, problems=PLANNED):
    d = tmpdir()
    record = d / "compiled.json"
    cb.write_record(record, record_doc)
    args = inductor_args(record, "--problems", *problems, *flags)
    path = cb.InductorPath(args, SLUG, GPU, TORCH)
    return [(f"{level}:{pid}", status, detail)
            for level, pid, _, status, detail, _ in cb.plan(args, fake_manifest(), path)]


def plan_statuses(record_doc, *flags, problems=PLANNED):
    return [(problem, status) for problem, status, _ in plan_details(record_doc, *flags, problems=problems)]


def record_of(*entries):
    """A record document of (level, name, entry) triples."""
    doc = {}
    for level, name, entry in entries:
        level_key, file_key = cb.record_keys(level, name)
        doc.setdefault(level_key, {})[file_key] = entry
    return doc


def sample_record():
    """Level 2 #1 has an inductor figure, level 3 #1 an AOTInductor one (no "torch": stale), level 1
    #19 a reason, all of this PyTorch."""
    return record_of((2, "1_Conv2D_ReLU_BiasAdd", cb.figure_entry(fake_result(), "t")),
                     (3, "1_MLP", {"mean": 3.75, "std": 0.01, "path": cb.AOTI_PATH, "hardware": GPU}),
                     (1, "19_ReLU", cb.reason_entry("compile failed: RuntimeError: boom", TORCH, GPU, "t")))


@check
def plan_skips_recorded_problems_in_the_order_given():
    assert plan_statuses(sample_record()) == [
        ("1:1", "run"), ("1:19", "has-reason"), ("2:1", "recorded"), ("3:1", "run"), ("3:4", "run")]
    shuffled = ["3:4", "1:19", "2:1", "1:1", "3:1"]
    assert [p for p, _ in plan_statuses(sample_record(), problems=shuffled)] == shuffled


@check
def retry_failed_runs_only_the_reasons():
    assert dict(plan_statuses(sample_record(), "--retry-failed")) == {
        "3:4": "run", "3:1": "run", "2:1": "recorded", "1:19": "run", "1:1": "run"}


@check
def entries_of_another_torch_are_stale_and_run_again():
    old = dict(fake_result(), torch="2.10.0+cu128")
    doc = record_of((1, "1_Square_matrix_multiplication_", cb.figure_entry(old, "t")),
                    (1, "19_ReLU", cb.reason_entry("ran past 300 s (compile limit)", "2.10.0+cu128", GPU, "t")),
                    (2, "1_Conv2D_ReLU_BiasAdd", cb.figure_entry(fake_result(), "t")),
                    (3, "1_MLP", {"mean": 3.75, "std": 0.01, "path": cb.AOTI_PATH, "hardware": GPU}),
                    (3, "4_LeNet5", cb.reason_entry("worker died (signal 9)", TORCH, GPU, "t")))
    assert plan_details(doc) == [
        ("1:1", "run", "recorded with torch 2.10.0+cu128: stale"),
        ("1:19", "run", "recorded with torch 2.10.0+cu128: stale"),
        ("2:1", "recorded", "0.5 ms, " + cb.INDUCTOR_PATH),
        ("3:1", "run", "recorded with torch unknown: stale"),
        ("3:4", "has-reason", "worker died (signal 9)")]
    problems = [(1, "1_Square_matrix_multiplication_"), (1, "19_ReLU"), (2, "1_Conv2D_ReLU_BiasAdd"),
                (3, "1_MLP"), (3, "4_LeNet5")]
    assert cb.record_counts(doc, problems, TORCH) == (1, 1)
    # --dry-run shows a stale one as would-compile, with why
    d = tmpdir()
    cb.write_record(d / "compiled.json", doc)
    args = inductor_args(d / "compiled.json", "--problems", "1:19", "2:1", "--dry-run")
    path = cb.InductorPath(args, SLUG, GPU, TORCH)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cb.print_dry_run(args, list(cb.plan(args, fake_manifest(), path)), path, TORCH, SLUG, [])
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("would-compile level1/19_ReLU  recorded with torch 2.10.0+cu128: stale  (est."), lines
    assert lines[1].startswith("recorded      level2/1_Conv2D_ReLU_BiasAdd  0.5 ms"), lines


@check
def force_runs_everything_even_aoti_figures():
    assert all(status == "run" for _, status in plan_statuses(sample_record(), "--force"))


@check
def order_is_level_then_weight_unless_problems_are_given():
    manifest = {(1, 1): {"weight_bytes": 5}, (1, 2): {"weight_bytes": 50}, (2, 7): {}, (3, 9): {"weight_bytes": 1}}
    problems = [(1, 1, "a"), (2, 7, "b"), (1, 2, "c"), (3, 9, "d"), (1, 3, "e")]
    slowest = [(3, 9), (2, 7), (1, 2), (1, 1), (1, 3)]
    assert [p[:2] for p in cb.slowest_first(problems, manifest)] == slowest
    d = tmpdir()
    by_level = cb.InductorPath(inductor_args(d / "c.json", "--level", "1", "--level", "3"), SLUG, GPU, TORCH)
    assert [p[:2] for p in by_level.order(problems, manifest)] == slowest
    given = cb.InductorPath(inductor_args(d / "c.json", "--problems", "1:1,2:7"), SLUG, GPU, TORCH)
    assert given.order(problems, manifest) == problems


@check
@mock.patch.object(cb.tempfile, "gettempdir", lambda: SCRATCH[0])  # the sitting's lock file: none left behind
def a_second_sitting_waits_for_the_first_then_skips_what_it_recorded():
    d = tmpdir()
    record = d / "compiled.json"
    first = cb.InductorPath(inductor_args(record), SLUG, GPU, TORCH)
    second = cb.InductorPath(inductor_args(record), SLUG, GPU, TORCH)
    holding, released = threading.Event(), []

    def first_sitting():
        with first.sitting():
            holding.set()
            time.sleep(1.0)
            cb.store_entry(record, 2, "1_Conv2D_ReLU_BiasAdd", cb.figure_entry(fake_result(), "t"))
            released.append(time.time())

    thread = threading.Thread(target=first_sitting)
    thread.start()
    holding.wait()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), second.sitting():
            entered = time.time()
            done = second.existing(2, "1_Conv2D_ReLU_BiasAdd", {})
    except SystemExit as e:
        raise AssertionError(f"the second sitting gave up: {e}") from None
    finally:
        thread.join()
    assert released and entered >= released[0], "the second sitting did not wait for the first"
    assert err.getvalue() == f"compile_baselines: waiting for another sitting writing {record}\n", err.getvalue()
    assert done is not None and done[0] == "recorded", done


@check
def compare_mode_records_into_the_side_file():
    d = tmpdir()
    args = inductor_args(d / "main.json", "--compare-with-recorded", "--side-record", str(d / "side.json"))
    path = cb.InductorPath(args, SLUG, GPU, TORCH)
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


@contextlib.contextmanager
def cuda_visible(value):
    """CUDA_VISIBLE_DEVICES set to `value` (None: unset) meanwhile; spawned workers inherit it."""
    with mock.patch.dict(os.environ):
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        if value is not None:
            os.environ["CUDA_VISIBLE_DEVICES"] = value
        yield


def refused(argv):
    with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
        try:
            cb.parse_args(argv)
        except SystemExit as e:
            return e.code == 2
    return False


@check
def devices_and_gpu_locks_are_parsed_and_checked():
    for argv in (["--devices", "0,0"], ["--devices", "a"], ["--devices", ""], ["--devices", "-1"],
                 ["--devices", "0,,1"], ["--devices", "0,1", "--gpu-locks", "/l0"], ["--gpu-locks", "/l0,/l1"],
                 ["--devices", "0,1", "--gpu-locks", "/l0,"], ["--path", "aoti", "--devices", "1"],
                 ["--path", "aoti", "--gpu-locks", "/l0"]):
        assert refused(argv), f"accepted: {argv}"
    with cuda_visible(None):
        args = cb.parse_args(["--devices", "1,0"])
        assert args.devices == [1, 0] and args.gpu_locks == [str(cb.lock_file("gpu1-timing")),
                                                             str(cb.lock_file("gpu0-timing"))], args.gpu_locks
        assert cb.parse_args([]).devices == [0] and cb.parse_args(["--path", "aoti"]).devices == [0]
    args = cb.parse_args(["--devices", "2,3", "--gpu-locks", "/tmp/a.lock,/tmp/b.lock"])
    assert args.devices == [2, 3] and args.gpu_locks == ["/tmp/a.lock", "/tmp/b.lock"]
    path = cb.InductorPath(inductor_args(tmpdir() / "c.json", "--devices", "2,3", "--gpu-locks", "/a,/b"),
                           SLUG, GPU, TORCH)
    assert path.opts["gpu_locks"] == {2: "/a", 3: "/b"}
    with cuda_visible("5,7"):  # the quiet locks are named as kbench's C++ names them, after the GPU
        path = cb.InductorPath(inductor_args(tmpdir() / "c.json", "--devices", "0,1"), SLUG, GPU, TORCH)
        assert path.opts["quiet_locks"] == {0: (str(cb.lock_file("gpu5-quiet-gate")), str(cb.lock_file("gpu5-quiet"))),
                                            1: (str(cb.lock_file("gpu7-quiet-gate")), str(cb.lock_file("gpu7-quiet")))}


class RecordingPhases:
    def __init__(self):
        self.entered = []

    def enter(self, name):
        self.entered.append((name, time.time()))


@check
def timing_waits_for_a_spare_preparing_its_gpu_and_keeps_the_next_one_out():
    """A kbench ModelNew spare holds the GPU's quiet lock while it prepares its GPU: a baseline's
    timing starts only once it lets go, and the next spare's part, which takes the lock's gate
    exclusively, waits until the timing is done."""
    d = tmpdir()
    gate, quiet = str(d / "quiet-gate.lock"), str(d / "quiet.lock")
    holder, _ = hold_gpu_lock(quiet, 0.6)
    phases, spare = RecordingPhases(), {}

    def spare_part():  # the next spare's part, asked while the timing runs: it takes the gate exclusively
        with cb.GpuLock(gate).exclusive():
            spare["gate"] = time.time()

    with cb.timing_slot(cb.GpuLock(str(d / "gpu.lock")), (gate, quiet), phases, os.getpriority(os.PRIO_PROCESS, 0)):
        inside = time.time()
        queued = threading.Thread(target=spare_part)
        queued.start()
        time.sleep(0.2)
        left = time.time()
    holder.join()
    queued.join()
    (waiting, asked), (timing, began) = phases.entered
    assert (waiting, timing) == ("waiting", "timing") and began - asked >= 0.5 and inside >= began, phases.entered
    assert spare["gate"] >= left, (spare, left)  # the gate stays held shared through the timing


@check
def an_ordinal_is_mapped_through_cuda_visible_devices():
    assert cb.visible_device(1, "2,3") == "3" and cb.visible_device(0, "2,3") == "2"
    assert cb.visible_device(1, None) == "1" and cb.visible_device(1, "") == "1"
    assert cb.visible_device(1, "GPU-1a2b,GPU-3c4d") == "GPU-3c4d" and cb.visible_device(2, "5") == "2"
    # The default lock files: as sandbox/gpu_lock.cpp names them, after the GPU, not the ordinal.
    with cuda_visible("GPU-1a:2b,7"):
        assert cb.default_gpu_lock(0).name == "kbench-gpuGPU-1a_2b-timing.lock"
        assert cb.default_gpu_lock(1) == cb.lock_file("gpu7-timing")


class FakeCuda:
    """torch.cuda as device_budgets uses it: (name, total memory) per ordinal."""

    def __init__(self, *devices):
        self.devices = devices

    def device_count(self):
        return len(self.devices)

    def get_device_name(self, d):
        return self.devices[d][0]

    def get_device_properties(self, d):
        return type("Properties", (), {"total_memory": self.devices[d][1]})()


@check
def device_budgets_per_device_and_refusals():
    cuda = FakeCuda((GPU, 80 * cb.GIB), ("NVIDIA H200", 140 * cb.GIB), (GPU, 40 * cb.GIB))
    name, budgets = cb.device_budgets([2, 0], 4, cuda)
    assert name == GPU and budgets == {2: int(0.9 * 40 * cb.GIB) - 4 * cb.GIB, 0: int(0.9 * 80 * cb.GIB) - 4 * cb.GIB}
    for devices, words in (([0, 3], "--devices 3: no such CUDA device (this process sees 3)"),
                           ([0, 1], "not all one GPU model")):
        try:
            cb.device_budgets(devices, 4, cuda)
        except ValueError as e:
            assert words in str(e) and "\n" not in str(e), str(e)
            continue
        raise AssertionError(f"accepted: {devices}")


@check
def main_refuses_devices_cuda_lacks_with_exit_code_2():
    import torch
    argv = ["compile_baselines.py", "--devices", "0,1", "--record", str(tmpdir() / "c.json")]
    err = io.StringIO()
    with mock.patch.object(sys, "argv", argv), mock.patch.object(cb.export_problems, "torch_key", lambda: "2.11"), \
            mock.patch.object(torch.cuda, "is_available", lambda: True), \
            mock.patch.object(torch.cuda, "device_count", lambda: 1), contextlib.redirect_stderr(err):
        code = cb.main()
    assert code == 2 and err.getvalue() == \
        "compile_baselines: --devices 1: no such CUDA device (this process sees 1)\n", (code, err.getvalue())


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
    assert cb.record_counts(sample_record(), problems, TORCH) == (1, 1)  # the AOTInductor figure is stale


@check
def summary_line_and_comparison_table():
    d = tmpdir()
    cb.write_record(d / "main.json", sample_record())
    side = {"level3": {"1_MLP.py": cb.figure_entry(fake_result(mean=3.0, eager=6.0), "t")}}
    cb.write_record(d / "side.json", side)
    args = inductor_args(d / "main.json", "--jobs", "4", "--compare-with-recorded",
                         "--side-record", str(d / "side.json"))
    path = cb.InductorPath(args, SLUG, GPU, TORCH)
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
    assert fields["devices"] == "0", fields
    assert row.split()[:5] == ["level3/1_MLP", "3.7500", "3.0000", "6.0000", "0.80"], row
    args = inductor_args(d / "main.json", "--json", "--devices", "1,0")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cb.print_sitting_summary(args, cb.InductorPath(args, SLUG, GPU, TORCH), reporter, 360.0, None)
    summary = json.loads(out.getvalue())
    assert summary["devices"] == [1, 0] and summary["summary"]["done"] == 12, summary


@check
def a_finished_problem_line_tells_the_progress():
    reporter = cb.Reporter(False, cb.InductorPath.statuses, cb.InductorPath.finished)
    reporter.begin(5)
    reporter.started -= 120  # two minutes into the sitting
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        reporter.emit(1, 19, "19_ReLU", "recorded", "0.5 ms", 0.0)
        reporter.emit(1, 1, "1_X", "figure", "compiled 0.5 ms", 30.0)
        reporter.emit(1, 2, "2_X", "reason", "worker died (signal 9)", 40.0)
        reporter.emit(1, 3, "3_X", "cut-off", "time limit", 50.0)
    recorded, figure, reason, cut_off = out.getvalue().splitlines()
    assert recorded.endswith("  0.5 ms") and cut_off.endswith("  time limit"), (recorded, cut_off)
    assert figure.endswith("compiled 0.5 ms  [1/5 done, ~8.0 min left]"), figure  # 0.5 a minute, 4 left
    assert reason.endswith("(signal 9)  [2/5 done, ~3.0 min left]"), reason
    json_reporter = cb.Reporter(True, cb.InductorPath.statuses, cb.InductorPath.finished)
    json_reporter.begin(5)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        json_reporter.emit(1, 1, "1_X", "figure", "compiled 0.5 ms", 30.0)
    assert json.loads(out.getvalue()) == {"level": 1, "id": 1, "name": "1_X", "status": "figure",
                                          "detail": "compiled 0.5 ms", "seconds": 30.0}


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

def trace(job, what, start, **more):
    """One line of the run's trace: what a worker did on which device, and when."""
    with open(job["trace"], "a") as f:
        f.write(json.dumps(dict(id=job["id"], what=what, device=job["device"], start=start, end=time.time(),
                                visible=os.environ.get("CUDA_VISIBLE_DEVICES"), **more)) + "\n")


def fake_work(job, opts, phases):
    """Stands in for compile_and_time: job["fake"] says how it behaves ("slow": 2.5 s of compiling)."""
    how, begun = job["fake"], time.time()
    if how == "raise":
        raise RuntimeError("backend='inductor' raised:\nAssertionError: fake compile error")
    if how == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "oom":
        time.sleep(0.5)
        trace(job, "attempt", begun)
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    if how == "hang":
        time.sleep(60)
    if how == "slow":
        time.sleep(2.5)
    with cb.timing_slot(cb.GpuLock(opts["gpu_locks"][job["device"]]), opts["quiet_locks"][job["device"]], phases, opts["nice"]):
        start = time.time()
        time.sleep(5 if how == "slow-timing" else 0.3)
        trace(job, "timing", start)
    trace(job, "work", begun)
    return dict(fake_result(), device=f"cuda:{job['device']}")


def hold_gpu_lock(lock_path, seconds, until=None):
    """Holds a GPU lock exclusively from a thread, as another problem's timing would: for `seconds`,
    or less once until() holds. Returns the thread and a dict that gets "released" (the time) and
    "met" (whether until() held)."""
    acquired, held = threading.Event(), {}

    def hold():
        with cb.GpuLock(lock_path).exclusive():
            acquired.set()
            end = time.time() + seconds
            while time.time() < end and not (until and until()):
                time.sleep(0.05)
            held["met"] = bool(until and until())
            held["released"] = time.time()

    thread = threading.Thread(target=hold)
    thread.start()
    acquired.wait()
    return thread, held


def read_trace(d):
    path = d / "trace"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_fake(jobs, *flags, hold_lock_s=0.0, budgets=None, hold_until=None):
    """Runs fake jobs ((id, behaviour) or (id, behaviour, estimate)) through run_jobs with an
    InductorPath on a temporary record, on the devices of `budgets` (default: device 0, room for all),
    each with its lock file in the run's directory. With hold_lock_s, device 0's lock is held that
    long first (or until hold_until(the trace so far)). Returns (why it stopped, reporter, the
    record's level-1 entries, the trace, what the holder saw)."""
    d = tmpdir()
    budgets = budgets or {0: 1 << 40}
    args = inductor_args(d / "compiled.json", "--log-dir", str(d / "logs"), *flags)
    path = cb.InductorPath(args, SLUG, GPU, TORCH)
    path.work = fake_work
    path.opts["gpu_locks"] = {device: str(d / f"gpu{device}.lock") for device in budgets}
    path.opts["quiet_locks"] = {device: (str(d / f"gpu{device}-quiet-gate.lock"), str(d / f"gpu{device}-quiet.lock"))
                                for device in budgets}
    full = [{"level": 1, "id": j[0], "name": f"{j[0]}_Fake", "fake": j[1], "trace": str(d / "trace"),
             "estimate": j[2] if len(j) > 2 else 1, "exclusive": False, "retried": False,
             "log": str(d / "logs" / f"{j[0]}.log")} for j in jobs]
    reporter = cb.Reporter(True, path.statuses)
    holder, held = hold_gpu_lock(path.opts["gpu_locks"][0], hold_lock_s,
                                 hold_until and (lambda: hold_until(read_trace(d)))) if hold_lock_s else (None, {})
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        stopped = cb.run_jobs(full, args, path, reporter, budgets, time.time())
    if holder:
        holder.join()
    return stopped, reporter, cb.read_record(path.record).get("level1", {}), read_trace(d), held


def windows(trace, what, device=None):
    return sorted((t["start"], t["end"]) for t in trace if t["what"] == what and device in (None, t["device"]))


def disjoint(spans):
    return all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


@check
def workers_record_figures_and_reasons_as_they_finish():
    stopped, reporter, record, trace, _ = run_fake(
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
    timed = windows(trace, "timing")
    assert len(timed) == 3 and disjoint(timed), timed


@check
def waiting_for_the_gpu_lock_is_not_compile_time():
    stopped, _, record, _, _ = run_fake([(1, "ok")], "--problem-timeout-s", "1", hold_lock_s=2.5)
    assert stopped is None and cb.has_figure(record["1_Fake.py"]), record


@check
def out_of_memory_is_retried_once_alone():
    _, _, record, trace, _ = run_fake([(1, "oom"), (2, "ok")], "--jobs", "2")
    assert len(windows(trace, "attempt")) == 2, trace
    assert record["1_Fake.py"]["reason"].endswith("(run alone too)"), record
    assert "out of memory" in record["1_Fake.py"]["reason"] and cb.has_figure(record["2_Fake.py"])


@check
def time_limit_cuts_workers_off_without_recording_them():
    t0 = time.time()
    stopped, reporter, record, _, _ = run_fake([(1, "ok"), (2, "hang"), (3, "hang"), (4, "ok")],
                                               "--jobs", "2", "--time-limit-s", "4")
    assert stopped == "time limit (4 s)" and time.time() - t0 < 15
    assert set(record) == {"1_Fake.py"}, record
    assert reporter.counts["cut-off"] == 2 and reporter.counts["not-started"] == 1, reporter.counts


@check
def two_devices_each_time_under_its_own_lock():
    """Four jobs over devices 0 and 1 (which this process sees through CUDA_VISIBLE_DEVICES "5,7"):
    two on each. Device 0's lock is held until device 1 has timed both of its jobs: device 1 goes on
    meanwhile, device 0 waits."""
    def device_1_done(trace):
        return len(windows(trace, "timing", 1)) == 2

    with cuda_visible("5,7"):
        stopped, reporter, record, trace, held = run_fake(
            [(1, "ok"), (2, "ok"), (3, "ok"), (4, "ok")], "--jobs", "4", budgets={0: 1 << 40, 1: 1 << 40},
            hold_lock_s=30, hold_until=device_1_done)
    assert stopped is None and reporter.counts["figure"] == 4, reporter.counts
    on = {t["id"]: (t["device"], t["visible"]) for t in trace if t["what"] == "timing"}
    assert on == {1: (0, "5"), 2: (1, "7"), 3: (0, "5"), 4: (1, "7")}, on
    assert {pid: record[f"{pid}_Fake.py"]["device"] for pid in (1, 2)} == {1: "cuda:0", 2: "cuda:1"}
    assert held["met"], "device 1 did not time its jobs while device 0's lock was held"
    assert all(start >= held["released"] for start, _ in windows(trace, "timing", 0)), (held, trace)
    assert all(disjoint(windows(trace, "timing", device)) for device in (0, 1)), trace


@check
def a_job_goes_to_the_least_busy_device_where_it_fits():
    # Device 0 has room for one job of 2: the first goes there, the next two to device 1.
    _, _, _, trace, _ = run_fake([(1, "ok", 2), (2, "ok", 2), (3, "ok", 2)], "--jobs", "3",
                                 budgets={0: 3, 1: 100})
    on = {t["id"]: t["device"] for t in trace if t["what"] == "timing"}
    assert on == {1: 0, 2: 1, 3: 1}, on


@check
def out_of_memory_is_retried_alone_on_its_device_while_the_other_goes_on():
    """1 (out of memory) and 3 (slow) on device 0, 2 (slow) on device 1. 1 is retried alone on device
    0, once 3 is done; 4 goes meanwhile to device 1, though device 0 is as busy."""
    _, _, record, trace, _ = run_fake([(1, "oom"), (2, "slow"), (3, "slow"), (4, "ok")], "--jobs", "3",
                                      budgets={0: 1 << 40, 1: 1 << 40})
    attempts = [t for t in trace if t["what"] == "attempt"]
    assert [t["device"] for t in attempts] == [0, 0], trace
    assert record["1_Fake.py"]["reason"].endswith("(run alone too)"), record
    on = {t["id"]: t["device"] for t in trace if t["what"] == "work"}
    assert on == {2: 1, 3: 0, 4: 1}, on
    retry = (attempts[1]["start"], attempts[1]["end"])
    assert disjoint(sorted(windows(trace, "work", 0) + [retry])), trace


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
