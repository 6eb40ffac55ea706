#!/usr/bin/python3
"""Fails where the README's options reference and kbench's own --help disagree.

The reference (README.md, between <!-- options-reference ... --> and <!-- /options-reference -->) is
what `kbench __options-reference` prints: made from the same flag definitions as --help (the options
of an evaluation from sandbox/eval_options.cpp's table). Two checks:

1. The README's block is exactly what this kbench prints (after a change of options, run this script
   with --write to bring the README up to date, and commit it).
2. Each command's --help, read as a user reads it: every option it lists has a row in the README
   that names the command, and each row that names the command shows the same meaning as --help.

  tests/readme/check_options_reference.py --kbench build/kbench [--write]
"""
import argparse
import difflib
import re
import subprocess
import sys
from pathlib import Path

BEGIN = re.compile(r"^<!-- options-reference\b.*-->\s*$")
END = "<!-- /options-reference -->"
OPTION_LINE = re.compile(r"^  (-[\w?], ?)?(--[\w-]+)")


def kbench_output(kbench, *args):
    done = subprocess.run([kbench, *args], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit(f"options: `kbench {' '.join(args)}` exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def readme_block(lines):
    begins = [i for i, line in enumerate(lines) if BEGIN.match(line)]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        sys.exit("options: README.md must hold one <!-- options-reference ... --> ... <!-- /options-reference --> block")
    return begins[0] + 1, ends[0]


def rows(reference):
    """The options table's rows: (flags, commands, meaning)."""
    out = []
    for line in reference.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) != 4 or not cells[0].startswith("`-"):
            continue
        flags = re.findall(r"(?:^|[\s,`])(--?\w[\w-]*)", cells[0])
        commands = {c.split(" ")[0] for c in cells[1].split(", ")}
        out.append((set(flags), commands, cells[3].replace("\\|", "|")))
    return out


def squeeze(text):
    return " ".join(text.split())


def check_help(kbench, command, table):
    """Problems between `kbench COMMAND --help` and the README rows that name COMMAND."""
    help_text = kbench_output(kbench, *([command] if command != "all" else []), "--help")
    # Each option's entry: its line, and the indented lines under it (a long description's).
    entries = {}
    flag = None
    for line in help_text.splitlines():
        m = OPTION_LINE.match(line)
        if m:
            flag = m.group(2)
            entries[flag] = line
        elif flag and line.startswith(" " * 10):
            entries[flag] += " " + line
        else:
            flag = None
    mine = [r for r in table if command in r[1]]
    problems = []
    for flag in sorted(set(entries) - ({"--help"} if command != "all" else set())):
        if not any(flag in flags for flags, _, _ in mine):
            problems.append(f"kbench {command} --help lists {flag}, which the README's reference does not give for {command}")
    for flags, _, meaning in mine:
        shown = [squeeze(entries[f]) for f in flags if f in entries]
        if not any(text.endswith(squeeze(meaning)) for text in shown):  # the description ends an entry
            problems.append(f"README: {'/'.join(sorted(flags))} for {command} means \"{meaning}\", "
                            f"which kbench {command} --help does not say")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kbench", required=True, help="the kbench binary under test")
    parser.add_argument("--root", default=Path(__file__).resolve().parents[2], type=Path, help="the checkout")
    parser.add_argument("--write", action="store_true", help="replace the README's block with kbench's")
    args = parser.parse_args()

    readme = args.root / "README.md"
    lines = readme.read_text().splitlines()
    start, end = readme_block(lines)
    generated = kbench_output(args.kbench, "__options-reference")
    if args.write:
        readme.write_text("\n".join(lines[:start] + generated.rstrip("\n").splitlines() + lines[end:]) + "\n")
        print(f"options: wrote the reference into {readme}")
        return 0

    problems = []
    current = "\n".join(lines[start:end]).strip("\n")
    if current != generated.strip("\n"):
        diff = difflib.unified_diff(current.splitlines(), generated.strip("\n").splitlines(), "README.md",
                                    "kbench __options-reference", lineterm="")
        problems.append("the README's reference is not what kbench prints (--write updates it):\n" + "\n".join(diff))
    table = rows(current)  # the README as a user reads it, against each command's --help
    commands = sorted({c for _, cs, _ in table for c in cs})
    for command in commands:
        problems += check_help(args.kbench, command, table)
    for p in problems:
        print("options: " + p)
    print(f"options: {len(table)} options of {len(commands)} commands checked against --help; {len(problems)} problems")
    return 1 if problems or not table else 0


if __name__ == "__main__":
    sys.exit(main())
