#!/usr/bin/env python3
"""Does a process that starts on the GPU disturb another process's timed calls?

A ModelNew spare creates its CUDA context and runs the reference's ops ahead of its request, under
the GPU's quiet lock (src/sandbox/gpu_lock.h), so that none of it runs beside timed calls. This
measures what that lock protects: one process times a kernel call by call with CUDA events (as
kbench's timed calls do), in windows alternately quiet and beside fresh processes, one after
another, that each do one thing on the GPU and exit. Each has started Python and imported what it
needs before its turn (a pool started ahead), so a window holds their GPU work, not their start:
  context       the CUDA driver's primary context made current and one allocation (cudaFree(0)'s work)
  first-kernels torch's CUDA context, then a few small tensors and ops on the GPU (their kernels'
                modules loaded lazily, a few launches): a spare's snapshot in small
Prints, per kernel and disturber: each window kind's median, mean and p99 per call, the share of
calls above the quiet windows' p99, and the disturber's starts per second.
  scripts/bench/context-disturbance.py [seconds per window (2)] [rounds (6)]
"""
import statistics
import subprocess
import sys
import threading
import time

import torch

WINDOW_S = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 6

DISTURBERS = {  # (what a process imports before its turn, what it does on the GPU in its turn)
    "context": ("""
import ctypes
cuda = ctypes.CDLL("libcuda.so.1")
device, context, memory = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
""", """
assert cuda.cuInit(0) == 0 and cuda.cuDeviceGet(ctypes.byref(device), 0) == 0
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) == 0
assert cuda.cuCtxSetCurrent(context) == 0 and cuda.cuMemAlloc_v2(ctypes.byref(memory), ctypes.c_size_t(1 << 20)) == 0
"""),
    "first-kernels": ("""
import torch
""", """
x = torch.randn(4096, device="cuda")
y = torch.relu(x) + x.abs().max()
torch.allclose(y, y.clone(), atol=1e-2)
torch.cuda.synchronize()
"""),
}
POOL = 6  # processes started ahead: more than start in the time one of them takes on the GPU


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


class Disturber:  # a thread that lets one ready process at a time do its GPU work, until stopped
    def __init__(self, prelude, action):
        self.script = f"import sys\n{prelude}\nprint('ready', flush=True)\nsys.stdin.readline()\n{action}"
        self.pool = [self.start() for _ in range(POOL)]
        for process in self.pool:
            process.ready = process.stdout.readline().strip() == "ready"  # every one before the window opens
        self.done, self.failed, self.stop = 0, None, threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def start(self):
        return subprocess.Popen([sys.executable, "-c", self.script], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)

    def run(self):
        while not self.stop.is_set():
            process = self.pool.pop(0)
            self.pool.append(self.start())
            if not getattr(process, "ready", False) and process.stdout.readline().strip() != "ready":
                self.failed = "a disturbing process did not start"
                return
            process.stdin.write("go\n")
            process.stdin.flush()
            if process.wait() != 0:
                self.failed = "a disturbing process failed on the GPU"
                return
            self.done += 1

    def end(self):
        self.stop.set()
        self.thread.join()
        for process in self.pool:
            process.kill()
            process.wait()
        if self.failed:
            raise RuntimeError(self.failed)


def summary(times):
    ordered = sorted(times)
    return statistics.median(ordered), statistics.fmean(ordered), ordered[int(0.99 * (len(ordered) - 1))]


def main():
    for name, call in kernels().items():
        for _ in range(50):
            call()  # its module loaded, clocks up
        torch.cuda.synchronize()
        for kind, (prelude, action) in DISTURBERS.items():
            quiet, beside, starts, busy_s = [], [], 0, 0.0
            for _ in range(ROUNDS):
                quiet += time_window(call, WINDOW_S)
                processes = Disturber(prelude, action)
                began = time.monotonic()
                beside += time_window(call, WINDOW_S)
                processes.end()
                busy_s += time.monotonic() - began
                starts += processes.done
            q, b = summary(quiet), summary(beside)
            above = sum(t > q[2] for t in beside) / len(beside)
            print(f"{name}, beside {kind} ({starts / busy_s:.1f} processes a second on the GPU): "
                  f"quiet median {q[0]:.1f} us, mean {q[1]:.1f}, p99 {q[2]:.1f} ({len(quiet)} calls); "
                  f"beside median {b[0]:.1f} us ({100 * (b[0] / q[0] - 1):+.2f}%), mean {b[1]:.1f} ({100 * (b[1] / q[1] - 1):+.2f}%), "
                  f"p99 {b[2]:.1f}; {100 * above:.2f}% of calls above the quiet p99 ({len(beside)} calls)", flush=True)


if __name__ == "__main__":
    main()
