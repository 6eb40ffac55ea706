#!/usr/bin/python3
"""Fails where src/'s folders include each other in a cycle.

Each folder of src/ is a part (problems, compile, launch, check, timing, ...); a file's `#include
"part/..."` is an arrow from its folder to that part. The arrows must form no cycle, so that the parts
stand on floors, each including only the floors below it. Prints the floors, lowest first.

  tests/layering/check_layering.py [--src DIR]
"""
import argparse
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def arrows(src):
    parts = {p.name for p in src.iterdir() if p.is_dir()}
    out = {p: set() for p in parts}
    for f in src.rglob("*"):
        if f.suffix not in (".h", ".cpp", ".in") or f.parent == src:
            continue
        part = f.relative_to(src).parts[0]
        for target in INCLUDE.findall(f.read_text(errors="replace")):
            if target in parts and target != part:
                out[part].add(target)
    return out


def floors(graph):
    """The parts floor by floor (each floor includes only lower ones), or None and a cycle."""
    placed, result = set(), []
    while len(placed) < len(graph):
        floor = sorted(p for p in graph if p not in placed and graph[p] <= placed)
        if not floor:
            return None, sorted(p for p in graph if p not in placed)
        result.append(floor)
        placed.update(floor)
    return result, []


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[2] / "src")
    args = parser.parse_args()
    graph = arrows(args.src)
    if len(graph) < 2:
        print(f"layering: found {len(graph)} parts under {args.src}: nothing to check")
        return 1
    result, stuck = floors(graph)
    if result is None:
        print("layering: these parts include each other in a cycle: " + ", ".join(stuck))
        for p in stuck:
            print(f"  {p} -> {', '.join(sorted(graph[p] & set(stuck)))}")
        return 1
    for i, floor in enumerate(result):
        print(f"layering: floor {i}: {', '.join(floor)}")
    print(f"layering: {len(graph)} parts on {len(result)} floors, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
