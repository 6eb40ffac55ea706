#!/usr/bin/env python3
"""Does a process that starts on the GPU disturb another process's timed calls?

A ModelNew spare creates its CUDA context and runs the reference's ops ahead of its request, under
the GPU's quiet lock (src/sandbox/gpu_lock.h), so that none of it runs beside timed calls. This
measures what that lock protects: one process times a kernel call by call with CUDA events (as
kbench's timed calls do), in windows alternately quiet and beside a loop of fresh processes that
each do one thing and exit:
  context       the CUDA driver's primary context made current and one allocation (cudaFree(0)'s work)
  first-kernels torch imported, then a few small tensors and ops on the GPU (its context, its
                kernels' modules loaded lazily, a few launches): a spare's snapshot in small
Prints, per kernel and disturber: each window kind's median, mean and p99 per call, the share of
calls above the quiet windows' p99, and the disturber's starts per second.
  scripts/bench/context-disturbance.py [seconds per window (2)] [rounds (6)]
"""
import statistics
import subprocess
import sys
import time

import torch

WINDOW_S = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 6

DISTURBERS = {
    "context": r"""
import ctypes
cuda = ctypes.CDLL("libcuda.so.1")
device, context, memory = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
assert cuda.cuInit(0) == 0 and cuda.cuDeviceGet(ctypes.byref(device), 0) == 0
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) == 0
assert cuda.cuCtxSetCurrent(context) == 0 and cuda.cuMemAlloc_v2(ctypes.byref(memory), ctypes.c_size_t(1 << 20)) == 0
""",
    "first-kernels": r"""
import torch
x = torch.randn(4096, device="cuda")
y = torch.relu(x) + x.abs().max()
torch.allclose(y, y.clone(), atol=1e-2)
torch.cuda.synchronize()
""",
}


def kernels():
    big = torch.randn(1 << 24, device="cuda")
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.half)
    return {"relu over 2^24 floats": lambda: torch.relu(big),
            "fp16 matmul 4096^3": lambda: a @ a}


def time_window(call, seconds):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times, until = [], time.monotonic() + seconds
    while time.monotonic() < until:
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)  # microseconds
    return times


def disturber(code):  # fresh processes one after another until stopped; their count returned
    script = f"import subprocess, sys\nn = 0\nwhile True:\n    subprocess.run([sys.executable, '-c', {code!r}], check=True)\n" \
             f"    n += 1\n    print(n, flush=True)\n"
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)


def summary(times):
    ordered = sorted(times)
    return statistics.median(ordered), statistics.fmean(ordered), ordered[int(0.99 * (len(ordered) - 1))]


def main():
    for name, call in kernels().items():
        for _ in range(50):
            call()  # its module loaded, clocks up
        torch.cuda.synchronize()
        for kind, code in DISTURBERS.items():
            quiet, beside, starts, busy_s = [], [], 0, 0.0
            for _ in range(ROUNDS):
                quiet += time_window(call, WINDOW_S)
                began = time.monotonic()
                process = disturber(code)
                time.sleep(0.3)  # its Python started: the window holds its GPU work, not its start
                beside += time_window(call, WINDOW_S)
                busy_s += time.monotonic() - began
                process.kill()
                process.wait()
                starts += len(process.stdout.read().split())
            q, b = summary(quiet), summary(beside)
            above = sum(t > q[2] for t in beside) / len(beside)
            print(f"{name}, beside {kind} ({starts / busy_s:.1f} processes a second): "
                  f"quiet median {q[0]:.1f} us, mean {q[1]:.1f}, p99 {q[2]:.1f} ({len(quiet)} calls); "
                  f"beside median {b[0]:.1f} us ({100 * (b[0] / q[0] - 1):+.2f}%), mean {b[1]:.1f} ({100 * (b[1] / q[1] - 1):+.2f}%), "
                  f"p99 {b[2]:.1f}; {100 * above:.2f}% of calls above the quiet p99 ({len(beside)} calls)", flush=True)


if __name__ == "__main__":
    main()
