#!/usr/bin/env python3
"""Makes AOTInductor packages of the reference problems: the compiled (torch.compile-class) baseline
that the C++ kbench times beside the eager TorchScript reference.

  compile_baselines.py [--level L ...] [--problem P] [--max-weight-bytes N] [--jobs J]
                       [--deadline-s S] [--problem-timeout-s T] [--eval] [--force] [--dry-run] [--json]

Needs PyTorch >= 2.6 with CUDA (torch.export + torch._inductor.aoti_compile_and_package). Each problem
is built exactly as scripts/export_problems.py builds it (same MODEL_SEED, so the same weights), moved
to the GPU, and exported with the inputs its manifest generator makes under seed 1. Non-tensor inputs
(scalars) become constants of the package, which takes the tensor inputs only, in order; the sidecar
records their positions. A package is written to

  <cache>/aoti/<gpu>/torch-<major.minor>/level<L>/<name>.<sha256[:12]>.pt2   (+ .pt2.json sidecar)

where <cache> is export_problems.cache_dir() ($KBENCH_CACHE, default ~/.cache/kbench) and <gpu> the
CUDA device name without a leading "NVIDIA ", every other non-alphanumeric character made "_"
("NVIDIA H100 80GB HBM3" -> "H100_80GB_HBM3"). Before it is moved into place the package is loaded
back and run on the same inputs; its output is compared with the eager model's (atol = rtol = 1e-2 or
the manifest's) and the result written to the sidecar.

The model is exported in training mode, as the C++ reference runs it (problems::Reference calls
train(): KernelBench references run with BatchNorm batch statistics and Dropout active); --eval
exports it in eval mode instead, which is a different computation for those problems.

Problems compile in parallel, --jobs at a time, each in its own spawned process (a crash or an OOM
in one does not stop the others). A problem's GPU memory is estimated from the manifest's input and
weight bytes and jobs are admitted only while the estimates fit the GPU; one that runs out of memory
anyway is retried once alone. A failed worker's output is kept in <package>.log.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_problems  # noqa: E402
import problem_source  # noqa: E402

MIN_TORCH = (2, 6)
DEFAULT_TOL = 1e-2
GIB = 2 ** 30
COMPARE_CHUNK = 1 << 24  # elements per slice when comparing outputs (keeps temporaries small)


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


def compile_one(job, opts):
    """Exports, compiles, checks and installs one package. Returns a result dict."""
    import torch
    import torch._inductor

    source = Path(job["source"])
    entry = job["entry"]
    target = Path(job["package"])
    device = torch.device("cuda")
    atol, rtol = float(entry.get("atol", DEFAULT_TOL)), float(entry.get("rtol", DEFAULT_TOL))

    module = problem_source.load_module(source)
    with torch.no_grad():
        model = export_problems.build_model(module).to(device)
        model = model.eval() if opts["eval"] else model.train()
        generator = problem_source.compile_input_generator(entry["input_generator"])
        torch.manual_seed(1)
        made = generator(device)
        inputs = list(made) if isinstance(made, (tuple, list)) else [made]
        del made
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
        torch.manual_seed(1)
        expected = model(*inputs)
        del inputs
        torch.manual_seed(1)
        made = generator(device)
        inputs = list(made) if isinstance(made, (tuple, list)) else [made]
        del made
        compiled = torch._inductor.aoti_load_package(str(tmp))
        torch.manual_seed(1)
        # Called as the C++ side will call it: the tensor inputs only (scalars are baked in). Newer
        # loaders drop non-tensors themselves; 2.6's passes everything to a tensors-only run().
        got = compiled(*[inputs[i] for i in tensor_inputs])
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
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    if note:
        meta["note"] = note
    os.replace(tmp, target)
    side = sidecar_path(target)
    side_tmp = side.with_name(side.name + f".tmp{os.getpid()}")
    side_tmp.write_text(json.dumps(meta, indent=1) + "\n")
    os.replace(side_tmp, side)
    return {"status": "ok", "detail": describe(meta, target), "mismatch": not matches and not meta["stochastic"]}


def describe(meta, target):
    err = meta.get("max_abs_error")
    err_s = "n/a" if err is None else f"{err:.3g}"
    if meta.get("matches_eager"):
        check = f"matches eager (max abs err {err_s})"
    elif meta.get("stochastic"):
        check = f"differs from eager as a stochastic problem may (max abs err {err_s})"
    else:
        check = f"MISMATCH vs eager (max abs err {err_s}{'; ' + meta['note'] if meta.get('note') else ''})"
    compile_s = meta.get("compile_s")
    return f"{target} [{meta.get('mode', '?')}, compile {compile_s}s] {check}"


def worker_main(job, conn, opts):
    """Entry point of a spawned worker: its stdout/stderr (and the C++ compiler's) go to the log."""
    result = {"status": "failed", "detail": "worker ended without a result"}
    try:
        log = log_path(Path(job["package"]))
        log.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(str(log), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        if opts.get("compile_threads") and "TORCHINDUCTOR_COMPILE_THREADS" not in os.environ:
            os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = str(opts["compile_threads"])
        print(f"compile_baselines worker {os.getpid()}: level{job['level']}/{job['name']}", flush=True)
        result = compile_one(job, opts)
    except BaseException as e:  # report everything, even SystemExit from deep inside a compiler
        traceback.print_exc()
        text = str(e).strip()
        result = {"status": "failed",
                  "detail": f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"[:400],
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
            log_path(Path(job["package"])).unlink()
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------------
# Planning and scheduling (parent process)

def estimate_gpu_bytes(entry):
    """Rough peak: the eager model and the package's copy of the weights, the inputs, two outputs (eager
    and package) of about the inputs' size plus intermediates, and a margin for context and workspace."""
    return 2 * int(entry.get("weight_bytes", 0)) + 3 * int(entry.get("input_bytes", 0)) + 2 * GIB


def plan(args, manifest, slug):
    """Yields (level, pid, name, status, detail, job): status is 'run', 'cached' or 'skipped'."""
    levels = args.level or [1, 2, 3]
    for level, pid, path in export_problems.problem_files(levels, args.problem):
        entry = manifest.get((level, pid))
        sha = problem_source.source_sha256(path)
        name = path.stem
        if entry is None or entry.get("sha256") != sha:
            yield level, pid, name, "skipped", \
                "manifest entry missing or stale: run scripts/export_problems.py --write-manifest", None
            continue
        if export_problems.too_old(entry):
            yield level, pid, name, "skipped", f"needs PyTorch >= {entry['min_torch']}: {entry.get('reason', '')}", None
            continue
        if args.max_weight_bytes is not None and entry.get("weight_bytes", 0) > args.max_weight_bytes:
            yield level, pid, name, "skipped", \
                f"weights of {entry['weight_bytes'] / GIB:.1f} GiB exceed --max-weight-bytes", None
            continue
        target = package_path(level, name, sha, slug)
        side = sidecar_path(target)
        if target.exists() and side.exists() and not args.force:
            try:
                detail = describe(json.loads(side.read_text()), target)
            except (OSError, ValueError):
                detail = str(target)
            yield level, pid, name, "cached", detail, None
            continue
        job = {"level": level, "id": pid, "name": name, "source": str(path), "entry": entry,
               "package": str(target), "slug": slug, "estimate": estimate_gpu_bytes(entry),
               "exclusive": False, "retried": False}
        yield level, pid, name, "run", str(target), job


class Reporter:
    def __init__(self, as_json):
        self.as_json = as_json
        self.counts = {"ok": 0, "cached": 0, "skipped": 0, "failed": 0}
        self.mismatched = 0

    def emit(self, level, pid, name, status, detail, seconds, extra=None):
        if status in self.counts:
            self.counts[status] += 1
        if self.as_json:
            record = {"level": level, "id": pid, "name": name, "status": status, "detail": detail,
                      "seconds": round(seconds, 2)}
            record.update(extra or {})
            print(json.dumps(record), flush=True)
        else:
            print(f"{status:8s} level{level}/{name}  {seconds:.1f}s  {detail}", flush=True)


def run_jobs(jobs, args, reporter, budget, t_start):
    import multiprocessing
    from multiprocessing.connection import wait

    ctx = multiprocessing.get_context("spawn")
    opts = {"eval": args.eval, "compile_threads": max(1, (os.cpu_count() or 1) // max(1, args.jobs))}
    pending = list(jobs)
    running = {}  # receiving connection -> (job, process, start time)

    def reserved():
        return sum(j["estimate"] for j, _, _ in running.values())

    def exclusive_running():
        return any(j["exclusive"] for j, _, _ in running.values())

    def pick():
        if exclusive_running() or len(running) >= args.jobs:
            return None
        for k, job in enumerate(pending):
            if job["exclusive"]:
                if not running:
                    return pending.pop(k)
                return None  # an exclusive job waits at the head until the GPU is empty
            if not running or reserved() + min(job["estimate"], budget) <= budget:
                return pending.pop(k)
        return None

    def finish(conn, result):
        job, proc, started = running.pop(conn)
        proc.join(timeout=30)
        if proc.is_alive():
            proc.kill()
            proc.join()
        if result is None:
            code = proc.exitcode
            why = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            result = {"status": "failed", "detail": f"worker died ({why})"}
        tmp = tmp_package_path(Path(job["package"]), proc.pid)
        if tmp.exists():
            tmp.unlink()
        if result["status"] == "failed" and result.get("oom") and not job["retried"]:
            # Out of memory, perhaps only because others held the GPU: once more, alone.
            job["exclusive"], job["retried"] = True, True
            pending.insert(0, job)
            if not args.json:
                print(f"retry    level{job['level']}/{job['name']}  out of GPU memory; again, alone", flush=True)
            return
        detail = result["detail"]
        if result["status"] == "failed":
            detail += f" (log: {log_path(Path(job['package']))})"
        if result.get("mismatch"):
            reporter.mismatched += 1
        reporter.emit(job["level"], job["id"], job["name"], result["status"], detail, time.time() - started,
                      {"package": job["package"]})

    try:
        while pending or running:
            if pending and args.deadline_s is not None and time.time() - t_start > args.deadline_s:
                for job in pending:
                    reporter.emit(job["level"], job["id"], job["name"], "skipped", "deadline", 0.0)
                pending = []
            while pending:
                job = pick()
                if job is None:
                    break
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=worker_main, args=(job, send, opts), name=f"aoti-{job['name']}")
                proc.start()
                send.close()
                running[recv] = (job, proc, time.time())
            if not running:
                continue
            for conn in wait(list(running), timeout=1.0):
                try:
                    result = conn.recv()
                except (EOFError, OSError):
                    result = None
                conn.close()
                finish(conn, result)
            if args.problem_timeout_s:
                for conn, (job, proc, started) in list(running.items()):
                    if time.time() - started > args.problem_timeout_s:
                        proc.kill()
                        proc.join()
                        conn.close()
                        finish(conn, {"status": "failed", "detail": f"timed out after {args.problem_timeout_s}s"})
    except KeyboardInterrupt:
        for conn, (job, proc, _) in list(running.items()):
            proc.kill()
            proc.join()
            tmp = tmp_package_path(Path(job["package"]), proc.pid)
            if tmp.exists():
                tmp.unlink()
        raise


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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--level", type=int, choices=(1, 2, 3), action="append", help="level(s); default all")
    ap.add_argument("--problem", type=int, help="one problem id (with --level)")
    ap.add_argument("--max-weight-bytes", type=float, default=None, help="skip models with more weight bytes")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1),
                    help="problems compiled at once, each in its own process (default min(8, CPUs))")
    ap.add_argument("--deadline-s", type=float, default=None,
                    help="start no problem after this many seconds; the rest are reported skipped: deadline")
    ap.add_argument("--problem-timeout-s", type=float, default=None,
                    help="kill a problem's worker after this many seconds (reported failed)")
    ap.add_argument("--eval", action="store_true",
                    help="export in eval mode (default: training mode, as kbench runs the reference)")
    ap.add_argument("--force", action="store_true", help="recompile even if the package exists")
    ap.add_argument("--dry-run", action="store_true", help="list what would be compiled, and where; run nothing")
    ap.add_argument("--gpu-name", help="with --dry-run: GPU name to compute paths for (default: the CUDA device's)")
    ap.add_argument("--json", action="store_true", help="one JSON object per problem on stdout")
    args = ap.parse_args()
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.gpu_name and not args.dry_run:
        ap.error("--gpu-name only applies to --dry-run (a real run uses the CUDA device's name)")
    t_start = time.time()
    if not args.dry_run:
        reexec_with_compiler_libstdcxx()

    try:
        import torch
    except ImportError:
        print("compile_baselines: PyTorch is not installed for this Python; nothing to do")
        return 0
    version = torch.__version__
    old = export_problems.version_tuple(export_problems.torch_key()) < MIN_TORCH
    cuda = torch.cuda.is_available()
    need = ".".join(map(str, MIN_TORCH))

    if not args.dry_run:
        if old:
            print(f"compile_baselines: PyTorch {version} is older than {need} (torch.export + AOTInductor "
                  "packages); nothing to do")
            return 0
        if not cuda:
            print(f"compile_baselines: CUDA is not available to PyTorch {version}; no GPU packages can be "
                  "made here; nothing to do")
            return 0

    if args.gpu_name:
        gpu_name = args.gpu_name
    elif cuda:
        gpu_name = torch.cuda.get_device_name(0)
    else:
        gpu_name = None
    slug = gpu_slug(gpu_name) if gpu_name else "<gpu>"
    manifest = export_problems.read_manifest()
    planned = list(plan(args, manifest, slug))

    if args.dry_run:
        notes = []
        if old:
            notes.append(f"PyTorch {version} is older than {need}: a real run here would do nothing")
        if not cuda:
            notes.append("CUDA is not available: a real run here would do nothing")
        if not gpu_name:
            notes.append("paths show <gpu> for the device name (give --gpu-name to fill it in)")
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
                print(f"{shown:13s} level{level}/{name}  {detail}{extra}")
        if args.json:
            print(json.dumps({"summary": counts, "dry_run": True, "torch": version, "gpu_slug": slug,
                              "cache": str(export_problems.cache_dir()), "notes": notes}))
        else:
            summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
            print(f"compile_baselines --dry-run (torch {export_problems.torch_key()}, gpu {slug}, "
                  f"cache {export_problems.cache_dir()}): {summary or 'nothing'}")
        return 0

    reporter = Reporter(args.json)
    jobs = []
    for level, pid, name, status, detail, job in planned:
        if status == "run":
            jobs.append(job)
        else:
            reporter.emit(level, pid, name, status, detail, 0.0)
    total_memory = torch.cuda.get_device_properties(0).total_memory
    budget = max(GIB, int(0.9 * total_memory) - args.jobs * GIB)  # each worker's CUDA context costs some
    if jobs:
        run_jobs(jobs, args, reporter, budget, t_start)
    counts = reporter.counts
    if args.json:
        print(json.dumps({"summary": counts, "mismatched": reporter.mismatched, "torch": version,
                          "gpu": gpu_name, "cache": str(export_problems.cache_dir()),
                          "seconds": round(time.time() - t_start, 1)}), flush=True)
    else:
        line = ", ".join(f"{v} {k}" for k, v in counts.items())
        if reporter.mismatched:
            line += f" ({reporter.mismatched} ok but not matching eager)"
        print(f"compile_baselines (torch {version}, {gpu_name}, cache {export_problems.cache_dir()}, "
              f"{time.time() - t_start:.0f}s): {line}", flush=True)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
