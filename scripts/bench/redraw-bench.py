#!/usr/bin/env python3
"""Benchmark: what drawing a timed call's fresh inputs costs, against the memory-bandwidth floor.

For the largest level-1 problems, on a GPU machine: the problem's input generator (the TorchScript
of problems/manifest.json that kbench runs) called as the timed calls call it (the last inputs freed,
the seed set, the draw, a device synchronisation), its GPU time alone (CUDA events), and refilling
the same tensors in place with uniform_. The floor is writing the input bytes once at the peak
bandwidth given. --hold first makes the caching allocator hold all free memory but 1 GiB, as
kbench's workers do for their memory guard, and frees a candidate-sized output beside each draw.
Usage: scripts/bench/redraw-bench.py [--peak-tbps 3.35] [--hold] [L:P ...]
"""
import argparse
import json
import pathlib
import statistics
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tools"))
import problem_source  # noqa: E402


def median_ms(fn, runs=12):
    """fn returns its own time in ms (what it does before the clock starts is not counted)."""
    return statistics.median([fn() for _ in range(runs)][2:])


def wall_ms(t0):
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--peak-tbps", type=float, default=3.35)
    parser.add_argument("--hold", action="store_true")
    parser.add_argument("problems", nargs="*", default=["1:19", "1:38", "1:94", "1:23", "1:1", "2:12"])
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parents[2]
    manifest = {(p["level"], p["id"]): p for p in json.loads((root / "problems/manifest.json").read_text())["problems"]}
    device = torch.device("cuda")
    if args.hold:
        free, _ = torch.cuda.mem_get_info()
        torch.empty(free - 2**30, dtype=torch.uint8, device=device)
    print(f"{'problem':36s} {'GiB':>6s} {'floor':>7s} {'kbench':>7s} {'gpu':>7s} {'inplace':>7s}  (ms)")
    for key in args.problems:
        level, pid = (int(x) for x in key.split(":"))
        entry = manifest[(level, pid)]
        generate = problem_source.compile_input_generator(entry["input_generator"])
        holder = {"x": generate(device)}
        torch.cuda.synchronize()

        def as_kbench(seed=[0]):
            if args.hold:  # the candidate's output, freed with the inputs
                holder["y"] = torch.empty_like(holder["x"][0])
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            holder["y"] = None
            holder["x"] = None
            seed[0] += 1
            torch.manual_seed(seed[0])
            holder["x"] = generate(device)
            return wall_ms(t0)

        def gpu_only():
            holder["x"] = None
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            holder["x"] = generate(device)
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop)

        def in_place():
            t0 = time.perf_counter()
            for t in holder["x"]:
                if isinstance(t, torch.Tensor) and t.is_floating_point():
                    t.uniform_()
            return wall_ms(t0)

        kbench_ms = median_ms(as_kbench)
        gpu_ms = median_ms(gpu_only)
        inplace_ms = median_ms(in_place)
        gib = entry["input_bytes"] / 2**30
        floor = entry["input_bytes"] / (args.peak_tbps * 1e12) * 1e3
        print(f"L{level}#{pid} {entry['name'][:30]:30s} {gib:6.2f} {floor:7.3f} {kbench_ms:7.3f} {gpu_ms:7.3f} {inplace_ms:7.3f}")
        holder.clear()
        if not args.hold:
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
