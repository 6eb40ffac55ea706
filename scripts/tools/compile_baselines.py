#!/usr/bin/env python3
"""Makes the compiled (torch.compile-class) baselines of the reference problems, by one of two paths.

  compile_baselines.py [--path inductor|aoti] [--level L ... | --problem P | --problems L:P ...]
                       [--jobs J] [--deadline-s S] [--time-limit-s S] [--problem-timeout-s T]
                       [--force] [--dry-run] [--json] [path options below]

--path inductor (the default): torch.compile(model) (inductor, default mode) in process, timed from
Python with kbench's protocol (scripts/tools/time_reference.py) beside a fresh eager figure of the same
model in the same worker. Every problem run gets a record in the baseline file (--record, default
baselines/<gpu>/compiled.json, KernelBench's layout, written as the C++ side writes it), written
as soon as the problem is done: a figure (with the eager mean of the same sitting, the first call's
compile time and the check against eager, flagged when it differs beyond atol/rtol) or, where there
is none, the reason (compile failed, ran past its limit, worker died). A problem that already has a
record made with this PyTorch (its "torch" field) is skipped; one made with another (or with none
noted, as an AOTInductor figure) is stale and run again (--force runs every problem again,
--retry-failed those that have only a reason), so a sitting that is cut off (--time-limit-s) keeps
what it finished and the next starts where it stopped. One sitting writes a record at a time: a
second waits for the first, then skips what the first recorded. --level selections run slowest
compiles first; --problems run in the order given (kbench asks in the order its GPUs will need
them). --compare-with-recorded writes to a side file instead (--side-record) and prints a table
against the figures already recorded (the AOTInductor ones), to compare the two paths. Needs
PyTorch >= 2.0 with CUDA. Its own options:
  [--record PATH] [--retry-failed] [--timing-timeout-s T] [--log-dir DIR]
  [--devices LIST] [--gpu-locks PATH[,PATH...]] [--compare-with-recorded [--side-record PATH]]

--path aoti [--eval]: AOTInductor packages, which kbench's worker times from C++ (--compiled recorded).
Needs PyTorch >= 2.6 with CUDA (torch.export + torch._inductor.aoti_compile_and_package). Each
problem is exported with the inputs its manifest generator makes under seed 1. Non-tensor inputs
(scalars) become constants of the package, which takes the tensor inputs only, in order; the sidecar
records their positions. A package is written to
  <cache>/aoti/<gpu>/torch-<major.minor>/level<L>/<name>.<sha256[:12]>.pt2   (+ .pt2.json sidecar)
where <cache> is export_problems.cache_dir() ($KBENCH_CACHE, default ~/.cache/kbench) and <gpu> the
CUDA device name without a leading "NVIDIA ", every other non-alphanumeric character made "_"
("NVIDIA H100 80GB HBM3" -> "H100_80GB_HBM3"). Before it is moved into place the package is loaded
back and run on the same inputs and its output compared with the eager model's; the result goes
to the sidecar. --eval exports in eval mode, a different computation for problems with BatchNorm
or Dropout.

Both paths build each problem exactly as scripts/tools/export_problems.py builds it (same MODEL_SEED, so
the same weights), on the GPU, in training mode as the C++ reference runs it (KernelBench references
run with BatchNorm batch statistics and Dropout active), and compare outputs with atol = rtol = 1e-2
or the manifest's. Problems run in parallel, --jobs at a time in all, each in its own spawned process
(a crash or an OOM in one does not stop the others) on one GPU, which the worker sees as cuda:0 (its
CUDA_VISIBLE_DEVICES names that GPU alone). The aoti path uses CUDA device 0; the inductor path
spreads its workers over --devices (CUDA ordinals as this process sees them, default 0; all of one
GPU model, as the record is one model's; a figure's "device" names the ordinal as given). A
problem's GPU memory is estimated from the manifest's input and weight bytes; each device has its
budget, and a worker starts on the device with the fewest workers among those where its estimate
still fits. One that runs out of memory anyway is retried once alone on its device (the others go
on). A failed worker's output is kept in its log.

The inductor path's workers compile at low CPU priority and leave two cores free. Each device has a
GPU lock file (--gpu-locks, in --devices' order; default <tmp>/kbench-gpu<N>-timing.lock, N the GPU
that CUDA_VISIBLE_DEVICES maps the ordinal to, as kbench's C++ side names it): a worker's timing
holds its device's lock exclusively (one problem timed at a time on a GPU) at full priority, and its
other GPU work (setup, the eager reference, the check, inductor's autotuning benchmarks) holds it
shared, so that none of it runs while another problem is timed there (only the kernels of the
compiled first call itself, a single forward, are not covered). kbench's C++ side, when it makes
baselines on demand, passes the lock files that its own evaluations hold exclusively on those GPUs:
a baseline is never timed beside a candidate, and nothing of the sitting runs on a GPU while a
candidate is timed there. The compile limit (--problem-timeout-s) counts from the worker's start to
the end of the check; waiting for the lock is not counted, and the timing has its own limit
(--timing-timeout-s).

Output: a line per problem (--json: an object with level, id, name, status, detail, seconds), then a
summary. On the inductor path, a finished problem's line of text ends with the sitting's progress,
"[12/250 done, ~8.3 min left]", and the summary tells the sitting's devices (--json: "devices").
"""
import argparse
import contextlib
import fcntl
import hashlib
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from multiprocessing.connection import wait
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_problems  # noqa: E402
import problem_source  # noqa: E402
import time_reference  # noqa: E402

DEFAULT_TOL = 1e-2
GIB = 2 ** 30
COMPARE_CHUNK = 1 << 24  # elements per slice when comparing outputs (keeps temporaries small)
TIMING_WARMUP, TIMING_TRIALS = 3, 100  # kbench's protocol (kbench baseline's defaults)
COMPILE_NICE = 10  # how much lower a compiling worker's CPU priority is than the timing's
FREE_CORES = 2  # left to the timed worker and the parent by the inductor path
INDUCTOR_PATH = "torch.compile (inductor, default mode), in process; timed from Python with kbench's protocol"
AOTI_PATH = "AOTInductor package, timed from C++ (kbench baseline --compiled)"  # as older records name it
TIMING_FIELDS = ("mean", "std", "min", "max", "median", "num_trials", "cv", "noisy", "hidden_work_trials")


# ---------------------------------------------------------------------------------------------------
# Paths (the C++ side computes the same ones)

def gpu_slug(device_name):
    """'NVIDIA H100 80GB HBM3' -> 'H100_80GB_HBM3'."""
    if device_name.startswith("NVIDIA "):
        device_name = device_name[len("NVIDIA "):]
    return re.sub(r"[^A-Za-z0-9]", "_", device_name)


def package_path(level, name, sha, slug):
    return (export_problems.cache_dir() / "aoti" / slug / f"torch-{export_problems.torch_key()}"
            / f"level{level}" / f"{name}.{sha[:12]}.pt2")


def sidecar_path(package):
    return Path(str(package) + ".json")


def log_path(package):
    return Path(str(package) + ".log")


def tmp_package_path(package, pid):
    # aoti_compile_and_package insists on a name ending in .pt2
    return package.with_name(f"{package.stem}.tmp{pid}.pt2")


def default_record(slug):
    return export_problems.ROOT / "baselines" / slug / "compiled.json"


def lock_file(kind, key=None):
    """A lock file outside the checkout (a .lock beside the record would show up in git); `key` (a
    path) makes one per file."""
    suffix = f"-{hashlib.sha1(str(key).encode()).hexdigest()[:12]}" if key is not None else ""
    return Path(tempfile.gettempdir()) / f"kbench-{kind}{suffix}.lock"


def visible_device(ordinal, visible):
    """The GPU that CUDA ordinal `ordinal` is under CUDA_VISIBLE_DEVICES `visible` (None or "": all
    GPUs), as that variable names it: ("2,3", 1) -> "3". An ordinal past the list stays as it is
    (CUDA has no such device; main refuses it), as sandbox/gpu_lock.cpp maps it."""
    entries = visible.split(",") if visible else []
    return entries[ordinal] if ordinal < len(entries) else str(ordinal)


def default_gpu_lock(ordinal, kind="timing"):
    """sandbox/gpu_lock.cpp's gpu_lock_path (kind "quiet": its quiet_gpu_lock_path): named after the
    GPU rather than the ordinal, so that processes with different CUDA_VISIBLE_DEVICES agree."""
    gpu = re.sub(r"[^A-Za-z0-9-]", "_", visible_device(ordinal, os.environ.get("CUDA_VISIBLE_DEVICES")))
    return lock_file(f"gpu{gpu}-{kind}")


# ---------------------------------------------------------------------------------------------------
# The baseline record (baselines/<gpu>/compiled.json): {"level2": {"1_Conv2D_ReLU_BiasAdd.py": {...}}}

def record_keys(level, name):
    return f"level{level}", f"{name}.py"


def read_record(path):
    """The record's document; {} when there is none. A file that is not JSON raises: it is never
    overwritten by what could be read of it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        return json.loads(text)
    except ValueError as e:
        raise ValueError(f"{path} is not JSON ({e}); fix or move it") from None


def format_record(doc):
    """As src/report/baselines.cpp writes it (nlohmann's dump(2): sorted keys, two-space indent, UTF-8
    as is). NaN is refused: nlohmann would not parse the file back, and C++ would then start it anew."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def write_record(path, doc):
    """Atomically: a reader (or a sitting cut off mid-write) sees the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_text(format_record(doc), encoding="utf-8")
    os.replace(tmp, path)


def remove_stale_tmp(path):
    """Temporary files that a killed writer left beside the record (ours end in .tmp<pid>)."""
    path = Path(path)
    for stale in path.parent.glob(f"{path.name}.tmp*"):
        if stale.name[len(path.name) + 4:].isdigit():
            stale.unlink()


def store_entry(path, level, name, entry):
    """Read afresh before each write: another writer may have added entries meanwhile."""
    doc = read_record(path)
    level_key, file_key = record_keys(level, name)
    doc.setdefault(level_key, {})[file_key] = entry
    write_record(path, doc)


def recorded_entry(doc, level, name):
    level_key, file_key = record_keys(level, name)
    return doc.get(level_key, {}).get(file_key)


def has_figure(entry):
    return entry is not None and "mean" in entry


def now_stamp():
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def figure_entry(result, created):
    """A figure: the compiled timing (time_reference's fields), what made it, and its check."""
    entry = {key: result["compiled"][key] for key in TIMING_FIELDS}
    entry.update({
        "hardware": result["hardware"], "device": result["device"], "torch": result["torch"],
        "path": INDUCTOR_PATH, "eager_mean_same_sitting": result["eager"]["mean"],
        "compile_s": round(result["compile_s"], 2), "matches_eager": result["matches_eager"],
        "max_abs_error": result["max_abs_error"], "atol": result["atol"], "rtol": result["rtol"],
        "stochastic": result["stochastic"], "created": created,
    })
    if result.get("note"):
        entry["note"] = result["note"]
    return entry


def reason_entry(reason, torch_version, hardware, created):
    """No figure, and why (no "mean": nothing reads it as a time)."""
    return {"path": INDUCTOR_PATH, "reason": reason, "torch": torch_version, "hardware": hardware,
            "created": created}


def current(entry, torch_version):
    """Whether a recorded entry was made with this PyTorch (one without "torch", as an AOTInductor
    figure, was not): a stale one is made again."""
    return entry is not None and entry.get("torch") == torch_version


def record_counts(doc, problems, torch_version):
    """(figures, reasons) among `problems` ((level, name) pairs) in the record, made with this PyTorch."""
    entries = [e for e in (recorded_entry(doc, level, name) for level, name in problems) if current(e, torch_version)]
    figures = sum(1 for e in entries if has_figure(e))
    return figures, len(entries) - figures


def throughput(done, elapsed_s, total):
    """(problems finished per wall minute, projected minutes for `total` problems at that rate or None)."""
    per_min = done / (elapsed_s / 60.0) if elapsed_s > 0 else 0.0
    return per_min, (total / per_min if per_min > 0 else None)


# ---------------------------------------------------------------------------------------------------
# Work done inside a spawned worker process (imports torch, uses the GPU)

def _flatten(value):
    if isinstance(value, (tuple, list)):
        out = []
        for v in value:
            out.extend(_flatten(v))
        return out
    return [value]


def compare_outputs(expected, got, atol, rtol):
    """(matches, max_abs_error or None when not finite, note). torch.allclose semantics with `expected`
    as `other` (NaN never matches), computed in slices so multi-GB outputs need little extra memory."""
    import math
    import torch
    exp_leaves, got_leaves = _flatten(expected), _flatten(got)
    if len(exp_leaves) != len(got_leaves):
        return False, None, f"{len(got_leaves)} outputs where eager gives {len(exp_leaves)}"
    matches, max_err = True, 0.0
    for i, (e, g) in enumerate(zip(exp_leaves, got_leaves)):
        if not isinstance(e, torch.Tensor) or not isinstance(g, torch.Tensor):
            if e != g:
                matches = False
            continue
        if tuple(e.shape) != tuple(g.shape):
            return False, None, f"output {i} has shape {tuple(g.shape)}, eager {tuple(e.shape)}"
        e, g = e.detach().reshape(-1), g.detach().reshape(-1).to(e.device)
        exact = not e.is_floating_point() or torch.float64 in (e.dtype, g.dtype)
        wide = torch.float64 if exact else torch.float32
        for start in range(0, e.numel(), COMPARE_CHUNK):
            ec = e[start:start + COMPARE_CHUNK].to(wide)
            gc_ = g[start:start + COMPARE_CHUNK].to(wide)
            # Equal values (infinities included) and NaN where eager has NaN too count as close.
            same = (ec == gc_) | (ec.isnan() & gc_.isnan())
            diff = (gc_ - ec).abs().masked_fill_(same, 0.0)
            close = same | (diff <= atol + rtol * ec.abs())
            if not bool(close.all()):
                matches = False
            chunk_max = float(diff.max()) if diff.numel() else 0.0
            if math.isnan(chunk_max) or math.isinf(chunk_max):
                max_err = float("inf")
            else:
                max_err = max(max_err, chunk_max)
            del ec, gc_, same, diff, close
    if math.isinf(max_err):
        return matches, None, "non-finite difference (NaN or inf where eager has none)"
    return matches, max_err, ""


def tolerances(entry):
    return float(entry.get("atol", DEFAULT_TOL)), float(entry.get("rtol", DEFAULT_TOL))


def make_inputs(generator, device):
    """The manifest generator's inputs under kbench's input seed, as a list (scalars included)."""
    return problem_source.seeded_inputs(generator, device, time_reference.INPUT_SEED)


def seeded_forward(model, inputs):
    """One forward with kbench's forward seed set first (as problems::Reference::forward)."""
    import torch
    torch.manual_seed(time_reference.FORWARD_SEED)
    return model(*inputs)


def compile_one(job, opts, phases):
    """--path aoti: exports, compiles, checks and installs one package; all of it is the phase
    'compile' (`phases` is not told anything). Returns a result dict."""
    import torch
    import torch._inductor

    source = Path(job["source"])
    entry = job["entry"]
    target = Path(job["package"])
    device = torch.device("cuda")
    atol, rtol = tolerances(entry)

    module = problem_source.load_module(source)
    with torch.no_grad():
        model = export_problems.build_model(module).to(device)
        model = model.eval() if opts["eval"] else model.train()
        generator = problem_source.compile_input_generator(entry["input_generator"])
        inputs = make_inputs(generator, device)
        tensor_inputs = [i for i, v in enumerate(inputs) if isinstance(v, torch.Tensor)]

        t0 = time.time()
        exported = torch.export.export(model, tuple(inputs))
        export_s = time.time() - t0

        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = tmp_package_path(target, os.getpid())
        t0 = time.time()
        written = torch._inductor.aoti_compile_and_package(exported, package_path=str(tmp))
        compile_s = time.time() - t0
        del exported
        if Path(written).resolve() != tmp.resolve():  # should not happen: we named the path
            os.replace(written, tmp)

        # Check: the package against the eager model, on the same inputs (made afresh, in case a
        # forward writes into its inputs), the same seed before each.
        expected = seeded_forward(model, inputs)
        del inputs
        inputs = make_inputs(generator, device)
        compiled = torch._inductor.aoti_load_package(str(tmp))
        # Called as the C++ side will call it: the tensor inputs only (scalars are baked in). Newer
        # loaders drop non-tensors themselves; 2.6's passes everything to a tensors-only run().
        got = seeded_forward(compiled, [inputs[i] for i in tensor_inputs])
        torch.cuda.synchronize()
        matches, max_err, note = compare_outputs(expected, got, atol, rtol)
        del expected, got, compiled

    meta = {
        "level": job["level"], "id": job["id"], "name": job["name"], "sha256": entry["sha256"],
        "torch": torch.__version__, "torch_key": export_problems.torch_key(),
        "gpu": torch.cuda.get_device_name(device), "gpu_slug": job["slug"],
        "mode": "eval" if opts["eval"] else "train",
        "num_inputs": len(inputs), "tensor_inputs": tensor_inputs,
        "export_s": round(export_s, 2), "compile_s": round(compile_s, 2),
        "max_abs_error": max_err, "matches_eager": bool(matches), "atol": atol, "rtol": rtol,
        "stochastic": bool(entry.get("stochastic", False)),
        "created": now_stamp(),
    }
    if note:
        meta["note"] = note
    os.replace(tmp, target)
    side = sidecar_path(target)
    side_tmp = side.with_name(side.name + f".tmp{os.getpid()}")
    side_tmp.write_text(json.dumps(meta, indent=1) + "\n")
    os.replace(side_tmp, side)
    return {"status": "ok", "detail": describe(meta, target), "mismatch": not matches and not meta["stochastic"]}


def check_text(meta):
    """How a compiled output compared with eager, from a sidecar or a record entry."""
    err = meta.get("max_abs_error")
    err_s = "n/a" if err is None else f"{err:.3g}"
    if meta.get("matches_eager"):
        return f"matches eager (max abs err {err_s})"
    if meta.get("stochastic"):
        return f"differs from eager as a stochastic problem may (max abs err {err_s})"
    return f"MISMATCH vs eager (max abs err {err_s}{'; ' + meta['note'] if meta.get('note') else ''})"


def describe(meta, target):
    return f"{target} [{meta.get('mode', '?')}, compile {meta.get('compile_s')}s] {check_text(meta)}"


class GpuLock:
    """A device's GPU lock: a file all workers on it open (flock, so a worker that dies releases it).
    Timing holds it exclusively; a worker's other GPU work holds it shared, so that none of it runs
    while another problem is timed on that GPU. Re-entrant within the process: inductor may
    benchmark inside a section that already holds it (a recompile during timing)."""

    def __init__(self, path):
        self.path, self.fd, self.mode, self.depth = str(path), None, None, 0

    @contextlib.contextmanager
    def hold(self, mode):
        if self.depth == 0:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, mode)
            except BaseException:
                os.close(fd)
                raise
            self.fd, self.mode = fd, mode
        elif mode == fcntl.LOCK_EX and self.mode != fcntl.LOCK_EX:
            raise RuntimeError("GPU lock: exclusive asked for while it is held shared (would deadlock)")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if self.depth == 0:
                os.close(self.fd)  # releases the lock
                self.fd, self.mode = None, None

    def shared(self):
        return self.hold(fcntl.LOCK_SH)

    def exclusive(self):
        return self.hold(fcntl.LOCK_EX)


def lock_inductor_benchmarks(gpu_lock):
    """Inductor benchmarks kernel configurations on the GPU inside a first call (the autotuning of
    reductions, even in default mode). Makes those benchmarks hold the GPU lock shared: through
    PyTorch's hook where it has one (set_gpu_benchmark_lock_context, newer than 2.11), else by
    wrapping its benchmarker's benchmark_gpu. Returns how, or None where neither exists."""
    try:
        from torch._inductor.runtime import benchmarking
    except Exception:  # not this torch's layout: run unhooked rather than fail the problem
        return None
    if hasattr(benchmarking, "set_gpu_benchmark_lock_context"):
        benchmarking.set_gpu_benchmark_lock_context(gpu_lock.shared)
        return "set_gpu_benchmark_lock_context"
    bench = getattr(benchmarking, "benchmarker", None)
    inner = getattr(bench, "benchmark_gpu", None)
    if inner is None:
        return None

    def locked(*args, **kwargs):
        with gpu_lock.shared():
            return inner(*args, **kwargs)

    bench.benchmark_gpu = locked
    return "benchmarker.benchmark_gpu wrapped"


def set_niceness(value):
    """Linux keeps a nice value per thread: sets every thread's. Raising priority needs root (the
    GPU machine's workers run as root); where it is refused, the value stays."""
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for tid in threads:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, value)
        except OSError:
            pass


class Phases:
    """Tells the parent which phase a worker is in: each phase has its own time limit there."""

    def __init__(self, conn):
        self.conn, self.current = conn, "compile"

    def enter(self, name):
        self.current = name
        self.conn.send({"phase": name})


@contextlib.contextmanager
def timing_slot(gpu_lock, quiet_paths, phases, nice):
    """The GPU to this worker alone, at full CPU priority: no other problem is timed meanwhile, the
    other workers' GPU work waits, and so does a kbench ModelNew spare's preparation of the GPU (its
    quiet lock, sandbox/gpu_lock.h). `quiet_paths`: the quiet lock's gate and lock files; timed work
    holds the gate shared while it waits for the lock, so it goes ahead of the spares' parts queued."""
    gate, quiet = (GpuLock(path) for path in quiet_paths)
    phases.enter("waiting")
    with gpu_lock.exclusive(), gate.shared(), quiet.exclusive():
        phases.enter("timing")
        set_niceness(nice)
        yield


def time_forward(model, generator, device):
    """kbench's protocol (time_reference.measure): inputs made afresh under seed 1, seed 1 before
    every forward, warm-up, L2 flush. Returns time_reference's statistics."""
    inputs = make_inputs(generator, device)
    samples, hidden = time_reference.measure(lambda: seeded_forward(model, inputs), TIMING_WARMUP,
                                             TIMING_TRIALS, True)
    stats = time_reference.summarize(samples)
    stats.update(noisy=stats["cv"] > time_reference.NOISY_CV, hidden_work_trials=hidden)
    return stats


def compile_and_time(job, opts, phases):
    """--path inductor: the eager reference output, torch.compile's first call (which compiles:
    compile_s) checked against it, then eager and compiled timed one after the other while this
    worker holds the GPU lock. All under no_grad, in training mode."""
    import torch
    entry = job["entry"]
    device = torch.device("cuda")
    atol, rtol = tolerances(entry)
    gpu_lock = GpuLock(opts["gpu_locks"][job["device"]])
    print(f"inductor's GPU benchmarks hold the GPU lock shared: {lock_inductor_benchmarks(gpu_lock)}", flush=True)
    module = problem_source.load_module(Path(job["source"]))
    generator = problem_source.compile_input_generator(entry["input_generator"])
    with torch.no_grad():
        model = export_problems.build_model(module)  # on the CPU, which may take a while: unlocked
        with gpu_lock.shared():
            model = model.to(device).train()
            expected = seeded_forward(model, make_inputs(generator, device))
            inputs = make_inputs(generator, device)  # afresh: a forward may write into its inputs
            torch.cuda.synchronize()
        compiled = torch.compile(model)
        t0 = time.perf_counter()
        got = seeded_forward(compiled, inputs)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        with gpu_lock.shared():
            matches, max_err, note = compare_outputs(expected, got, atol, rtol)
        del expected, got, inputs
        with timing_slot(gpu_lock, opts["quiet_locks"][job["device"]], phases, opts["nice"]):
            eager = time_forward(model, generator, device)
            timed = time_forward(compiled, generator, device)
    return {"status": "ok", "compiled": timed, "eager": eager, "compile_s": compile_s,
            "matches_eager": bool(matches), "max_abs_error": max_err, "note": note, "atol": atol, "rtol": rtol,
            "stochastic": bool(entry.get("stochastic", False)), "torch": torch.__version__,
            "hardware": torch.cuda.get_device_name(device), "device": f"cuda:{job['device']}"}


def error_line(e):
    """'Type: first line' of an exception; where that line only introduces the next one (as
    torch.compile's "backend='inductor' raised:" does), the next one too."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if text.endswith(":") and len(lines) > 1:
        text += " " + lines[1]
    return f"{type(e).__name__}: {text}"[:400]


def die_with_parent():
    """Linux: the kernel kills this process when the parent does (PR_SET_PDEATHSIG), so that a
    sitting whose parent was killed leaves no worker behind on the GPU."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def worker_main(job, conn, opts, work):
    """Entry point of a spawned worker: runs work(job, opts, phases) and sends its result. The worker
    leads its own process group (so that the parent can kill what it started: inductor's compile
    processes, AOTInductor's C++ compiler); its stdout/stderr (and theirs) go to the job's log."""
    # Before torch is imported (by `work`): the job's GPU becomes this process's only one, cuda:0.
    os.environ["CUDA_VISIBLE_DEVICES"] = visible_device(job["device"], os.environ.get("CUDA_VISIBLE_DEVICES"))
    os.setpgrp()
    die_with_parent()
    phases = Phases(conn)
    result = {"status": "failed", "detail": "worker ended without a result"}
    try:
        log = Path(job["log"])
        log.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(str(log), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        if "nice" in opts:  # before torch starts any thread: they all inherit it
            set_niceness(opts["nice"] + COMPILE_NICE)
        if opts.get("compile_threads") and "TORCHINDUCTOR_COMPILE_THREADS" not in os.environ:
            os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(opts["compile_threads"])
        print(f"compile_baselines worker {os.getpid()}: level{job['level']}/{job['name']}", flush=True)
        result = work(job, opts, phases)
    except BaseException as e:  # report everything, even SystemExit from deep inside a compiler
        traceback.print_exc()
        text = str(e)
        result = {"status": "failed", "detail": f"{phases.current} failed: {error_line(e)}",
                  "oom": "out of memory" in text.lower() or type(e).__name__ == "OutOfMemoryError"}
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    try:
        conn.send(result)
        conn.close()
    except Exception:
        pass
    if result.get("status") == "ok":
        try:
            Path(job["log"]).unlink()
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------------
# The two paths, as the parent sees them

def estimate_gpu_bytes(entry):
    """Rough peak: the eager model and a second copy of the weights (the package's; inductor's
    workspace), the inputs, two outputs (eager and compiled) of about the inputs' size plus
    intermediates, and a margin for the CUDA context and workspace."""
    return 2 * int(entry.get("weight_bytes", 0)) + 3 * int(entry.get("input_bytes", 0)) + 2 * GIB


def device_budgets(devices, jobs, cuda):
    """(GPU model, {ordinal: GPU memory budget in bytes}) of the CUDA ordinals `devices`, from `cuda`
    (torch.cuda; a stand-in in the test). ValueError (one line) where CUDA lacks one of them, or where
    they are not all one GPU model: a record is one model's."""
    count = cuda.device_count()
    missing = [d for d in devices if d >= count]
    if missing:
        raise ValueError(f"--devices {','.join(map(str, missing))}: no such CUDA device (this process sees "
                         f"{count})")
    names = {d: cuda.get_device_name(d) for d in devices}
    if len(set(names.values())) > 1:
        listed = ", ".join(f"{d}: {name}" for d, name in names.items())
        raise ValueError(f"--devices are not all one GPU model ({listed}); a record is one model's")
    # Each worker's CUDA context costs some, and any number of the --jobs may be on one device.
    return names[devices[0]], {d: max(GIB, int(0.9 * cuda.get_device_properties(d).total_memory) - jobs * GIB)
                               for d in devices}


def slowest_first(problems, manifest):
    """Level 3, then 2, then 1, each by weight bytes, largest first: the longest compiles start early
    in a sitting, never just before it ends."""
    def key(problem):
        level, pid = problem[0], problem[1]
        return -level, -int((manifest.get((level, pid)) or {}).get("weight_bytes", 0)), pid
    return sorted(problems, key=key)


class AotiPath:
    """--path aoti: packages into the cache; kbench's worker times them (--compiled recorded)."""
    name, min_torch = "aoti", (2, 6)
    statuses = ("ok", "cached", "skipped", "failed")
    finished = ()  # its lines tell no progress

    def __init__(self, args, slug):
        self.args, self.slug = args, slug
        self.work = compile_one
        self.opts = {"eval": args.eval, "compile_threads": max(1, (os.cpu_count() or 1) // args.jobs)}
        self.limits = {"compile": args.problem_timeout_s}

    def where(self):
        return f"cache {export_problems.cache_dir()}"

    def order(self, problems, manifest):
        return problems

    def existing(self, level, name, entry):
        target = package_path(level, name, entry["sha256"], self.slug)
        side = sidecar_path(target)
        if not (target.exists() and side.exists()):
            return None
        try:
            return "cached", describe(json.loads(side.read_text()), target)
        except (OSError, ValueError):
            return "cached", str(target)

    def job_fields(self, level, name, entry):
        target = package_path(level, name, entry["sha256"], self.slug)
        return {"package": str(target), "log": str(log_path(target)), "detail": str(target)}

    def sitting(self):
        return contextlib.nullcontext()

    def cleanup(self, job, pid):
        tmp = tmp_package_path(Path(job["package"]), pid)
        if tmp.exists():
            tmp.unlink()

    def deliver(self, job, result, seconds, reporter):
        detail = result["detail"]
        if result["status"] == "failed":
            detail += f" (log: {job['log']})"
        if result.get("mismatch"):
            reporter.mismatched += 1
        reporter.emit(job["level"], job["id"], job["name"], result["status"], detail, seconds,
                      {"package": job["package"]})


class InductorPath:
    """--path inductor: torch.compile in process, timed in the worker; records as they finish."""
    name, min_torch = "inductor", (2, 0)
    statuses = ("figure", "reason", "recorded", "has-reason", "skipped", "cut-off", "not-started")
    finished = ("figure", "reason")  # a sitting's job ends in one of these: its line tells the progress

    def __init__(self, args, slug, gpu_name, torch_version):
        self.args, self.slug, self.gpu_name, self.torch_version = args, slug, gpu_name, torch_version
        self.main_record = Path(args.record) if args.record else default_record(slug)
        self.record = self.main_record
        if args.compare_with_recorded:
            self.record = Path(args.side_record) if args.side_record else \
                export_problems.cache_dir() / "compiled-compare" / slug / "compiled.json"
        self.log_dir = Path(args.log_dir) if args.log_dir else export_problems.cache_dir() / "compiled-logs" / slug
        self.doc = read_record(self.record)
        self.work = compile_and_time
        usable = max(1, (os.cpu_count() or 1) - FREE_CORES)
        self.opts = {"compile_threads": max(1, usable // args.jobs),
                     "gpu_locks": dict(zip(args.devices, args.gpu_locks)),
                     "quiet_locks": {d: (str(default_gpu_lock(d, "quiet-gate")), str(default_gpu_lock(d, "quiet")))
                                     for d in args.devices},
                     "nice": os.getpriority(os.PRIO_PROCESS, 0)}
        self.limits = {"compile": args.problem_timeout_s, "timing": args.timing_timeout_s}

    def where(self):
        return f"record {self.record}"

    def order(self, problems, manifest):
        # --problems come in the order kbench's GPUs will need them
        return problems if self.args.problems else slowest_first(problems, manifest)

    def existing(self, level, name, entry):
        recorded = recorded_entry(self.doc, level, name)
        if not current(recorded, self.torch_version):
            return None
        if has_figure(recorded):
            return "recorded", f"{recorded['mean']:.4g} ms, {recorded.get('path', 'path not recorded')}"
        if not self.args.retry_failed:
            return "has-reason", recorded.get("reason", "no figure, no reason given")
        return None

    def job_fields(self, level, name, entry):
        recorded = recorded_entry(self.doc, level, name)
        stale = recorded is not None and not current(recorded, self.torch_version)
        return {"log": str(self.log_dir / f"level{level}_{name}.log"),
                "detail": f"recorded with torch {recorded.get('torch', 'unknown')}: stale" if stale else ""}

    @contextlib.contextmanager
    def sitting(self):
        """One sitting at a time per record: a second would redo the first's problems and race its
        writes. It waits for the first instead, then skips what the first recorded."""
        fd = os.open(str(lock_file("record", self.record.resolve())), os.O_RDWR | os.O_CREAT, 0o666)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                print(f"compile_baselines: waiting for another sitting writing {self.record}", file=sys.stderr,
                      flush=True)
                fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:  # interrupted while waiting
            os.close(fd)
            raise
        try:
            remove_stale_tmp(self.record)
            self.doc = read_record(self.record)  # what the sitting that held the lock before wrote
            yield
        finally:
            os.close(fd)

    def cleanup(self, job, pid):
        pass  # a worker writes nothing but its log; the parent writes the record

    def deliver(self, job, result, seconds, reporter):
        created = now_stamp()
        if result["status"] == "ok":
            entry = figure_entry(result, created)
            status = "figure"
            detail = (f"compiled {entry['mean']:.4g} ms, eager {entry['eager_mean_same_sitting']:.4g} ms "
                      f"(speedup {entry['eager_mean_same_sitting'] / entry['mean']:.2f}x), "
                      f"compile {entry['compile_s']:.0f} s, {check_text(entry)}")
            if not entry["matches_eager"] and not entry["stochastic"]:
                reporter.mismatched += 1
        else:
            reason = result["detail"]
            if result.get("oom") and job["retried"]:
                reason += " (run alone too)"
            entry = reason_entry(reason, self.torch_version, self.gpu_name, created)
            status, detail = "reason", f"{reason} (log: {job['log']})"
        store_entry(self.record, job["level"], job["name"], entry)
        reporter.emit(job["level"], job["id"], job["name"], status, detail, seconds)


# ---------------------------------------------------------------------------------------------------
# Planning and scheduling (parent process)

def plan(args, manifest, path):
    """Yields (level, pid, name, status, detail, job) in the order the problems would run: status
    'run' (with its job), or why not ('skipped', or the path's own: 'cached', 'recorded', ...)."""
    for level, pid, source in path.order(list(time_reference.selected(args)), manifest):
        if source is None:
            yield level, pid, None, "skipped", "no such problem", None
            continue
        entry = manifest.get((level, pid))
        name = source.stem
        if entry is None or entry.get("sha256") != problem_source.source_sha256(source):
            yield level, pid, name, "skipped", \
                "manifest entry missing or stale: run scripts/tools/export_problems.py --write-manifest", None
            continue
        if export_problems.too_old(entry):
            yield level, pid, name, "skipped", f"needs PyTorch >= {entry['min_torch']}: {entry.get('reason', '')}", None
            continue
        if args.max_weight_bytes is not None and entry.get("weight_bytes", 0) > args.max_weight_bytes:
            yield level, pid, name, "skipped", \
                f"weights of {entry['weight_bytes'] / GIB:.1f} GiB exceed --max-weight-bytes", None
            continue
        done = None if args.force else path.existing(level, name, entry)
        if done:
            yield (level, pid, name) + done + (None,)
            continue
        job = {"level": level, "id": pid, "name": name, "source": str(source), "entry": entry,
               "slug": path.slug, "estimate": estimate_gpu_bytes(entry),
               "exclusive": False, "retried": False}
        job.update(path.job_fields(level, name, entry))
        yield level, pid, name, "run", job["detail"], job


class Reporter:
    def __init__(self, as_json, statuses, finished=()):
        self.as_json = as_json
        self.counts = {status: 0 for status in statuses}
        self.mismatched = 0
        self.finished = finished  # the statuses that end a job of the sitting
        self.jobs, self.started = 0, time.time()

    def begin(self, jobs):
        """The sitting's `jobs` jobs start now (after any wait for another sitting)."""
        self.jobs, self.started = jobs, time.time()

    def progress(self):
        """'  [12/250 done, ~8.3 min left]': the rest at the rate of the sitting so far."""
        done = sum(self.counts[s] for s in self.finished)
        _, left_min = throughput(done, time.time() - self.started, self.jobs - done)
        return f"  [{done}/{self.jobs} done" + (f", ~{left_min:.1f} min left]" if left_min is not None else "]")

    def emit(self, level, pid, name, status, detail, seconds, extra=None):
        self.counts[status] = self.counts.get(status, 0) + 1
        if self.as_json:
            record = {"level": level, "id": pid, "name": name, "status": status, "detail": detail,
                      "seconds": round(seconds, 2)}
            record.update(extra or {})
            print(json.dumps(record), flush=True)
        else:
            progress = self.progress() if status in self.finished else ""
            print(f"{status:10s} level{level}/{name}  {seconds:.1f}s  {detail}{progress}", flush=True)

    def emit_many(self, jobs, status, detail):
        """Problems that share an outcome (not started at the deadline): one line of text for all."""
        if self.as_json:
            for job in jobs:
                self.emit(job["level"], job["id"], job["name"], status, detail, 0.0)
            return
        if not jobs:
            return
        self.counts[status] = self.counts.get(status, 0) + len(jobs)
        names = ", ".join(f"level{j['level']}/{j['name']}" for j in jobs[:4])
        more = f" and {len(jobs) - 4} more" if len(jobs) > 4 else ""
        print(f"{status:10s} {len(jobs)} problem(s) ({detail}): {names}{more}", flush=True)


class Running:
    """A started worker: its job, its process and the phase it is in."""

    def __init__(self, job, proc):
        self.job, self.proc = job, proc
        self.started = self.since = time.time()
        self.phase = "compile"

    def enter(self, phase):
        self.phase, self.since = phase, time.time()

    def overdue(self, limits, now):
        """The limit of the current phase if the worker has run past it, else None (a phase without
        a limit, such as waiting for the GPU lock, never is)."""
        limit = limits.get(self.phase)
        return limit if limit and now - self.since > limit else None


def stop(proc):
    """Kills a worker and what it started (it leads its own process group, once it has started)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.join()


def run_jobs(jobs, args, path, reporter, budgets, t_start):
    """Runs the jobs in spawned workers, --jobs at a time in all, each on one device of `budgets`
    ({CUDA ordinal: GPU memory budget}) within that device's budget, handing each result to
    path.deliver. Returns None, or why the sitting was cut off ('time limit (S s)', 'interrupted'):
    the running workers are then killed and not delivered, so the next sitting redoes them."""
    ctx = multiprocessing.get_context("spawn")
    pending = list(jobs)
    running = {}  # receiving connection -> Running

    def on(device):
        return [r.job for r in running.values() if r.job["device"] == device]

    def fits(job, device):
        budget = budgets[device]
        return sum(j["estimate"] for j in on(device)) + min(job["estimate"], budget) <= budget

    def pick():
        """(job, device) to start next, or None."""
        if len(running) >= args.jobs:
            return None
        # A job to be run alone keeps its device: nothing else starts there until it has run.
        held = {j["device"] for j in pending if j["exclusive"]} | \
               {r.job["device"] for r in running.values() if r.job["exclusive"]}
        for k, job in enumerate(pending):
            if job["exclusive"]:
                if not on(job["device"]):
                    return pending.pop(k), job["device"]
                continue
            free = [d for d in budgets if d not in held and fits(job, d)]
            if free:
                return pending.pop(k), min(free, key=lambda d: len(on(d)))  # the first of the least busy
        return None

    def start(job, device):
        job["device"] = device
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=worker_main, args=(job, send, path.opts, path.work),
                           name=f"{path.name}-{job['name']}")
        proc.start()
        send.close()
        running[recv] = Running(job, proc)

    def finish(conn, result):
        run = running.pop(conn)
        job, proc = run.job, run.proc
        proc.join(timeout=30)
        if proc.is_alive():
            stop(proc)
        if result is None:
            code = proc.exitcode
            why = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            result = {"status": "failed", "detail": f"worker died ({why})"}
        path.cleanup(job, proc.pid)
        if result["status"] == "failed" and result.get("oom") and not job["retried"]:
            # Out of memory, perhaps only because others held the GPU: once more, alone on it.
            job["exclusive"], job["retried"] = True, True
            pending.insert(0, job)
            if not args.json:
                print(f"retry      level{job['level']}/{job['name']}  out of GPU memory; again, alone on "
                      f"cuda:{job['device']}", flush=True)
            return
        path.deliver(job, result, time.time() - run.started, reporter)

    def cut_off(why):
        for conn, run in list(running.items()):
            stop(run.proc)
            conn.close()
            path.cleanup(run.job, run.proc.pid)
            reporter.emit(run.job["level"], run.job["id"], run.job["name"], "cut-off",
                          f"{why} in its {run.phase} phase; not recorded (the next sitting runs it)",
                          time.time() - run.started)
        running.clear()
        reporter.emit_many(pending, "not-started", why)
        pending.clear()

    try:
        while pending or running:
            elapsed = time.time() - t_start
            if args.time_limit_s is not None and elapsed > args.time_limit_s:
                cut_off(f"time limit ({args.time_limit_s:g} s)")
                return f"time limit ({args.time_limit_s:g} s)"
            if pending and args.deadline_s is not None and elapsed > args.deadline_s:
                reporter.emit_many(pending, "not-started", f"deadline ({args.deadline_s:g} s)")
                pending.clear()
            while pending:
                picked = pick()
                if picked is None:
                    break
                start(*picked)
            if not running:
                continue
            for conn in wait(list(running), timeout=0.5):
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    message = None
                if message is not None and "phase" in message:
                    running[conn].enter(message["phase"])
                    continue
                conn.close()
                finish(conn, message)
            now = time.time()
            for conn, run in list(running.items()):
                limit = run.overdue(path.limits, now)
                if limit is not None:
                    stop(run.proc)
                    conn.close()
                    finish(conn, {"status": "failed", "detail": f"ran past {limit:g} s ({run.phase} limit)"})
    except KeyboardInterrupt:
        cut_off("interrupted")
        return "interrupted"
    return None


# ---------------------------------------------------------------------------------------------------

def reexec_with_compiler_libstdcxx():
    """Loading a package from Python crashed on the H100 machine (PyTorch 2.11, g++ 13): a stack
    overflow in std::regex, called by the package's own parse_device_str, when the .so's libstdc++
    calls resolved through the Python process. With the C++ compiler's libstdc++ preloaded (the one
    the package was built against, and the one the C++ kbench links) the package loads. The script
    re-executes itself once with it preloaded; its spawned workers inherit the environment."""
    if os.environ.get("KBENCH_LIBSTDCXX_PRELOADED"):
        return
    try:
        lib = subprocess.run(["c++", "-print-file-name=libstdc++.so.6"], capture_output=True, text=True,
                             check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return  # no compiler: AOTInductor cannot build packages here anyway, and says so itself
    if not os.path.isabs(lib) or not os.path.exists(lib):
        return
    env = dict(os.environ, KBENCH_LIBSTDCXX_PRELOADED="1")
    env["LD_PRELOAD"] = ":".join(p for p in (lib, os.environ.get("LD_PRELOAD", "")) if p)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--path", choices=("inductor", "aoti"), default="inductor",
                    help="inductor: torch.compile in process, timed from Python, recorded (default); "
                         "aoti: AOTInductor packages, timed by kbench's worker")
    ap.add_argument("--level", type=int, choices=(1, 2, 3), action="append", help="level(s); default all")
    ap.add_argument("--problem", type=int, help="one problem id (with --level)")
    ap.add_argument("--problems", nargs="+", metavar="L:P",
                    help="these problems, e.g. 2:1 2:3 3:4 (or 2:1,2:3); replaces --level/--problem")
    ap.add_argument("--max-weight-bytes", type=float, default=None, help="skip models with more weight bytes")
    ap.add_argument("--jobs", type=int, default=None,
                    help=f"problems at once, each in its own process (default: inductor min(12, CPUs - {FREE_CORES}), "
                         "aoti min(8, CPUs))")
    ap.add_argument("--deadline-s", type=float, default=None,
                    help="start no problem after this many seconds (the rest: not-started)")
    ap.add_argument("--time-limit-s", type=float, default=None,
                    help="after this many seconds kill the running workers without recording them (the next "
                         "sitting redoes them), and end")
    ap.add_argument("--problem-timeout-s", type=float, default=None,
                    help="kill a problem's worker that compiles longer than this (recorded as ran past it; "
                         "default: inductor 300, aoti none)")
    ap.add_argument("--force", action="store_true", help="run problems that already have a package or record")
    ap.add_argument("--dry-run", action="store_true", help="list what would run, and where; run nothing")
    ap.add_argument("--gpu-name", help="with --dry-run: GPU name to compute paths for (default: the CUDA device's)")
    ap.add_argument("--json", action="store_true", help="one JSON object per problem on stdout")
    inductor = ap.add_argument_group("--path inductor")
    inductor.add_argument("--record", help="the baseline file (default baselines/<gpu>/compiled.json)")
    inductor.add_argument("--retry-failed", action="store_true",
                          help="also run problems whose record has a reason but no figure")
    inductor.add_argument("--timing-timeout-s", type=float, default=180.0,
                          help="limit on timing eager and compiled, once the GPU lock is held (default 180; "
                               "the slowest problem takes about 30 s)")
    inductor.add_argument("--log-dir", help="failed workers' logs (default <cache>/compiled-logs/<gpu>)")
    inductor.add_argument("--devices", metavar="LIST",
                          help="CUDA ordinals (as this process sees them, e.g. 0,1) to spread the workers over, "
                               "all of one GPU model (default 0)")
    inductor.add_argument("--gpu-locks", metavar="PATH[,PATH...]",
                          help="the GPU lock file of each of --devices, in order (default "
                               f"{lock_file('gpu<N>-timing')}, N the GPU as CUDA_VISIBLE_DEVICES names it)")
    inductor.add_argument("--compare-with-recorded", action="store_true",
                          help="record into --side-record instead, then print a table against the record's figures")
    inductor.add_argument("--side-record",
                          help="with --compare-with-recorded (default <cache>/compiled-compare/<gpu>/compiled.json)")
    aoti = ap.add_argument_group("--path aoti")
    aoti.add_argument("--eval", action="store_true",
                      help="export in eval mode (default: training mode, as kbench runs the reference)")
    args = ap.parse_args(argv)

    inductor_only = [o for o, v in (("--record", args.record), ("--retry-failed", args.retry_failed),
                                    ("--log-dir", args.log_dir), ("--side-record", args.side_record),
                                    ("--compare-with-recorded", args.compare_with_recorded),
                                    ("--devices", args.devices), ("--gpu-locks", args.gpu_locks)) if v]
    if args.path == "aoti" and inductor_only:
        ap.error(f"{', '.join(inductor_only)}: for --path inductor only")
    if args.path == "inductor" and args.eval:
        ap.error("--eval: for --path aoti only")
    if args.side_record and not args.compare_with_recorded:
        ap.error("--side-record goes with --compare-with-recorded")
    if args.problems:
        if args.level or args.problem is not None:
            ap.error("--problems replaces --level/--problem")
        try:
            args.problems = time_reference.parse_problems(",".join(args.problems))
        except argparse.ArgumentTypeError as e:
            ap.error(str(e))
    cpus = os.cpu_count() or 1
    if args.jobs is None:
        args.jobs = min(12, max(1, cpus - FREE_CORES)) if args.path == "inductor" else min(8, cpus)
    if args.problem_timeout_s is None and args.path == "inductor":
        args.problem_timeout_s = 300.0
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.gpu_name and not args.dry_run:
        ap.error("--gpu-name only applies to --dry-run (a real run uses the CUDA device's name)")
    args.devices = parse_devices(ap, "0" if args.devices is None else args.devices)
    if args.gpu_locks is None:
        args.gpu_locks = [str(default_gpu_lock(d)) for d in args.devices]
    else:
        args.gpu_locks = args.gpu_locks.split(",")
        if len(args.gpu_locks) != len(args.devices) or not all(args.gpu_locks):
            ap.error(f"--gpu-locks: one lock file per device of --devices ({len(args.devices)}), comma-separated")
    return args


def parse_devices(ap, text):
    """'0,1' -> [0, 1]; anything else than distinct ordinals is a usage error."""
    try:
        devices = [int(d) for d in text.split(",")]
    except ValueError:
        ap.error(f"--devices: expected CUDA ordinals such as 0,1, got {text!r}")
    if any(d < 0 for d in devices) or len(set(devices)) != len(devices):
        ap.error(f"--devices: expected distinct CUDA ordinals such as 0,1, got {text!r}")
    return devices


def print_dry_run(args, planned, path, version, slug, notes):
    for n in notes:
        print(f"compile_baselines --dry-run: {n}", file=sys.stderr if args.json else sys.stdout)
    counts = {}
    for level, pid, name, status, detail, job in planned:
        shown = "would-compile" if status == "run" else status
        counts[shown] = counts.get(shown, 0) + 1
        if args.json:
            record = {"level": level, "id": pid, "name": name, "status": shown, "detail": detail}
            if job:
                record["estimated_gpu_bytes"] = job["estimate"]
            print(json.dumps(record))
        else:
            extra = f"  (est. {job['estimate'] / GIB:.1f} GiB GPU)" if job else ""
            print(f"{shown:13s} level{level}/{name}{'  ' + detail if detail else ''}{extra}")
    if args.json:
        print(json.dumps({"summary": counts, "dry_run": True, "path": path.name, "torch": version,
                          "gpu_slug": slug, "where": path.where(), "notes": notes}))
    else:
        summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        print(f"compile_baselines --dry-run (--path {path.name}, torch {export_problems.torch_key()}, gpu {slug}, "
              f"{path.where()}): {summary or 'nothing'}")


def all_problems():
    return [(level, source.stem) for level, _, source in export_problems.problem_files([1, 2, 3])]


def print_aoti_summary(args, reporter, version, gpu_name, elapsed_s):
    counts = reporter.counts
    if args.json:
        print(json.dumps({"summary": counts, "mismatched": reporter.mismatched, "torch": version,
                          "gpu": gpu_name, "cache": str(export_problems.cache_dir()),
                          "seconds": round(elapsed_s, 1)}), flush=True)
    else:
        line = ", ".join(f"{v} {k}" for k, v in counts.items())
        if reporter.mismatched:
            line += f" ({reporter.mismatched} ok but not matching eager)"
        print(f"compile_baselines (torch {version}, {gpu_name}, cache {export_problems.cache_dir()}, "
              f"{elapsed_s:.0f}s): {line}", flush=True)


def print_sitting_summary(args, path, reporter, elapsed_s, stopped):
    """One line, key=value, to compare sittings (and --jobs values) at a glance."""
    counts = reporter.counts
    done = counts["figure"] + counts["reason"]
    problems = all_problems()
    total = len(problems)
    per_min, all_min = throughput(done, elapsed_s, total)
    figures, reasons = record_counts(read_record(path.record), problems, path.torch_version)
    remaining_min = (total - figures - reasons) / per_min if per_min > 0 else None

    def minutes(m):
        return "n/a" if m is None else f"{m:.1f}"

    fields = {"path": "inductor", "jobs": args.jobs, "done": done, "figures": counts["figure"],
              "reasons": counts["reason"], "mismatches": reporter.mismatched, "cut_off": counts["cut-off"],
              "not_started": counts["not-started"], "elapsed_min": f"{elapsed_s / 60:.1f}",
              "per_min": f"{per_min:.2f}", f"all_{total}_min": minutes(all_min),
              "remaining_min": minutes(remaining_min),
              "records": f"{figures + reasons}/{total}", "records_figures": figures, "records_reasons": reasons,
              "stopped": (stopped or "finished").replace(" ", "_")}
    if args.json:
        print(json.dumps({"summary": fields, "record": str(path.record), "devices": args.devices}), flush=True)
    else:
        line = " ".join(f"{k}={v}" for k, v in fields.items())
        print(f"compile_baselines summary: {line} devices={','.join(map(str, args.devices))} record={path.record}",
              flush=True)


def print_comparison(path, planned):
    """The problems of this comparison: recorded figure, inductor figure, eager of the same sitting,
    their ratio, and what made the recorded figure (or why either has none)."""
    recorded, side = read_record(path.main_record), read_record(path.record)

    def mean(entry):
        return entry["mean"] if has_figure(entry) else None

    def ms(value):
        return "-" if value is None else f"{value:.4f}"

    print(f"{'problem':50s} {'recorded ms':>12s} {'inductor ms':>12s} {'eager ms':>10s} {'ind/rec':>8s}  recorded by")
    for level, _, name, _, _, _ in planned:
        if name is None:
            continue
        old, new = recorded_entry(recorded, level, name), recorded_entry(side, level, name)
        eager = new.get("eager_mean_same_sitting") if has_figure(new) else None
        ratio = f"{mean(new) / mean(old):.2f}" if mean(old) and mean(new) else "-"
        source = "no record" if old is None else old.get("path", "path not recorded")
        if old is not None and not has_figure(old):
            source += f", no figure: {old.get('reason')}"
        if new is not None and not has_figure(new):
            source += f"; inductor: {new.get('reason')}"
        print(f"{f'level{level}/{name}':50s} {ms(mean(old)):>12s} {ms(mean(new)):>12s} {ms(eager):>10s} "
              f"{ratio:>8s}  {source}")


def interrupt(signum, frame):
    """SIGTERM (a sitting ended from outside) stops the workers as Ctrl-C does; the records stay."""
    raise KeyboardInterrupt


def main():
    args = parse_args()
    t_start = time.time()
    if args.path == "aoti" and not args.dry_run:
        reexec_with_compiler_libstdcxx()

    try:
        import torch
    except ImportError:
        print("compile_baselines: PyTorch is not installed for this Python; nothing to do")
        return 0
    version = torch.__version__
    min_torch = AotiPath.min_torch if args.path == "aoti" else InductorPath.min_torch
    old = export_problems.version_tuple(export_problems.torch_key()) < min_torch
    cuda = torch.cuda.is_available()
    need = ".".join(map(str, min_torch))

    if not args.dry_run:
        if old:
            print(f"compile_baselines: PyTorch {version} is older than {need} (needed by --path {args.path}); "
                  "nothing to do")
            return 0
        if not cuda:
            print(f"compile_baselines: CUDA is not available to PyTorch {version}; nothing can be compiled and "
                  "timed here; nothing to do")
            return 0

    gpu_name, budgets = args.gpu_name, None
    if cuda:
        try:
            name, budgets = device_budgets(args.devices, args.jobs, torch.cuda)
        except ValueError as e:
            print(f"compile_baselines: {e}", file=sys.stderr)
            return 2
        gpu_name = gpu_name or name
    slug = gpu_slug(gpu_name) if gpu_name else "<gpu>"
    try:
        path = AotiPath(args, slug) if args.path == "aoti" else InductorPath(args, slug, gpu_name, version)
    except ValueError as e:  # a record that is not JSON
        print(f"compile_baselines: {e}", file=sys.stderr)
        return 1
    manifest = export_problems.read_manifest()

    if args.dry_run:
        notes = []
        if old:
            notes.append(f"PyTorch {version} is older than {need}: a real run here would do nothing")
        if not cuda:
            notes.append("CUDA is not available: a real run here would do nothing")
        if not gpu_name:
            notes.append("paths show <gpu> for the device name (give --gpu-name to fill it in)")
        print_dry_run(args, list(plan(args, manifest, path)), path, version, slug, notes)
        return 0

    signal.signal(signal.SIGTERM, interrupt)
    reporter = Reporter(args.json, path.statuses, path.finished)
    try:
        with path.sitting():
            planned = list(plan(args, manifest, path))
            jobs = []
            for level, pid, name, status, detail, job in planned:
                if status == "run":
                    jobs.append(job)
                else:
                    reporter.emit(level, pid, name, status, detail, 0.0)
            reporter.begin(len(jobs))
            stopped = run_jobs(jobs, args, path, reporter, budgets, t_start) if jobs else None
    except KeyboardInterrupt:  # while waiting for another sitting: nothing was started
        return 130

    interrupted = 130 if stopped == "interrupted" else 0
    if args.path == "aoti":
        print_aoti_summary(args, reporter, version, gpu_name, time.time() - t_start)
        return interrupted or (1 if reporter.counts["failed"] else 0)
    print_sitting_summary(args, path, reporter, time.time() - reporter.started, stopped)
    if args.compare_with_recorded:
        print_comparison(path, planned)
    return interrupted  # a reason recorded is a result, not a failure of this script


if __name__ == "__main__":
    sys.exit(main())
