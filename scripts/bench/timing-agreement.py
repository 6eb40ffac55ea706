#!/usr/bin/env python3
"""Adaptive against fixed-count timing (#36), from records of kbench batch or kbench ci.

Per pass (a JSON-lines file of records): the calls each timed candidate needed (median, max) and,
for records made under --timing both, how far each adaptive speedup is from the speedup of all the
calls on the same calls (median, worst, and the three worst with the candidate's and the eager
baseline's share of the gap and their SM clocks), also over the candidates whose all-calls figures
kbench did not flag (throttled or noisy: figures it warns are not to be trusted themselves).
Across passes, matched by submission: each figure's run-to-run spread.
Usage: timing-agreement.py PASS.jsonl [PASS.jsonl ...]
"""
import json
import statistics
import sys


def clocks(measurement):
    """The SM clock range over a measurement's calls, from the per-call reads of --timing both."""
    mhz = [m for m in measurement.get("trial_sm_mhz", []) if m]
    return f"{min(mhz)}-{max(mhz)} MHz" if mhz else "clock n/a"


def parts(r):
    """Where an adaptive speedup parts from the all-calls one: the candidate's and the eager
    baseline's adaptive mean against their all-calls mean, with their calls and SM clocks."""
    t = r["timing"]
    out = []
    for who in ("candidate", "eager"):
        m = t.get(who, {})
        a = m.get("all_calls")
        if a and a.get("mean_ms"):
            out.append(f"{who} {(m['mean_ms'] / a['mean_ms'] - 1) * 100:+.2f}% "
                       f"({m.get('num_trials')} of {a.get('num_trials')} calls, {clocks(a)})")
    return "; ".join(out)


def flagged(r):
    """Whether kbench flagged the candidate's or the eager baseline's all-calls figure."""
    t = r["timing"]
    return any(t.get(who, {}).get("all_calls", {}).get(flag) for who in ("candidate", "eager")
               for flag in ("throttled", "noisy"))


def figures(path):
    """Per submission: the adaptive speedup, the all-calls (fixed count) one, calls counted, and
    where the two speedups part (under --timing both), and which all-calls figures were flagged."""
    adaptive, fixed, calls, where, flags = {}, {}, [], {}, set()
    for line in open(path):
        r = json.loads(line)
        t = r.get("timing", {})
        if "speedup_eager" not in t:
            continue
        name = r.get("batch", {}).get("file", "")
        protocol = t.get("candidate", {}).get("protocol", {})
        calls.append((protocol.get("timed_calls", 0), protocol.get("max_calls", 0)))
        (fixed if protocol.get("mode") == "fixed" else adaptive)[name] = t["speedup_eager"]
        if "speedup_eager_all_calls" in t:
            fixed[name] = t["speedup_eager_all_calls"]
            where[name] = parts(r)
            if flagged(r):
                flags.add(name)
    return adaptive, fixed, sorted(calls), where, flags


def differences(a, b):
    """|a / b - 1| in percent, for the submissions both have, sorted."""
    return sorted(abs(a[k] / b[k] - 1) * 100 for k in a.keys() & b.keys() if b[k] > 0)


def show(label, d):
    if d:
        print(f"{label}: median {statistics.median(d):.2f}%, worst {d[-1]:.2f}% over {len(d)} candidates, "
              f"within 2% for {sum(1 for x in d if x <= 2)}")


passes = [figures(p) for p in sys.argv[1:]]
for i, (adaptive, fixed, calls, where, flags) in enumerate(passes, 1):
    if calls:
        stopped = sum(1 for n, most in calls if n < most)
        print(f"pass {i}: calls per timed candidate: median {calls[len(calls) // 2][0]}, max {calls[-1][0]} "
              f"({stopped} of {len(calls)} stopped before the maximum)")
    show(f"pass {i}: adaptive vs all-calls speedup on the same calls", differences(adaptive, fixed))
    if flags:
        show(f"pass {i}: the same where no all-calls figure is flagged ({len(flags)} flagged)",
             differences({k: v for k, v in adaptive.items() if k not in flags}, fixed))
    worst = sorted(((abs(adaptive[k] / fixed[k] - 1) * 100, k) for k in adaptive.keys() & fixed.keys() if fixed[k] > 0),
                   reverse=True)
    for d, k in worst[:3]:
        print(f"  {d:.2f}% {k}: {where[k]}")
for i in range(len(passes)):
    for j in range(i + 1, len(passes)):
        show(f"run-to-run spread of adaptive speedups (passes {i + 1}, {j + 1})", differences(passes[i][0], passes[j][0]))
        show(f"run-to-run spread of all-calls speedups (passes {i + 1}, {j + 1})", differences(passes[i][1], passes[j][1]))
