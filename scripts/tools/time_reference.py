#!/usr/bin/env python3
"""Times reference problems' eager PyTorch models from Python with kbench's own protocol, so the
C++ timings can be checked against what Python sees.

  time_reference.py [--level L ...] [--problem P] [--problems 1:19,2:1,...] [--trials N] [--warmup N]
                    [--scripted [--fuse]] [--no-flush-l2] [--deadline-s S] [--dry-run]

The protocol is src/timing/timer.cpp's: the model as scripts/tools/export_problems.py builds it (MODEL_SEED),
on CUDA, in training mode with autograd off and torch.manual_seed(1) before every forward (as
problems::Reference::forward); inputs from the manifest's input generator under seed 1; a 2 x L2
byte buffer allocated; `--warmup` forwards, then a device synchronisation; the host cost of
synchronising the idle device, measured 5 times (minimum kept); then `--trials` trials, each: write
the buffer (L2 flush), record the start event on the current stream, forward, record the stop event,
wait for it, synchronise the device. Where that synchronisation takes more than 0.02 ms (or 2% of
the trial) beyond its idle cost, work was left on another stream, and the trial counts the wait too. Statistics as
src/timing/statistics.cpp (std is the sample std, n - 1).

--scripted times the TorchScript archive that export_problems.py made (torch.jit.load of
export_problems.archive_path, what the C++ kbench loads) instead of the Python module.
It runs op by op, as kbench runs it (torch.jit.optimized_execution(False)); --fuse lets TorchScript's
executor profile and fuse (NNC) as it does by default, to show what that changes.

One JSON object per problem on stdout (times in ms):
  {"level","id","name","mode","mean","std","min","max","median","num_trials","cv","noisy",
   "hidden_work_trials","load_ms","inputs_ms","torch","hardware","device"}
or {"level","id","name","error"} / {"level","id","name","skipped"}; exit 1 if any problem failed.
"""
import argparse
import gc
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_problems  # noqa: E402
import problem_source  # noqa: E402

INPUT_SEED = 1
FORWARD_SEED = 1
NOISY_CV = 0.10  # TimingOptions::noisy_cv
HIDDEN_WORK_MS, HIDDEN_WORK_SHARE = 0.02, 0.02  # timer.cpp's hidden_work_threshold_ms
FALLBACK_L2_BYTES = 50 * 2 ** 20  # when this torch's device properties lack L2_cache_size


def parse_problems(text):
    pairs = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            level, pid = part.split(":")
            pairs.append((int(level), int(pid)))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected LEVEL:ID[,LEVEL:ID...], got {part!r}")
    return pairs


def selected(args):
    """(level, id, path or None) in the order asked for."""
    if args.problems:
        for level, pid in args.problems:
            found = list(export_problems.problem_files([level], pid))
            if found:
                yield from found
            else:
                yield level, pid, None
    else:
        yield from export_problems.problem_files(args.level or [1, 2, 3], args.problem)


def summarize(samples):
    """src/timing/statistics.cpp: sorted min/max/median, mean, sample std (n - 1), cv."""
    n = len(samples)
    s = {"mean": 0.0, "std": 0.0, "min": 0.0, "max": 0.0, "median": 0.0, "num_trials": n, "cv": 0.0}
    if n == 0:
        return s
    xs = sorted(samples)
    s["min"], s["max"] = xs[0], xs[-1]
    s["median"] = xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])
    s["mean"] = sum(xs) / n
    sq = sum((x - s["mean"]) ** 2 for x in xs)
    s["std"] = math.sqrt(sq / (n - 1)) if n > 1 else 0.0
    s["cv"] = s["std"] / s["mean"] if s["mean"] > 0 else 0.0
    return s


def measure(run, warmup, trials, flush_l2):
    """timing::measure, in Python. Returns (trial_ms list, hidden_work_trials)."""
    import torch
    device = torch.cuda.current_device()
    l2 = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or FALLBACK_L2_BYTES)
    flush_buffer = torch.empty(2 * l2, dtype=torch.uint8, device="cuda") if l2 > 0 else None
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()

    # Host cost of synchronising an idle device: the floor of the hidden-work check.
    idle_sync = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        torch.cuda.synchronize()
        idle_sync = min(idle_sync, (time.perf_counter() - t0) * 1e3)

    samples, hidden, pattern = [], 0, 0
    for _ in range(trials):
        if flush_l2 and flush_buffer is not None:
            pattern += 1
            flush_buffer.fill_(pattern & 0xFF)  # cudaMemsetAsync(buffer, ++pattern, bytes) in C++
        start.record()
        run()
        stop.record()
        stop.synchronize()
        t0 = time.perf_counter()
        torch.cuda.synchronize()
        beyond = (time.perf_counter() - t0) * 1e3 - idle_sync
        ms = start.elapsed_time(stop)
        if beyond > max(HIDDEN_WORK_MS, HIDDEN_WORK_SHARE * ms):  # work outlasted the timed stream: count the wait for it
            hidden += 1
            ms += beyond
        samples.append(ms)
    del flush_buffer
    return samples, hidden


def mode_name(args):
    return ("scripted, fused" if args.fuse else "scripted") if args.scripted else "python"


def time_one(level, pid, path, entry, args):
    import torch
    device = torch.device("cuda")
    sha = problem_source.source_sha256(path)
    result = {"level": level, "id": pid, "name": path.stem, "mode": mode_name(args)}
    if entry is None or entry.get("sha256") != sha:
        result["error"] = "manifest entry missing or stale: run scripts/tools/export_problems.py --write-manifest"
        return result
    if export_problems.too_old(entry):
        result["skipped"] = f"needs PyTorch >= {entry['min_torch']}: {entry.get('reason', '')}"
        return result

    with torch.no_grad():
        t0 = time.perf_counter()
        if args.scripted:
            archive = export_problems.archive_path(level, path.stem, sha)
            if not archive.exists():
                result["error"] = (f"no TorchScript archive at {archive}; make it with: scripts/tools/export_problems.py "
                                   f"--level {level} --problem {pid}")
                return result
            model = torch.jit.load(str(archive), map_location=device)
        else:
            module = problem_source.load_module(path)
            model = export_problems.build_model(module).to(device)
        model.train()
        torch.cuda.synchronize()
        load_ms = (time.perf_counter() - t0) * 1e3

        t0 = time.perf_counter()
        generator = problem_source.compile_input_generator(entry["input_generator"])
        inputs = problem_source.seeded_inputs(generator, device, INPUT_SEED)
        torch.cuda.synchronize()
        inputs_ms = (time.perf_counter() - t0) * 1e3

        optimize = args.scripted and args.fuse

        def run():
            torch.manual_seed(FORWARD_SEED)
            with torch.jit.optimized_execution(optimize):
                model(*inputs)

        samples, hidden = measure(run, args.warmup, args.trials, not args.no_flush_l2)
    model = inputs = run = None  # free the GPU memory before the next problem
    gc.collect()
    torch.cuda.empty_cache()

    stats = summarize(samples)
    result.update(stats)
    result.update({"noisy": stats["cv"] > NOISY_CV, "hidden_work_trials": hidden,
                   "load_ms": round(load_ms, 3), "inputs_ms": round(inputs_ms, 3), "torch": torch.__version__,
                   "hardware": torch.cuda.get_device_name(device), "device": f"cuda:{torch.cuda.current_device()}"})
    if args.samples:
        result["trial_ms"] = samples
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--level", type=int, choices=(1, 2, 3), action="append", help="level(s); default all")
    ap.add_argument("--problem", type=int, help="one problem id (with --level)")
    ap.add_argument("--problems", type=parse_problems, help="LEVEL:ID pairs, comma separated (e.g. 1:19,2:1)")
    ap.add_argument("--trials", type=int, default=100, help="timed trials (default 100)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed forwards first (default 3)")
    ap.add_argument("--scripted", action="store_true",
                    help="time the TorchScript archive (torch.jit.load) instead of the Python module")
    ap.add_argument("--fuse", action="store_true",
                    help="with --scripted: let TorchScript's executor optimize and fuse (kbench does not)")
    ap.add_argument("--no-flush-l2", action="store_true", help="do not write the L2-sized buffer before trials")
    ap.add_argument("--samples", action="store_true", help="include every trial's time (trial_ms)")
    ap.add_argument("--deadline-s", type=float, default=None,
                    help="start no problem after this many seconds; the rest are reported skipped")
    ap.add_argument("--dry-run", action="store_true", help="list what would be timed; run nothing")
    args = ap.parse_args()
    if args.problems and (args.level or args.problem is not None):
        ap.error("--problems replaces --level/--problem")
    if args.fuse and not args.scripted:
        ap.error("--fuse needs --scripted")
    if args.trials < 1 or args.warmup < 0:
        ap.error("--trials must be at least 1 and --warmup at least 0")
    t_start = time.time()

    try:
        import torch
    except ImportError:
        print("time_reference: PyTorch is not installed for this Python; nothing to time", file=sys.stderr)
        return 1
    manifest = export_problems.read_manifest()

    if args.dry_run:
        if not torch.cuda.is_available():
            print(f"time_reference --dry-run: CUDA is not available to PyTorch {torch.__version__}: "
                  "a real run here would time nothing", file=sys.stderr)
        n = 0
        for level, pid, path in selected(args):
            n += 1
            record = {"level": level, "id": pid, "name": path.stem if path else None,
                      "mode": mode_name(args)}
            entry = manifest.get((level, pid))
            if path is None:
                record["error"] = "no such problem"
            elif entry is None or entry.get("sha256") != problem_source.source_sha256(path):
                record["error"] = "manifest entry missing or stale"
            elif export_problems.too_old(entry):
                record["skipped"] = f"needs PyTorch >= {entry['min_torch']}"
            else:
                record["input_bytes"] = entry.get("input_bytes")
                record["weight_bytes"] = entry.get("weight_bytes")
                if args.scripted:
                    archive = export_problems.archive_path(level, path.stem, entry["sha256"])
                    record["archive"] = str(archive)
                    record["archive_exists"] = archive.exists()
            print(json.dumps(record))
        print(f"time_reference --dry-run: {n} problem(s), {args.warmup} warm-up + {args.trials} trials each, "
              f"torch {torch.__version__}", file=sys.stderr)
        return 0

    if not torch.cuda.is_available():
        print(f"time_reference: CUDA is not available to PyTorch {torch.__version__}; nothing can be timed here",
              file=sys.stderr)
        return 1

    failed = 0
    for level, pid, path in selected(args):
        base = {"level": level, "id": pid, "name": path.stem if path else None}
        if path is None:
            failed += 1
            print(json.dumps({**base, "error": "no such problem"}), flush=True)
            continue
        if args.deadline_s is not None and time.time() - t_start > args.deadline_s:
            print(json.dumps({**base, "skipped": "deadline"}), flush=True)
            continue
        try:
            result = time_one(level, pid, path, manifest.get((level, pid)), args)
        except Exception as e:  # one bad problem must not stop the others
            text = str(e).strip()
            result = {**base, "error": f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"[:400]}
        if "error" in result:
            failed += 1
            gc.collect()  # the failed problem's tensors died with the exception's frames
            torch.cuda.empty_cache()
        print(json.dumps(result), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
