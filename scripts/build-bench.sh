#!/usr/bin/env bash
# ModelNew extension builds: PyTorch's own route against kbench's fast route (README, "How a ModelNew
# extension is built"). On a GPU machine after the GPU build (scripts/gpu-session.sh build-bench);
# on the CPU setup PyTorch's route builds no CUDA extension (the figures then say so). Prints:
#  1. Cold builds per file, over every ModelNew file of tests/modelnew that calls load_inline and
#     every file of tests/build_corpus, through `kbench batch --build-only` with an empty extension
#     cache: once by PyTorch's route (KBENCH_EXTENSION_BUILD=pytorch), once by kbench's fast route
#     with an empty precompiled-header cache too. Per file (its extensions' builds added up): the
#     median and worst CPU seconds and wall seconds; the fast route's also over the files whose
#     binding file found its precompiled header ready (the steady state), with what making the
#     headers cost; the share of files the fast route built alone; files whose build result differs
#     between the routes. BENCH_THREADS files build at once (default 8), each with MAX_JOBS=2 (its
#     C++ and CUDA files side by side, by either route).
#  2. 50 distinct ModelNew files (the L1#19 ReLU, each source its own) through --build-only by the
#     fast route, headers ready, on all cores: wall and CPU seconds.
#   scripts/build-bench.sh [build-dir (build-gpu)] [log-dir]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
LOGS=${2:-$(mktemp -d)}
KB=$PWD/$BUILD/kbench
THREADS=${BENCH_THREADS:-8}
# A cache of the benchmark's own: the user's extensions and headers stay; Python's bytecode is
# compiled once first (kbench doctor starts kbench's Python), so that no build pays for it.
export KBENCH_CACHE=$LOGS/cache
mkdir -p "$KBENCH_CACHE"
$KB doctor >/dev/null 2>&1

FILES=$LOGS/files
rm -rf "$FILES" && mkdir -p "$FILES"
# The fixtures under the names kbench batch reads (level and problem from tests/modelnew/expected.json).
python3 - "$FILES" <<'EOF'
import json, os, shutil, sys
table = json.load(open("tests/modelnew/expected.json"))["submissions"]
for sample, entry in enumerate(table):
    source = os.path.join("tests/modelnew", entry["file"])
    if "load_inline(" in open(source).read():
        shutil.copy(source, os.path.join(sys.argv[1], f"level_{entry['level']}_problem_{entry['problem']}_sample_{100 + sample}_kernel.py"))
EOF
cp tests/build_corpus/*.py "$FILES/"
echo "== 1. cold builds of $(ls "$FILES" | wc -l) files, $THREADS at a time ($(nproc) cores)"
for route in pytorch fast; do
  rm -rf "$KBENCH_CACHE/extensions" "$KBENCH_CACHE/extension-pch"
  start=$(date +%s.%N)
  KBENCH_EXTENSION_BUILD=$route MAX_JOBS=2 $KB --json batch "$FILES" --build-only --compile-threads "$THREADS" \
    >"$LOGS/builds-$route.json" 2>"$LOGS/builds-$route.err"
  echo "$route route: $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.0f}')" "$start" "$(date +%s.%N)") s wall"
done
python3 - "$LOGS/builds-pytorch.json" "$LOGS/builds-fast.json" <<'EOF'
import json, statistics, sys

def per_file(path):
    files = {}
    for entry in json.load(open(path))["builds"]:
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
            "pch": [e.get("pch", "") for e in built],
            "cuda": any("cuda.cuda.o" in e.get("steps", {}) for e in built),
            "pch_cpu": sum(e.get("steps", {}).get("pch", {}).get("cpu_s", 0) for e in built)}
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
    ok = {n: f for n, f in files.items() if f.get("ok")}
    print(f"{name}: {len(ok)} of {len(files)} files built")
    line("all that built", list(ok.values()))
    line("with CUDA sources", [f for n, f in ok.items() if n in cuda])
    line("C++ only", [f for n, f in ok.items() if n not in cuda])
fast_ok = [f for f in after.values() if f.get("ok")]
ready = [f for f in fast_ok if all(p == "used" for p in f["pch"])]
making = [f for f in fast_ok if any(p == "built" for p in f["pch"])]
without = [f for f in fast_ok if any(p.startswith("not used") or p.startswith("rejected") for p in f["pch"])]
line("fast, binding header precompiled and ready", ready)
line("fast, made a precompiled header", making)
line("fast, compiled without one (being made, ...)", without)
if making:
    print(f"  making the precompiled headers: {len(making)} of them, {statistics.median(f['pch_cpu'] for f in making):.1f} "
          f"CPU s each (median)")
fast_alone = [n for n, f in after.items() if f.get("routes") == {"fast"}]
print(f"files whose extensions the fast route built alone: {len(fast_alone)} of {len(after)} "
      f"({100 * len(fast_alone) / max(1, len(after)):.0f}%)")
for n, f in sorted(after.items()):
    if "pytorch" in f.get("routes", ()):
        print(f"  fell back to PyTorch's route: {n}")
differ = sorted(n for n in before.keys() & after.keys() if before[n].get("ok") != after[n].get("ok"))
print(f"files whose build result differs between the routes: {len(differ)}")
for n in differ:
    print(f"  {n}: PyTorch's route {'built' if before[n].get('ok') else 'failed'}, "
          f"the fast route {'built' if after[n].get('ok') else 'failed'}")
EOF

echo "== 2. 50 distinct ModelNew files, kbench batch --build-only (fast route, headers ready)"
RUN=$LOGS/fifty
rm -rf "$RUN" "$KBENCH_CACHE/extensions" && mkdir -p "$RUN"
for i in $(seq 0 49); do
  sed "s|#include <cuda_runtime.h>|#include <cuda_runtime.h>\n// variant $i|" tests/modelnew/l1_19_relu.py \
    >"$RUN/level_1_problem_19_sample_${i}_kernel.py"
done
TIMEFORMAT="%R %U %S"
{ time $KB batch "$RUN" --build-only >"$LOGS/fifty.txt" 2>&1; } 2>"$LOGS/fifty.time"
cat "$LOGS/fifty.txt"
read -r wall user sys <"$LOGS/fifty.time"
python3 -c "
wall, cpu = $wall, $user + $sys
print(f'50 files: wall {wall:.1f} s, CPU {cpu:.0f} s ({cpu / 50:.1f} CPU s a file), {cpu / wall:.1f} cores busy on average of $(nproc)')"
echo "logs: $LOGS"
