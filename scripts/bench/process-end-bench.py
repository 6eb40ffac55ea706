#!/usr/bin/env python3
"""What a retired ModelNew process's end costs the GPU, by the memory it holds.

A ModelNew is evaluated in a process of its own, which kbench kills after its record; the next
request waits for that end (phases_ms.ending_process_wait). This bench starts processes that hold
N GiB of GPU memory (written once, as kbench's poisoning does), SIGKILLs each, and measures from
the kill: the reap (waitpid), the memory back in cudaMemGetInfo of a process that stays, and the
longest launch-and-synchronise of a small kernel that process ran meanwhile (whether the GPU
stalls during the end). Then the same with the process freeing its memory itself before the kill,
and with another process starting its CUDA context at the kill (as a ModelNew spare may): whether
the driver serialises one context's end with another's start.
  scripts/bench/process-end-bench.py [GiB ...]     (default: 0 18 40), 3 rounds each
"""
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

import torch

CHILD = r"""
import sys, time, torch
gib, free_first = float(sys.argv[1]), sys.argv[2] == "1"
torch.cuda.init()
x = torch.empty(int(gib * 2**30), dtype=torch.uint8, device="cuda") if gib > 0 else None
if x is not None: x.fill_(0xFF)
torch.cuda.synchronize()
if free_first:
    t0 = time.perf_counter()
    del x
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    print(f"freed {1000 * (time.perf_counter() - t0):.1f}", flush=True)
print("ready", flush=True)
time.sleep(600)
"""

# Imports torch, then starts CUDA when told to (a line on stdin).
STARTER = r"""
import sys, torch
sys.stdin.readline()
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
"""


def one_end(gib, free_first, context_beside=False):
    starter = subprocess.Popen([sys.executable, "-c", STARTER], stdin=subprocess.PIPE, text=True) if context_beside else None
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(gib), "1" if free_first else "0"],
                             stdout=subprocess.PIPE, text=True)
    freed_ms = 0.0
    for line in child.stdout:
        if line.startswith("freed"):
            freed_ms = float(line.split()[1])
        if line.strip() == "ready":
            break
    base_free, _ = torch.cuda.mem_get_info()
    probe_ms, stop = [], threading.Event()

    def probe():  # small launches while the process ends: does the GPU stall?
        a = torch.ones(1024, device="cuda")
        while not stop.is_set():
            t0 = time.perf_counter()
            a.add_(1)
            torch.cuda.synchronize()
            probe_ms.append(1000 * (time.perf_counter() - t0))

    # The starter's import of torch (about 1 s); were it still running, its CUDA start would only come
    # later in the end, so the lengthening measured is a lower bound.
    time.sleep(1.0 if starter else 0)
    t0 = time.perf_counter()
    os.kill(child.pid, signal.SIGKILL)
    if starter:
        starter.stdin.write("go\n")
        starter.stdin.flush()
    prober = threading.Thread(target=probe)
    prober.start()
    child.wait()
    reaped = 1000 * (time.perf_counter() - t0)
    want = base_free + (0 if free_first else int(gib * 2**30 * 0.95)) - (1 << 30 if starter else 0)
    while torch.cuda.mem_get_info()[0] < want and time.perf_counter() - t0 < 10:
        time.sleep(0.0005)
    back = 1000 * (time.perf_counter() - t0)
    stop.set()
    prober.join()
    if starter:
        starter.wait()
    return freed_ms, reaped, back, max(probe_ms) if probe_ms else 0.0


def main():
    sizes = [float(s) for s in sys.argv[1:]] or [0, 18, 40]
    torch.cuda.init()
    torch.ones(1, device="cuda").add_(1)
    torch.cuda.synchronize()
    print(f"{torch.cuda.get_device_name(0)}: a process holding N GiB SIGKILLed; ms from the kill, median of 3 (max)")
    print(f"{'GiB':>5s} {'freed first':>11s} {'context beside':>14s} {'self-free':>9s} {'reaped':>13s} {'memory back':>13s} "
          f"{'probe max':>13s}")
    for gib in sizes:
        for free_first, beside in ((False, False), (True, False), (False, True)):
            runs = [one_end(gib, free_first, beside) for _ in range(3)]
            col = lambda i: f"{statistics.median(r[i] for r in runs):6.1f} ({max(r[i] for r in runs):5.1f})"
            print(f"{gib:5.0f} {'yes' if free_first else 'no':>11s} {'yes' if beside else 'no':>14s} "
                  f"{statistics.median(r[0] for r in runs):9.1f} {col(1):>13s} {col(2):>13s} {col(3):>13s}")


if __name__ == "__main__":
    main()
