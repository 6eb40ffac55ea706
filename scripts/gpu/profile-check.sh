#!/usr/bin/env bash
# On a GPU machine after the build: kbench eval --profile on the reference kernels of L1#19, L1#37
# (two launches) and L3#4 (LeNet-5) and on an L2#12 submission that calls cuBLAS beside its epilogue
# kernel (tests/fixtures/submissions/l2_12_cublas_epilogue.cu), --ncu on L1#19, a refinement prompt built from
# L2#12's record, and the profile's GPU tests; one compact summary.
# A pass: every record 'correct' with a profile; 'sum/timed' near 1 for L1#19 and L1#37 (kernel
# times add up to the timed mean; L3#4's small kernels leave launch gaps, shown as 'gaps');
# L2#12's reference names a GEMM kernel under aten::linear with most of the time; the ncu line
# shows per-kernel figures or says ncu is absent; the prompt excerpt shows the breakdown; the
# tests pass. Usage: scripts/gpu/profile-check.sh [build-dir] [out-dir]
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
OUT_DIR=${2:-${OUT:-/tmp}/profile-check}
mkdir -p "$OUT_DIR"
export KBENCH_CACHE=${KBENCH_CACHE:-$PWD/$BUILD/cache}
KB=$BUILD/kbench
if grep -q "KBENCH_LIBCSV_LIBRARY:FILEPATH=.*NOTFOUND" "$BUILD/CMakeCache.txt" 2>/dev/null; then
  echo "note: $BUILD was built without libcsv, so --ncu will say so; with the carried packages:"
  echo "      dpkg -i .carry/debs/*.deb && cmake --preset gpu && cmake --build --preset gpu"
fi
python3 scripts/tools/export_problems.py --only 1:19 1:37 2:12 3:4 >"$OUT_DIR/export.log" 2>&1 || tail -5 "$OUT_DIR/export.log"
for c in "level1/19_ReLU.cu 1 19" "level1/37_FrobeniusNorm_.cu 1 37" "tests/fixtures/submissions/l2_12_cublas_epilogue.cu 2 12" "level3/4_LeNet5.cu 3 4"; do
  read -r file level problem <<<"$c"
  start=$SECONDS
  $KB eval "$file" --level "$level" --problem "$problem" --profile --out "$OUT_DIR/profile-$level-$problem.json" \
    >"$OUT_DIR/profile-$level-$problem.log" 2>&1
  echo "== eval --profile L$level#$problem: $((SECONDS - start)) s, rc=$?"
done
start=$SECONDS
$KB eval level1/19_ReLU.cu --level 1 --problem 19 --ncu --timing-trials 20 --out "$OUT_DIR/ncu-1-19.json" >"$OUT_DIR/ncu.log" 2>&1
echo "== eval --ncu L1#19: $((SECONDS - start)) s, rc=$?"
python3 - "$OUT_DIR" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def short(name, n=60):
    name = name[5:] if name.startswith("void ") else name
    return name[:n]
print(f"{'problem':28s} {'verdict':8s} {'timed':>8s} {'forward':>8s} {'kernels':>8s} {'ops':>8s} {'sum/timed':>9s} {'gaps':>7s} "
      f"{'x floor':>7s} {'FLOP%':>6s} {'cost':>6s}")
for path in sorted(out.glob("profile-*.json")):
    r = json.loads(path.read_text())
    p = r.get("profile", {})
    c = p.get("candidate", {})
    name = r.get("problem", {}).get("name", path.stem)
    if not c:
        print(f"{name:28s} {r.get('verdict', '?'):8s} no candidate profile: {json.dumps(p)[:200]}")
        continue
    timed = c.get("timed_mean_ms", 0)
    summed = c.get("kernels_ms", 0) + c.get("torch_ops_ms", 0)
    roof = p.get("roofline", {}).get("candidate", {})
    print(f"{name:28s} {r.get('verdict', '?'):8s} {timed:8.4f} {c.get('forward_ms', 0):8.4f} {c.get('kernels_ms', 0):8.4f} "
          f"{c.get('torch_ops_ms', 0):8.4f} {summed / timed if timed else 0:9.3f} {c.get('launch_overhead_ms', 0):7.4f} "
          f"{roof.get('times_floor', 0):7.2f} {100 * roof.get('flops_fraction', 0):6.1f} {p.get('cost_ms', 0):6.0f}")
    for k in c.get("kernels", [])[:3]:
        print(f"    kernel {k['kernel']}: x{k['launches']} {k['gpu_ms']:.4f} ms ({100 * k['share']:.1f}%), "
              f"{k.get('registers_per_thread')} regs, occupancy {100 * k.get('occupancy', 0):.0f}% ({k.get('limited_by')}); {k.get('bound')}")
    for o in c.get("torch_ops_summary", [])[:2]:
        print(f"    torch op {o['op']}: x{o['calls']} {o['gpu_ms']:.4f} ms ({100 * o['share']:.1f}%)")
    ref = p.get("reference", {})
    if "ops" in ref:
        for o in ref["ops"][:3]:
            k = o["kernels"][0] if o["kernels"] else {"name": "-", "launches": 0}
            print(f"    reference {o['op']}: {o['gpu_ms']:.4f} ms ({100 * o['share']:.1f}%), {short(k['name'])} x{k['launches']}")
        print(f"    reference GPU total {ref['gpu_ms']:.4f} ms against its eager mean {r['timing']['eager']['mean_ms']:.4f} ms; "
              f"FLOPs {ref.get('flops')}")
    else:
        print(f"    reference: {json.dumps(ref)[:200]}")
n = json.loads((out / "ncu-1-19.json").read_text()) if (out / "ncu-1-19.json").exists() else {}
ncu = n.get("profile", {}).get("ncu", {})
print("ncu (L1#19):", json.dumps({k: v for k, v in ncu.items() if k != "kernels"})[:600])
for k in n.get("profile", {}).get("candidate", {}).get("kernels", []):
    print(f"    {k['kernel']}: ncu {json.dumps(k.get('ncu'))[:400]}; bound: {k.get('bound')}")
PY
$KB prompt --level 2 --problem 12 --feedback "$OUT_DIR/profile-2-12.json" >"$OUT_DIR/prompt-2-12.txt" 2>&1
echo "== the refinement prompt's breakdown (L2#12):"
sed -n '/^Where the time goes/,/^$/p' "$OUT_DIR/prompt-2-12.txt" | cut -c1-220 | head -24
start=$SECONDS
ctest --test-dir "$BUILD" -L gpu -R "profile|breakdown|ncu" --output-on-failure -j1 >"$OUT_DIR/ctest.log" 2>&1
echo "== ctest -L gpu -R 'profile|breakdown|ncu': $((SECONDS - start)) s, rc=$?"
grep -E "tests passed|tests failed|\(Failed\)|\(SEGFAULT\)|Timeout|Not Run" "$OUT_DIR/ctest.log" | head -10
