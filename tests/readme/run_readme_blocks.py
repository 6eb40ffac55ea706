#!/usr/bin/python3
"""Runs the README's runnable code blocks, so that what the README tells a new user to type works.

Marker convention (README.md): an HTML comment line directly before a ```sh block,

    <!-- run: cpu -->    runs anywhere: CI (ctest's readme_cpu_blocks, on CPU and GPU builds alike)
    <!-- run: gpu -->    needs a GPU machine: scripts/gpu/gpu-session.sh's step readme

Blocks without a marker are illustrations and are never run. The set-up block between the lines
<!-- ci:setup ... --> and <!-- /ci:setup --> (scripts/setup.sh, then ctest) is the README's set-up
part: .ci/run runs it on a fresh clone, and this script leaves it alone; the ctest that block runs
includes readme_cpu_blocks, which runs this script with --kind cpu.

Each block of the kind asked for runs as one bash script, `bash -euo pipefail -c BLOCK`, from the
repository root, with --kbench-dir first on the PATH so that `kbench` is the binary under test
(comment lines and trailing `# ...` comments are bash's to skip). Prints each block, then its exit
code and wall time. Exit status: 0 when every block passed; 1 when one failed, when there is no block
of that kind (a test that finds nothing must not pass), or when a marker is malformed (not directly
before a ```sh fence, an unknown kind, a block left open). Python 3 standard library only.

  tests/readme/run_readme_blocks.py --kind cpu --kbench-dir build            # CI's blocks, build/kbench
  tests/readme/run_readme_blocks.py --kind gpu --kbench-dir build-gpu --list # print them, run nothing
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

KINDS = ("cpu", "gpu")
MARKER = re.compile(r"^<!--\s*run:\s*(?P<kind>\S+)\s*-->\s*$")
ANY_MARKER = re.compile(r"^\s*<!--\s*run\b")
FENCE_OPEN = re.compile(r"^```(sh|bash)\s*$")
FENCE_CLOSE = re.compile(r"^```\s*$")


def fail(message):
    print(f"readme: FAILED: {message}", flush=True)
    sys.exit(1)


def extract_blocks(readme):
    """[(kind, first line number, text)] for every marked block; malformed markers are errors."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    blocks, errors = [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not ANY_MARKER.match(line):
            i += 1
            continue
        where = f"{readme.name}:{i + 1}"
        m = MARKER.match(line)
        if not m or m["kind"] not in KINDS:
            errors.append(f"{where}: a run marker must read <!-- run: cpu --> or <!-- run: gpu -->: {line.strip()}")
            i += 1
            continue
        if i + 1 >= len(lines) or not FENCE_OPEN.match(lines[i + 1]):
            errors.append(f"{where}: <!-- run: {m['kind']} --> must be directly followed by a ```sh line")
            i += 1
            continue
        end = i + 2
        while end < len(lines) and not FENCE_CLOSE.match(lines[end]):
            end += 1
        if end >= len(lines):
            errors.append(f"{where}: the block after this marker is never closed")
            break
        body = lines[i + 2:end]
        if not any(l.strip() and not l.lstrip().startswith("#") for l in body):
            errors.append(f"{where}: the block after this marker holds no command")
        blocks.append((m["kind"], i + 3, "\n".join(body) + "\n"))
        i = end + 1
    return blocks, errors


def main():
    parser = argparse.ArgumentParser(description="Run the README's blocks marked <!-- run: KIND -->.")
    parser.add_argument("--kind", choices=KINDS, required=True, help="which marked blocks to run")
    parser.add_argument("--kbench-dir", required=True,
                        help="directory of the kbench under test, put first on the PATH (relative: to the current directory)")
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[2]),
                        help="the repository root: README.md is read and the blocks run there (default: this checkout)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one block may take (default 900)")
    parser.add_argument("--list", action="store_true", help="print the blocks, run nothing")
    args = parser.parse_args()

    root = Path(args.root).resolve()
    readme = root / "README.md"
    if not readme.is_file():
        fail(f"no README.md in {root}")
    blocks, errors = extract_blocks(readme)
    for e in errors:
        print(f"readme: {e}", flush=True)
    if errors:
        fail(f"{len(errors)} malformed run marker(s) in {readme}")
    chosen = [(line, text) for kind, line, text in blocks if kind == args.kind]
    if not chosen:
        fail(f"no block marked <!-- run: {args.kind} --> in {readme}")

    kbench_dir = Path(args.kbench_dir).resolve()
    kbench = kbench_dir / "kbench"
    if not args.list and not (kbench.is_file() and os.access(kbench, os.X_OK)):
        fail(f"no executable kbench in {kbench_dir} (--kbench-dir: where the kbench under test was built)")
    env = dict(os.environ, PATH=f"{kbench_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    print(f"readme: {len(chosen)} block(s) marked {args.kind} in {readme}; kbench: {kbench}", flush=True)

    failed = []
    for line, text in chosen:
        print(f"\nreadme: --- block at README.md:{line} ---", flush=True)
        print("".join(f"readme: $ {l}\n" for l in text.splitlines()), end="", flush=True)
        if args.list:
            continue
        start = time.monotonic()
        # A process group of its own: a block past its time is ended with everything it started.
        proc = subprocess.Popen(["bash", "-euo", "pipefail", "-c", text], cwd=root, env=env,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = f"timeout after {args.timeout:.0f} s"
        took = time.monotonic() - start
        ok = rc == 0
        print(f"readme: block at README.md:{line}: exit {rc}, {took:.1f} s{'' if ok else ' FAILED'}", flush=True)
        if not ok:
            failed.append(line)

    if args.list:
        return 0
    if failed:
        fail(f"{len(failed)} of {len(chosen)} {args.kind} block(s) failed (README.md lines {', '.join(map(str, failed))})")
    print(f"readme: all {len(chosen)} {args.kind} block(s) passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
