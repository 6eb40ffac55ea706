#!/usr/bin/env bash
# ModelNew extension builds: PyTorch's own route against kbench's fast route (README, "How a ModelNew
# extension is built"). On a GPU machine after the GPU build (scripts/gpu/gpu-session.sh build-bench);
# on the CPU setup PyTorch's route builds no CUDA extension (the figures then say so). Prints:
#  1. Cold builds per file, over every ModelNew file of tests/fixtures/modelnew that calls load_inline and
#     every file of tests/fixtures/build_corpus, through `kbench batch --build-only` with an empty extension
#     cache: once by PyTorch's route (KBENCH_EXTENSION_BUILD=pytorch), once by kbench's fast route
#     with an empty precompiled-header cache too. Per file (its extensions' builds added up): the
#     median and worst CPU seconds and wall seconds; the fast route's also over the files whose
#     binding file found its precompiled header ready (the steady state), with what making the
#     headers cost; the share of files the fast route built alone; files whose build result differs
#     between the routes. BENCH_THREADS files build at once (default 8), each with MAX_JOBS=2 (its
#     C++ and CUDA files side by side, by either route). BENCH_ROUTES (default "pytorch fast") names
#     the routes to run: PyTorch's took 571 s on the H100 machine, so a session short of device
#     time can run the fast route alone (the comparisons between routes are then left out).
#  2. Where the time goes in one build (L1#19's ReLU): the fast route's own commands run again (its
#     build-commands.sh): the binding file with and without the precompiled header, nvcc's phases
#     (nvcc --time); planning and link from the build's record.
#  3. 50 distinct ModelNew files (the L1#19 ReLU, each source its own) through --build-only by each
#     route of BENCH_ROUTES (the fast route's headers ready), on BENCH_CORES cores (default all):
#     wall and CPU seconds.
#  4. A lone cold file (L1#19's ReLU), BENCH_ATTEMPTS times (default 2), each attempt: PyTorch's load_inline (the
#     file run by python3, a fresh TORCH_EXTENSIONS_DIR), then kbench batch --build-only, kbench eval and one
#     request to a kbench serve just started (eval and serve on a GPU), each with every kbench build cache
#     empty (headers to make too); wall and CPU seconds (serve: the request's wall), on all cores.
#  BENCH_SECTIONS (default "1 2 3 4") names the sections to run; 2 and 3 make the precompiled header
#  they need if section 1 did not.
#   scripts/bench/build-bench.sh [build-dir (build-gpu)] [log-dir]
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
LOGS=${2:-$(mktemp -d)}
KB=$PWD/$BUILD/kbench
THREADS=${BENCH_THREADS:-8}
wanted() { [[ " ${BENCH_SECTIONS:-1 2 3 4} " == *" $1 "* ]]; }
# A directory of its own holding L1#19's ReLU ModelNew alone, under a name kbench batch reads.
relu_alone() {
  rm -rf "$1" && mkdir -p "$1"
  cp tests/fixtures/modelnew/l1_19_relu.py "$1/level_1_problem_19_sample_0_kernel.py"
  echo "$1"
}
# A cache of the benchmark's own: the user's extensions and headers stay; Python's bytecode is
# compiled once first (kbench doctor starts kbench's Python), so that no build pays for it.
export KBENCH_CACHE=$LOGS/cache
mkdir -p "$KBENCH_CACHE"
$KB doctor >/dev/null 2>&1

if wanted 1; then
FILES=$LOGS/files
rm -rf "$FILES" && mkdir -p "$FILES"
# Under the names kbench batch reads: the fixtures' level and problem from tests/fixtures/modelnew/expected.json,
# the corpus's from their names (l<level>_<problem>_<shape>.py).
python3 - "$FILES" <<'EOF'
import glob, json, os, re, shutil, sys
named = [(os.path.join("tests/fixtures/modelnew", e["file"]), e["level"], e["problem"])
         for e in json.load(open("tests/fixtures/modelnew/expected.json"))["submissions"]]
named += [(path, *map(int, re.match(r"l(\d+)_(\d+)_", os.path.basename(path)).groups()))
          for path in sorted(glob.glob("tests/fixtures/build_corpus/*.py"))]
for sample, (path, level, problem) in enumerate(named):
    if "load_inline(" in open(path).read():
        shutil.copy(path, os.path.join(sys.argv[1], f"level_{level}_problem_{problem}_sample_{sample}_kernel.py"))
EOF
echo "== 1. cold builds of $(ls "$FILES" | wc -l) files, $THREADS at a time ($(nproc) cores)"
rm -rf "$KBENCH_CACHE/extensions" "$KBENCH_CACHE/extension-pch"  # the route is in the key: both stay
rm -f "$LOGS"/builds-*.json
for route in ${BENCH_ROUTES:-pytorch fast}; do
  start=$(date +%s.%N)
  KBENCH_EXTENSION_BUILD=$route MAX_JOBS=2 $KB --json batch "$FILES" --build-only --compile-threads "$THREADS" \
    >"$LOGS/builds-$route.json" 2>"$LOGS/builds-$route.err"
  echo "$route route: $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.0f}')" "$start" "$(date +%s.%N)") s wall"
done
python3 - "$LOGS/builds-pytorch.json" "$LOGS/builds-fast.json" "$KBENCH_CACHE/extensions" <<'EOF'
import concurrent.futures, difflib, glob, json, os, re, statistics, subprocess, sys, tempfile

def builds(path):  # a route not run (BENCH_ROUTES) has none
    return json.load(open(path))["builds"] if os.path.exists(path) else []

def per_file(path):
    files = {}
    for entry in builds(path):
        extensions = entry["extensions"]
        if isinstance(extensions, dict):  # the build pass itself failed
            files[entry["file"]] = {"error": extensions.get("error", "?")}
            continue
        built = [e for e in extensions if not e.get("from_cache")]
        if not built:
            continue  # another file built the same extension: no cold build here
        files[entry["file"]] = {
            "cpu": sum(e.get("cpu_seconds", 0) for e in built), "wall": sum(e.get("seconds", 0) for e in built),
            "ok": all(e["ok"] for e in extensions), "routes": {e.get("route") for e in built},
            "pch": [e.get("pch", "") for e in built], "headers": [e.get("headers", "") for e in built],
            "cuda": any("cuda.cuda.o" in e.get("steps", {}) for e in built),
            "headers_made": [t["cpu_s"] for e in built for step, t in e.get("steps", {}).items() if step.startswith("pch")],
            "waited_for_header": sum(t["wall_s"] for e in built for step, t in e.get("steps", {}).items()
                                     if step.startswith("waited for another build's pch"))}
    return files

def line(label, rows):
    if not rows:
        print(f"  {label:44s} none")
        return
    cpu, wall = [r["cpu"] for r in rows], [r["wall"] for r in rows]
    print(f"  {label:44s} {len(rows):3d} files: CPU median {statistics.median(cpu):6.1f} s, worst {max(cpu):6.1f} s; "
          f"wall median {statistics.median(wall):6.1f} s, worst {max(wall):6.1f} s")

before, after = per_file(sys.argv[1]), per_file(sys.argv[2])
# A file is a CUDA one when the fast route ran nvcc for it (PyTorch's route records no steps).
cuda = {n for n, f in after.items() if f.get("cuda")}
for name, files in (("PyTorch's route", before), ("kbench's fast route", after)):
    if not files:
        print(f"{name}: not run")
        continue
    ok = {n: f for n, f in files.items() if f.get("ok")}
    print(f"{name}: {len(ok)} of {len(files)} files built")
    line("all that built", list(ok.values()))
    line("with CUDA sources", [f for n, f in ok.items() if n in cuda])
    line("C++ only", [f for n, f in ok.items() if n not in cuda])
fast_ok = [f for f in after.values() if f.get("ok")]
ready = [f for f in fast_ok if all(p == "used" for p in f["pch"]) and not f["waited_for_header"]]
waited = [f for f in fast_ok if all(p == "used" for p in f["pch"]) and f["waited_for_header"]]
making = [f for f in fast_ok if any(p == "built" for p in f["pch"])]
without = [f for f in fast_ok if any(p.startswith("not used") or p.startswith("rejected") for p in f["pch"])]
line("fast, binding header precompiled and ready", ready)
line("fast, waited for another build to make it", waited)
if waited:
    print(f"    their waits beside nvcc: median {statistics.median(f['waited_for_header'] for f in waited):.1f} s, "
          f"longest {max(f['waited_for_header'] for f in waited):.1f} s")
line("fast, made a precompiled header", making)
line("fast, compiled without one (being made, ...)", without)
made = [cpu for f in fast_ok for cpu in f["headers_made"]]
if made:
    print(f"  precompiled headers made: {len(made)}, {statistics.median(made):.1f} CPU s each (median)")
# The widest headers a file's builds needed (design.md: the narrow and lighter headers).
def width(f):
    return max(0 if h == "narrow" else 1 if h.startswith("light") else 2 for h in f["headers"])
for tier, label in ((0, "the narrowest headers"), (1, "the lighter headers at most"), (2, "PyTorch's headers for some file")):
    rows = [f for f in fast_ok if width(f) == tier]
    print(f"files built against {label}: {len(rows)} of {len(fast_ok)} ({100 * len(rows) / max(1, len(fast_ok)):.0f}%)")
    line(f"fast, {label}", rows)
for n, f in sorted(after.items()):
    for h in f.get("headers", []):
        if h != "narrow":
            print(f"  {n}: {h[:150]}")
# Where the builds ran: forked from their build pass (torch imported once a file) or fresh processes.
for path, name in zip(sys.argv[1:3], ("PyTorch's route", "the fast route")):
    made = [e for f in builds(path) if isinstance(f["extensions"], list) for e in f["extensions"] if not e.get("from_cache")]
    if made:
        print(f"{name}'s builds forked from their build pass: {sum(e.get('process') == 'fork' for e in made)} of {len(made)}")
fast_alone = [n for n, f in after.items() if f.get("routes") == {"fast"}]
print(f"files whose extensions the fast route built alone: {len(fast_alone)} of {len(after)} "
      f"({100 * len(fast_alone) / max(1, len(after)):.0f}%)")
for n, f in sorted(after.items()):
    if "pytorch" in f.get("routes", ()):
        print(f"  fell back to PyTorch's route: {n}")

# The same library? nvcc's objects name its temporary files, and a source that uses __FILE__
# (TORCH_CHECK does) holds its build directory's path, which differs between the routes: so the
# device code is compared (the .nv_fatbin section, the cubins, of both routes' libraries), and the
# binding objects' machine code (objdump -d but its first lines, which name the file). A build whose
# flags ask for line information (-lineinfo) also writes its source's path (the scratch directory,
# <key>.tmp.<pid>.<n>) and time into the cubin's line table and its compressed PTX: there the SASS
# decides (cuobjdump -sass, that path masked), and the summary counts those files apart.
def machine_code(obj):
    return subprocess.run(["objdump", "-d", obj], capture_output=True, text=True).stdout.split("\n", 3)[-1]

def entry(record):
    return os.path.join(sys.argv[3], record["key"])

def scratch(record):  # the build's scratch directory, as a pattern: the same token stands for it in both routes
    return re.escape(entry(record)) + r"\.tmp\.[0-9]+\.[0-9]+"

def section(library):  # the hash nvcc names a unit's internal symbols after follows its text: masked
    with tempfile.NamedTemporaryFile() as out:
        done = subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", library, out.name])
        code = open(out.name, "rb").read() if done.returncode == 0 else None
    unit = code and re.search(rb"_INTERNAL_([0-9a-f]{8})_", code)
    return code.replace(unit.group(1), b"########") if unit else code

def sass(library, record):  # the machine code alone, its unit hash masked: a differing data byte shows not here
    try:
        done = subprocess.run(["cuobjdump", "-sass", library], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    if done.returncode or not done.stdout.strip():
        return None
    return re.sub(scratch(record), "<scratch>", re.sub(r"_INTERNAL_[0-9a-f]{8}_", "_INTERNAL_########_", done.stdout))

def strings(code):
    return set(re.findall(rb"[ -~]{8,}", code or b""))

def compare(pair):  # (device code: "same", "same SASS" or "differs", same binding code, what differs), None where not compared
    (slow, fast), name = pair
    libraries = [glob.glob(os.path.join(entry(r), "*.so")) for r in (slow, fast)]
    device = binding = None
    detail = ""
    if all(libraries) and "cuda.cuda.o" in fast.get("steps", {}):
        fatbins = [section(l[0]) for l in libraries]
        device = "same" if fatbins[0] is not None and fatbins[0] == fatbins[1] else None
        if fatbins[0] is not None and not device:
            codes = [sass(l[0], r) for l, r in zip(libraries, (slow, fast))]
            device = "same SASS" if None not in codes and codes[0] == codes[1] else "differs"
        if device == "differs":
            diff = [] if None in codes else list(difflib.unified_diff(codes[0].splitlines(), codes[1].splitlines(), "pytorch", "fast", n=0, lineterm=""))
            only = [sorted(strings(a) - strings(b))[:3] for a, b in ((fatbins[0], fatbins[1]), (fatbins[1], fatbins[0]))]
            detail = (f"{name} ({fast['key']}): .nv_fatbin {len(fatbins[0])} against {len(fatbins[1])} bytes; "
                      f"SASS {'not read (cuobjdump)' if None in codes else 'differs'}; "
                      f"strings only in PyTorch's route's {only[0]}, only in the fast route's {only[1]}")
            detail += "".join(f"\n      {l[:160]}" for l in diff[:24])
        elif device == "same SASS":
            detail = f"{name} ({fast['key']}): the same SASS, the .nv_fatbin not (line information: the build's path and time)"
    objects = [os.path.join(entry(r), "main.o") for r in (slow, fast)]
    if all(os.path.exists(o) for o in objects):
        binding = machine_code(objects[0]) == machine_code(objects[1])
    return device, binding, detail

pairs, seen = [], set()
for files in zip(*(builds(path) for path in sys.argv[1:3])):
    if any(isinstance(p["extensions"], dict) for p in files):
        continue
    for slow, fast in zip(files[0]["extensions"], files[1]["extensions"]):
        if slow["ok"] and fast["ok"] and fast["key"] not in seen:
            seen.add(fast["key"])
            pairs.append(((slow, fast), os.path.basename(files[1]["file"])))
# objdump over a binding object takes seconds: the pairs side by side, on every core
with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
    compared = list(pool.map(compare, pairs))
same_device = sum(d in ("same", "same SASS") for d, _, _ in compared)
same_sass = sum(d == "same SASS" for d, _, _ in compared)
compared_device = sum(d is not None for d, _, _ in compared)
same_binding = sum(b is True for _, b, _ in compared)
compared_binding = sum(b is not None for _, b, _ in compared)
print(f"same device code by both routes: {same_device} of {compared_device} CUDA extensions "
      f"({same_device - same_sass} the same .nv_fatbin, {same_sass} the same SASS); "
      f"same machine code in the binding objects: {same_binding} of {compared_binding}")
for device, _, detail in compared:
    if detail:
        print(f"  {'device code differs' if device == 'differs' else 'line information differs'}: {detail}")
differ = sorted(n for n in before.keys() & after.keys() if before[n].get("ok") != after[n].get("ok"))
if before and after:
    print(f"files whose build result differs between the routes: {len(differ)}")
for n in differ:
    print(f"  {n}: PyTorch's route {'built' if before[n].get('ok') else 'failed'}, "
          f"the fast route {'built' if after[n].get('ok') else 'failed'}")
EOF
fi

if wanted 2; then
echo "== 2. where the time goes: L1#19's ReLU (tests/fixtures/modelnew/l1_19_relu.py), its build's own commands"
ONE=$(relu_alone "$LOGS/one")
$KB --json batch "$ONE" --build-only >"$LOGS/one.json" 2>"$LOGS/one.err"
# Section 1 built this file already, maybe while its precompiled header was still being made: then
# its recorded commands have no header to measure with. Built again, it finds the header ready.
stale=$(python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["builds"][0]["extensions"][0]
print(e["key"] if e.get("pch") not in ("used", "built") else "")' "$LOGS/one.json")
if [[ -n $stale ]]; then
  rm -rf "${KBENCH_CACHE:?}/extensions/$stale"
  $KB --json batch "$ONE" --build-only >"$LOGS/one.json" 2>"$LOGS/one.err"
fi
python3 - "$LOGS/one.json" "$KBENCH_CACHE/extensions" "$LOGS" <<'EOF'
import csv, json, os, re, resource, subprocess, sys
record = json.load(open(sys.argv[1]))["builds"][0]["extensions"][0]
entry, out = os.path.join(sys.argv[2], record["key"]), sys.argv[3]
# The fast route's own commands (build-commands.sh), each with its output elsewhere; the binding
# file's also without the precompiled header.
commands = [re.sub(re.escape(record["key"]) + r"\.tmp\.\d+\.\d+", record["key"], line.strip())  # the scratch directory it was
            for line in open(os.path.join(entry, "build-commands.sh")) if not line.startswith("#")]
binding = next(c for c in commands if c.endswith(" -o 'main.o'") or " -o 'main.o' " in c)
nvcc = next(c for c in commands if " -o 'cuda.cuda.o'" in c)
without_header = re.sub(r" -I'[^']*extension-pch[^']*' -Winvalid-pch -Wno-error=invalid-pch", "", binding)

def timed(command):  # CPU seconds of the command and all it runs
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, shell=True, cwd=entry, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        print(f"  failed: {command}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime

elsewhere = lambda c, o: c.replace(f" -o '{o}'", f" -o '{out}/{o}'")
plain = timed(elsewhere(without_header, "main.o"))
syntax = timed(without_header.replace(" -c ", " -fsyntax-only ", 1).replace(" -o 'main.o'", ""))
with_header = timed(elsewhere(binding, "main.o"))
cuda = timed(elsewhere(nvcc, "cuda.cuda.o") + f" --time '{out}/nvcc-time.csv'")
phases = [(row[1].strip(), float(row[6])) for row in csv.reader(open(f"{out}/nvcc-time.csv")) if row[6].strip()[:1].isdigit()]
steps = record.get("steps", {})
print(f"  the binding file: {plain:.1f} CPU s without the precompiled header (g++ -fsyntax-only {syntax:.1f}), "
      f"{with_header:.1f} with it (this build's header: {record.get('pch', '?')})")
print(f"  nvcc: {cuda:.1f} CPU s; " + ", ".join(f"{name} {ms / 1000:.2f}" for name, ms in phases) + " (s, nvcc --time)")
print(f"  planning {steps.get('plan', {}).get('cpu_s', 0):.1f}, link {steps.get('link', {}).get('cpu_s', 0):.2f} CPU s; "
      f"the fast route's whole build (section 1) {record.get('cpu_seconds', 0):.1f} CPU s, {record.get('seconds', 0):.1f} s wall")
EOF
fi

if wanted 3; then
RUN=$LOGS/fifty
rm -rf "$RUN" && mkdir -p "$RUN"
for i in $(seq 0 49); do
  sed "s|#include <cuda_runtime.h>|#include <cuda_runtime.h>\n// variant $i|" tests/fixtures/modelnew/l1_19_relu.py \
    >"$RUN/level_1_problem_19_sample_${i}_kernel.py"
done
TIMEFORMAT="%R %U %S"
CORES=${BENCH_CORES:-$(nproc)}
for route in ${BENCH_ROUTES:-pytorch fast}; do
  echo "== 3. 50 distinct ModelNew files, kbench batch --build-only, $route route (the fast route's headers ready), $CORES cores"
  rm -rf "$KBENCH_CACHE/extensions"
  # Run under a Python that then reads its children's peak resident memory: the largest process's.
  { time KBENCH_EXTENSION_BUILD=$route python3 -c 'import resource, subprocess, sys
code = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(code)' "$LOGS/fifty-$route.rss" taskset -c "0-$((CORES - 1))" $KB batch "$RUN" --build-only \
      --compile-threads "$CORES" >"$LOGS/fifty-$route.txt" 2>&1; } 2>"$LOGS/fifty-$route.time"
  cat "$LOGS/fifty-$route.txt"
  read -r wall user sys <"$LOGS/fifty-$route.time"
  python3 -c "
wall, cpu = $wall, $user + $sys
print(f'50 files: wall {wall:.1f} s, CPU {cpu:.0f} s ({cpu / 50:.1f} CPU s a file), {cpu / wall:.1f} cores busy on average of $CORES; '
      f'the largest process at its peak {$(cat "$LOGS/fifty-$route.rss" 2>/dev/null || echo 0) / 2**20:.2f} GiB resident')"
done
fi

if wanted 4; then
echo "== 4. a lone cold file (L1#19's ReLU), every cache empty, $(nproc) cores"
LONE=$(relu_alone "$LOGS/lone")
TIMEFORMAT="%R %U %S"
report() { read -r wall user sys <"$2"; python3 -c 'import sys; print(f"  {sys.argv[1]}: wall {float(sys.argv[2]):.1f} s, CPU {float(sys.argv[3]) + float(sys.argv[4]):.1f} s")' "$1" "$wall" "$user" "$sys"; }
python3 scripts/tools/export_problems.py --only 1:19 >"$LOGS/lone-export.log" 2>&1  # into this cache, for eval
clear_build_caches() { rm -rf "$KBENCH_CACHE/extensions" "$KBENCH_CACHE/extension-pch" "$KBENCH_CACHE/extension-headers" "$KBENCH_CACHE/prebuild"; }
# Each attempt runs all four, one after the other, so that a run cut short still compares them.
for attempt in $(seq "${BENCH_ATTEMPTS:-2}"); do
  rm -rf "$LOGS/torch-extensions"
  { time TORCH_EXTENSIONS_DIR=$LOGS/torch-extensions python3 -c \
      "import runpy; runpy.run_path('tests/fixtures/modelnew/l1_19_relu.py')" >"$LOGS/lone-torch.log" 2>&1; } 2>"$LOGS/lone.time"
  report "PyTorch's load_inline (python3 runs the file), attempt $attempt" "$LOGS/lone.time"
  clear_build_caches
  { time $KB --json batch "$LONE" --build-only >"$LOGS/lone-kbench.json" 2>&1; } 2>"$LOGS/lone.time"
  report "kbench batch --build-only, attempt $attempt" "$LOGS/lone.time"
  python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["builds"][0]["extensions"][0]
print("    the build:", {k: e.get(k) for k in ("seconds", "cpu_seconds", "headers", "pch")}, {s: v["wall_s"] for s, v in e.get("steps", {}).items()})' \
    "$LOGS/lone-kbench.json"
  # The same through kbench eval: the build, then the checks and timing (on a GPU).
  clear_build_caches
  { time $KB --json eval "$LONE/level_1_problem_19_sample_0_kernel.py" --level 1 --problem 19 >"$LOGS/lone-eval.json" 2>&1; } \
    2>"$LOGS/lone.time"
  report "kbench eval (build, checks, timing), attempt $attempt" "$LOGS/lone.time"
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); e = r["compile"]["extensions"][0]
print("    verdict", r.get("verdict"), "- the build:", {k: e.get(k) for k in ("seconds", "cpu_seconds", "headers", "pch")})' \
    "$LOGS/lone-eval.json" 2>&1 | tail -1
  clear_build_caches
  python3 scripts/bench/serve_bench.py "$BUILD" "$LOGS" modelnew-cold 2>&1 | grep -v '^ *(\|^== '
done
fi
echo "logs: $LOGS"
