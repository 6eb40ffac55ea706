#!/usr/bin/env python3
"""KernelBench's verdict in kbench against upstream KernelBench's own eval, fixture by fixture.

On a GPU machine: every ModelNew fixture of tests/fixtures/kernelbench_rule/ and tests/fixtures/modelnew/ (those that
run, and the one that subclasses the reference) goes through upstream's eval_kernel_against_ref
(from the checkout given, run as its scripts run it: 5 trials, seed 42, float32) and through
`kbench eval --compat <rule>`; the table gives both verdicts and whether they agree on pass or fail.
Upstream's eval gets kbench's own problem file as the reference, so that both judge the same
computation. A disagreement is "intended" where kbench's integrity checks fail a candidate that
upstream's rule lets through (its kernels do not do the work, it writes its inputs, it reuses the
reference's Model, returns a tensor subclass or does what a submission may not); the exit status
is 1 if any other disagrees.

  scripts/bench/upstream-agreement.py UPSTREAM_CHECKOUT [--kbench build-gpu/kbench] [--rule kernelbench]
                                [--only FILE ...] [--jobs 3]

Upstream's evals run --jobs at a time (each builds its extensions with PyTorch's own build, tens of
seconds; each holds its inputs on the GPU), kbench's one at a time after them, their extensions
built ahead by `kbench batch --build-only`.

The checkout is a clone of github.com/ScalingIntelligence/KernelBench (main; src/kernelbench/eval.py),
never committed here. Its eval imports packages that its evaluation does not use (openai, litellm,
dotenv, tqdm, requests, pydantic): where they are missing, empty stand-ins take their place.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# kbench's integrity verdicts, and the messages of its refusals, where upstream's rule sees only values.
INTENDED_VERDICTS = {"no_custom_kernel", "input_mutated", "inconsistent", "state_changed"}
INTENDED_MESSAGES = ("[kbench:refused]", "'Model'", "subclass of torch.Tensor")


def fixtures():
    out = []
    table = json.load(open(os.path.join(ROOT, "tests/fixtures/kernelbench_rule/expected.json")))["fixtures"]
    out += [dict(e, path=os.path.join(ROOT, "tests/fixtures/kernelbench_rule", e["file"])) for e in table]
    for e in json.load(open(os.path.join(ROOT, "tests/fixtures/modelnew/expected.json")))["submissions"]:
        if not e.get("before_build") or e["file"] == "l1_19_subclasses_reference.py":
            out.append(dict(e, path=os.path.join(ROOT, "tests/fixtures/modelnew", e["file"])))
    return out


def problem_file(level, problem):
    return glob.glob(os.path.join(ROOT, "level%d" % level, "%d_*.py" % problem))[0]


class _BaseModel:
    """pydantic's BaseModel as KernelExecResult uses it: fields with class defaults, set by keyword."""

    def __init__(self, **fields):
        for key, value in fields.items():
            setattr(self, key, value)


def _nothing(attr):
    """A stand-in's every name is a function that does nothing; its dunder names stay absent."""
    if attr.startswith("__"):
        raise AttributeError(attr)
    return lambda *args, **kwargs: None


def stand_ins():
    """Empty modules for the imports of upstream's package that its eval never calls."""
    for name in ("openai", "litellm", "dotenv", "tqdm", "requests", "pydantic"):
        try:
            __import__(name)
        except ImportError:
            module = types.ModuleType(name)
            module.__getattr__ = _nothing
            if name == "pydantic":
                module.BaseModel = _BaseModel
            sys.modules[name] = module


def upstream_eval(checkout, reference, submission):
    """In a process of its own (extensions, and what a fixture changes, stay there): "pass",
    "fail: <why>" or "error: <why>" on stdout's last line."""
    stand_ins()
    sys.path.insert(0, os.path.join(checkout, "src"))
    import torch
    from kernelbench import eval as kb_eval

    with tempfile.TemporaryDirectory() as build_dir:
        result = kb_eval.eval_kernel_against_ref(
            open(reference).read(), open(submission).read(), seed_num=42, num_correct_trials=5,
            measure_performance=False, build_dir=build_dir, device=torch.device("cuda:0"), backend="cuda",
            precision=torch.float32)
    if result is None:
        print("error: upstream asked for a retry (lock file)")
    elif result.compiled and result.correctness:
        print("pass")
    else:
        meta = result.metadata
        why = next((str(meta[k]) for k in ("compilation_error", "runtime_error", "correctness_issue") if k in meta), "")
        print("fail: " + ("not compiled; " if not result.compiled else "") + why.replace("\n", " ")[:120])


def kbench_eval(kbench, entry, rule):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([kbench, "eval", entry["path"], "--level", str(entry["level"]), "--problem", str(entry["problem"]),
                        "--compat", rule, "--no-timing", "--out", out.name],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            return json.load(open(out.name))
        except ValueError:
            return {"verdict": "no record", "message": ""}


def build_ahead(kbench, entries):
    """The fixtures' extensions built on every core before kbench evaluates them one at a time."""
    with tempfile.TemporaryDirectory() as run_dir:
        for i, e in enumerate(entries):
            name = "level_%d_problem_%d_sample_%d_kernel.py" % (e["level"], e["problem"], i)
            shutil.copy(e["path"], os.path.join(run_dir, name))
        subprocess.run([kbench, "batch", run_dir, "--build-only"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def intended(record):
    verdict, message = record.get("verdict"), record.get("message", "")
    return verdict in INTENDED_VERDICTS or any(m in message for m in INTENDED_MESSAGES)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--upstream-eval":
        return upstream_eval(*sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("upstream", help="a KernelBench checkout (src/kernelbench/eval.py)")
    parser.add_argument("--kbench", default=os.path.join(ROOT, "build-gpu/kbench"))
    parser.add_argument("--rule", default="kernelbench", choices=["kernelbench", "kernelbench-v0.1"])
    parser.add_argument("--only", nargs="+", metavar="FILE", help="only these fixtures (file names)")
    parser.add_argument("--jobs", type=int, default=3, help="upstream evals at a time")
    args = parser.parse_args()
    entries = [e for e in fixtures() if not args.only or e["file"] in args.only]

    def upstream_verdict(entry):
        child = subprocess.run([sys.executable, __file__, "--upstream-eval", args.upstream,
                                problem_file(entry["level"], entry["problem"]), entry["path"]],
                               capture_output=True, text=True, timeout=1200)
        lines = child.stdout.strip().splitlines()
        return lines[-1] if lines and lines[-1].split(":")[0] in ("pass", "fail", "error") else \
            "error: " + (child.stderr.strip().splitlines() or ["exit %d" % child.returncode])[-1][:120]

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        upstream_of = dict(zip((e["file"] for e in entries), pool.map(upstream_verdict, entries)))
    build_ahead(args.kbench, entries)
    rows, unexplained = [], 0
    for entry in entries:
        upstream = upstream_of[entry["file"]]
        record = kbench_eval(args.kbench, entry, args.rule)
        kbench = record.get("verdict", "?")
        agree = (upstream == "pass") == (kbench == "correct") and not upstream.startswith("error")
        note = "yes" if agree else "no (intended: kbench's integrity check)" if intended(record) else "NO"
        unexplained += note == "NO"
        rows.append((entry["file"], "L%d#%d" % (entry["level"], entry["problem"]), upstream, kbench, note))
        print("%-36s %-7s %-40s %-18s %s" % (rows[-1][0][:36], rows[-1][1], upstream[:40], kbench, note), flush=True)
    print("\n| fixture | problem | upstream eval_kernel_against_ref | kbench --compat %s | agree |" % args.rule)
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %s |" % r)
    print("\n%d fixtures, %d agree, %d disagree as intended, %d disagree otherwise" % (
        len(rows), sum(r[4] == "yes" for r in rows), sum(r[4].startswith("no (") for r in rows), unexplained))
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
