#include "check/compare_kernels.h"

#include "log/log.h"

#ifdef KBENCH_WITH_CUDA
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include <ATen/cuda/CUDAContext.h>
#include <cuda.h>

#include "compile/compile_cache.h"
#include "launch/cuda_driver.h"
#include "problems/catalog.h"
#endif

namespace kbench::check {

// CUDA source text, not C++ logic: its length is the kernels'.
const std::string& compare_kernels_source() {
  // Elementwise, as compare.cpp's PyTorch ops compute it in float32: diff = |x - r|, bad where not
  // diff <= |r| * rtol + atol unless x == r or both are NaN; KernelBench's bad where not x == r and
  // not (diff finite and diff <= |x| * t + t), as torch.allclose(r, x, t, t); the maxima over diff
  // with NaN as 0. __f*_rn keep each operation rounded on its own, as separate PyTorch kernels are.
  // kbench's atol depends on the mean |r| (check/compare.h), known only after a pass over r, so the
  // first pass does all it can without it: the mean, KernelBench's rule, the maxima, and for
  // kbench's rule the largest excess fl(diff - |r| * rtol) over the elements not exempt. Where that
  // excess is clearly below the atol, no element is bad (fused_compare says why), and the outputs
  // were read once; otherwise the second pass counts the bad ones with the atol.
  static const std::string source = R"(
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity) {
  __shared__ T warps[32];
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : identity;
  if (threadIdx.x < 32)
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  __syncthreads();
  return v;
}

struct Add { template <typename T> __device__ T operator()(T a, T b) const { return a + b; } };
struct Min { __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a < b ? a : b; } };
struct Max { __device__ unsigned int operator()(unsigned int a, unsigned int b) const { return a > b ? a : b; } };

// visit(r[i], x[i], i) for this thread's share of the elements: 16-byte loads where both arrays
// allow them (a plain float load per element reached about half the memory bandwidth), the rest
// one by one.
template <typename Visit>
__device__ void for_each_pair(const float* __restrict__ r, const float* __restrict__ x, long long n, Visit& visit) {
  const long long start = blockIdx.x * (long long)blockDim.x + threadIdx.x, stride = (long long)gridDim.x * blockDim.x;
  long long done = 0;
  if ((((unsigned long long)r | (unsigned long long)x) & 15) == 0) {
    const float4* r4 = (const float4*)r;
    const float4* x4 = (const float4*)x;
    const long long vectors = n >> 2;
    for (long long v = start; v < vectors; v += stride) {
      const float4 a = r4[v], b = x4[v];
      visit(a.x, b.x, 4 * v);
      visit(a.y, b.y, 4 * v + 1);
      visit(a.z, b.z, 4 * v + 2);
      visit(a.w, b.w, 4 * v + 3);
    }
    done = vectors << 2;
  }
  for (long long i = done + start; i < n; i += stride) visit(r[i], x[i], i);
}

// What both passes find of KernelBench's rule and of the errors' size.
struct Upstream {
  float upstream_tolerance;
  unsigned long long bad = 0, first = ~0ull;
  float max_abs = 0.f, max_rel = 0.f;
  __device__ void visit(float rv, float xv, float diff, float r_abs, long long i) {
    const bool close = xv == rv || (isfinite(diff) && diff <= __fadd_rn(__fmul_rn(fabsf(xv), upstream_tolerance), upstream_tolerance));
    if (!close) { ++bad; if (first == ~0ull) first = i; }
    const float finite = isnan(diff) ? 0.f : diff;
    max_abs = fmaxf(max_abs, finite);
    max_rel = fmaxf(max_rel, __fdiv_rn(finite, fmaxf(r_abs, 1e-12f)));
  }
  // counts[1], firsts[1], maxima[0..1]
  __device__ void publish(unsigned long long* counts, unsigned long long* firsts, unsigned int* maxima) {
    bad = block_reduce(bad, Add(), 0ull);
    first = block_reduce(first, Min(), ~0ull);
    const unsigned int abs_bits = block_reduce(__float_as_uint(max_abs), Max(), 0u);
    const unsigned int rel_bits = block_reduce(__float_as_uint(max_rel), Max(), 0u);
    if (threadIdx.x == 0) {
      atomicAdd(&counts[1], bad);
      atomicMin(&firsts[1], first);
      atomicMax(&maxima[0], abs_bits);  // non-negative floats order as their bit patterns
      atomicMax(&maxima[1], rel_bits);
    }
  }
};

__device__ bool exempt(float rv, float xv) { return xv == rv || (isnan(rv) && isnan(xv)); }

// Pass 1. sum: of |r| over the finite values; maxima[2]: the largest excess, as bits (NaN's bits,
// which order above infinity's, where diff is NaN: such an element passes under no atol).
extern "C" __global__ void kbench_compare_first(const float* __restrict__ r, const float* __restrict__ x, long long n,
                                                float rtol, float upstream_tolerance, double* __restrict__ sum,
                                                unsigned long long* __restrict__ counts,
                                                unsigned long long* __restrict__ firsts,
                                                unsigned int* __restrict__ maxima) {
  struct {
    Upstream up;
    float rtol;
    double sum = 0;
    unsigned int excess = 0;  // bits of a non-negative float, or NaN's
    __device__ void operator()(float rv, float xv, long long i) {
      const float diff = fabsf(__fsub_rn(xv, rv)), r_abs = fabsf(rv);
      if (isfinite(r_abs)) sum += r_abs;
      if (!exempt(rv, xv)) {
        const float e = __fsub_rn(diff, __fmul_rn(r_abs, rtol));
        excess = max(excess, isnan(e) ? 0x7fffffffu : __float_as_uint(fmaxf(e, 0.f)));
      }
      up.visit(rv, xv, diff, r_abs, i);
    }
  } v{{upstream_tolerance}, rtol};
  for_each_pair(r, x, n, v);
  const double s = block_reduce(v.sum, Add(), 0.0);
  const unsigned int excess_bits = block_reduce(v.excess, Max(), 0u);
  if (threadIdx.x == 0) {
    atomicAdd(sum, s);
    atomicMax(&maxima[2], excess_bits);
  }
  v.up.publish(counts, firsts, maxima);
}

// Pass 2, with kbench's atol. counts: bad, bad_upstream, nan_bad; firsts: first bad, first bad
// upstream (start at ~0); maxima: bit patterns of the non-negative float maxima of the absolute and
// the relative error.
extern "C" __global__ void kbench_compare(const float* __restrict__ r, const float* __restrict__ x, long long n,
                                          float rtol, float atol, float upstream_tolerance,
                                          unsigned long long* __restrict__ counts,
                                          unsigned long long* __restrict__ firsts,
                                          unsigned int* __restrict__ maxima) {
  struct {
    Upstream up;
    float rtol, atol;
    unsigned long long bad = 0, nan_bad = 0, first = ~0ull;
    __device__ void operator()(float rv, float xv, long long i) {
      const float diff = fabsf(__fsub_rn(xv, rv)), r_abs = fabsf(rv);
      if (!(diff <= __fadd_rn(__fmul_rn(r_abs, rtol), atol)) && !exempt(rv, xv)) { ++bad; if (first == ~0ull) first = i; }
      if (isnan(xv) && !isnan(rv)) ++nan_bad;
      up.visit(rv, xv, diff, r_abs, i);
    }
  } v{{upstream_tolerance}, rtol, atol};
  for_each_pair(r, x, n, v);
  const unsigned long long bad = block_reduce(v.bad, Add(), 0ull);
  const unsigned long long nan_bad = block_reduce(v.nan_bad, Add(), 0ull);
  const unsigned long long first = block_reduce(v.first, Min(), ~0ull);
  if (threadIdx.x == 0) {
    atomicAdd(&counts[0], bad);
    atomicAdd(&counts[2], nan_bad);
    atomicMin(&firsts[0], first);
  }
  v.up.publish(counts, firsts, maxima);
}

// The three sums of check::fingerprint in one pass over 32-bit words: all of them, those at i % 3 == 0,
// those at i % 7 == 1 (sums wrap as int64 does). The residues step by the grid's stride, not by a
// 64-bit division per word.
extern "C" __global__ void kbench_fingerprint(const int* __restrict__ w, long long n, unsigned long long* __restrict__ sums) {
  unsigned long long total = 0, third = 0, seventh = 0;
  const long long start = blockIdx.x * (long long)blockDim.x + threadIdx.x, stride = (long long)gridDim.x * blockDim.x;
  int mod3 = (int)(start % 3), mod7 = (int)(start % 7);
  const int step3 = (int)(stride % 3), step7 = (int)(stride % 7);
  for (long long i = start; i < n; i += stride) {
    const unsigned long long v = (unsigned long long)(long long)w[i];
    total += v;
    if (mod3 == 0) third += v;
    if (mod7 == 1) seventh += v;
    mod3 += step3; if (mod3 >= 3) mod3 -= 3;
    mod7 += step7; if (mod7 >= 7) mod7 -= 7;
  }
  total = block_reduce(total, Add(), 0ull);
  third = block_reduce(third, Add(), 0ull);
  seventh = block_reduce(seventh, Add(), 0ull);
  if (threadIdx.x == 0) {
    atomicAdd(&sums[0], total);
    atomicAdd(&sums[1], third);
    atomicAdd(&sums[2], seventh);
  }
}
)";
  return source;
}

#ifdef KBENCH_WITH_CUDA
namespace {

constexpr int kThreads = 256;

// A kernel and the blocks that fill the GPU in one wave: a grid-stride loop over more blocks than
// can be resident runs a second, partly empty wave after the first.
struct Kernel {
  CUfunction fn = nullptr;
  int blocks = 0;
};

struct CompareKernels {
  std::unique_ptr<launch::LoadedModule> module;
  Kernel first_pass, compare, fingerprint;
};

// Per device, made on first use; null when the kernels could not be made (then PyTorch's ops run).
const CompareKernels* kernels_for_current_device() {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<CompareKernels>> made;
  const int device = at::cuda::current_device();
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = made.find(device); it != made.end()) return it->second.get();
  auto& slot = made[device];
  try {
    const auto gpu = launch::query_device(device);
    const compile::CompileCache cache(problems::cache_dir() / "compile");
    compile::CompileOptions options;
    options.arch = gpu.arch();
    const auto code = compile::compile_device_source(compare_kernels_source(), "kbench_compare.cu", options, &cache);
    if (!code.ok) throw std::runtime_error(code.log);
    auto k = std::make_unique<CompareKernels>();
    k->module = std::make_unique<launch::LoadedModule>(code.cubin, code.kernels);
    const auto kernel = [&](const char* name) {
      Kernel made{static_cast<CUfunction>(k->module->find(name)->function), 0};
      int per_sm = 0;
      if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, made.fn, kThreads, 0) != CUDA_SUCCESS || per_sm < 1) per_sm = 1;
      made.blocks = gpu.multiprocessors * per_sm;
      return made;
    };
    k->first_pass = kernel("kbench_compare_first");
    k->compare = kernel("kbench_compare");
    k->fingerprint = kernel("kbench_fingerprint");
    slot = std::move(k);
  } catch (const std::exception& e) {
    log::warn(std::string("the fused comparison kernels are unavailable, PyTorch's ops compare instead: ") + e.what());
  }
  return slot.get();
}

bool applies(const at::Tensor& t) { return t.is_cuda() && t.scalar_type() == at::kFloat && t.is_contiguous(); }

void launch(const Kernel& k, int64_t n, void** args) {
  const auto wanted = (n + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(k.blocks, wanted)));
  const CUresult r = cuLaunchKernel(k.fn, grid, 1, 1, kThreads, 1, 1, 0, at::cuda::getCurrentCUDAStream().stream(), args, nullptr);
  if (r != CUDA_SUCCESS) throw std::runtime_error("launching kbench's comparison kernel failed (CUresult " + std::to_string(r) + ")");
}

// What a comparison pass writes, in one device buffer that one copy brings back: the sum of |r|,
// the counts (bad, bad upstream, NaN where the reference has none), the first bad indices (~0: none),
// and the maxima's bits (absolute error, relative error, excess).
struct PassResults {
  double sum;
  uint64_t counts[3];
  uint64_t firsts[2];
  uint32_t maxima[4];
};

// Launches `kernel` over `ref`'s elements with the arguments `scalars` makes from the parts of a
// fresh PassResults on the device (zeroed, firsts at ~0), and returns what the kernel wrote there.
template <typename Args>
PassResults run_pass(const Kernel& kernel, const at::Tensor& ref, Args&& scalars) {
  PassResults start{};
  start.firsts[0] = start.firsts[1] = ~uint64_t{0};
  auto host = at::empty({static_cast<int64_t>(sizeof(PassResults))}, at::kByte);
  std::memcpy(host.data_ptr(), &start, sizeof start);
  auto device = host.to(ref.device());
  auto* base = static_cast<char*>(device.data_ptr());
  void* sum = base + offsetof(PassResults, sum);
  void* counts = base + offsetof(PassResults, counts);
  void* firsts = base + offsetof(PassResults, firsts);
  void* maxima = base + offsetof(PassResults, maxima);
  auto args = scalars(sum, counts, firsts, maxima);
  launch(kernel, ref.numel(), args.data());
  const auto back = device.cpu();
  PassResults out;
  std::memcpy(&out, back.data_ptr(), sizeof out);
  return out;
}

double float_of_bits(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return static_cast<double>(v);
}

}  // namespace

std::optional<std::array<int64_t, 3>> fused_word_sums(const at::Tensor& words) {
  if (!words.is_cuda() || words.scalar_type() != at::kInt || !words.is_contiguous()) return std::nullopt;
  const auto* k = kernels_for_current_device();
  if (!k) return std::nullopt;
  auto sums = at::zeros({3}, words.options().dtype(at::kLong));
  const int* w = words.data_ptr<int>();
  long long n = words.numel();
  void* s = sums.data_ptr();
  void* args[] = {&w, &n, &s};
  launch(k->fingerprint, n, args);
  const auto host = sums.cpu();
  return std::array<int64_t, 3>{host[0].item<int64_t>(), host[1].item<int64_t>(), host[2].item<int64_t>()};
}

std::optional<ElementwiseCounts> fused_compare(const at::Tensor& ref, const at::Tensor& cand, double rtol,
                                             const std::function<double(double)>& atol_for, double upstream_tolerance) {
  if (!applies(ref) || !applies(cand) || ref.numel() != cand.numel() || ref.device() != cand.device()) return std::nullopt;
  const auto* k = kernels_for_current_device();
  if (!k) return std::nullopt;
  const float* r = ref.data_ptr<float>();
  const float* x = cand.data_ptr<float>();
  long long n = ref.numel();
  float rt = static_cast<float>(rtol), at_u = static_cast<float>(upstream_tolerance);
  const auto first = run_pass(k->first_pass, ref, [&](void*& sum, void*& counts, void*& firsts, void*& maxima) {
    return std::array<void*, 9>{&r, &x, &n, &rt, &at_u, &sum, &counts, &firsts, &maxima};
  });
  ElementwiseCounts out;
  out.mean_abs = n > 0 ? first.sum / static_cast<double>(n) : 0.0;
  out.atol = atol_for(out.mean_abs);
  float at_k = static_cast<float>(out.atol);
  out.bad_upstream = static_cast<int64_t>(first.counts[1]);
  out.first_bad_upstream = static_cast<int64_t>(first.firsts[1]);
  out.max_abs_error = float_of_bits(first.maxima[0]);
  out.max_rel_error = float_of_bits(first.maxima[1]);
  // No element is bad when every excess e = fl(diff - s) (s = fl(|r| * rtol)) is at most
  // atol * (1 - 2^-20): e is within 2^-24 of diff - s, so diff < s + atol, and rounding s + atol
  // to float cannot go below diff, itself a float. Otherwise the second pass counts.
  const double excess = float_of_bits(first.maxima[2]);
  if (std::isfinite(excess) && excess <= static_cast<double>(at_k) * (1.0 - std::ldexp(1.0, -20))) return out;
  const auto second = run_pass(k->compare, ref, [&](void*& /*sum*/, void*& counts, void*& firsts, void*& maxima) {
    return std::array<void*, 9>{&r, &x, &n, &rt, &at_k, &at_u, &counts, &firsts, &maxima};
  });
  out.bad = static_cast<int64_t>(second.counts[0]);
  out.nan_bad = static_cast<int64_t>(second.counts[2]);
  out.first_bad = static_cast<int64_t>(second.firsts[0]);
  return out;
}

#else

std::optional<std::array<int64_t, 3>> fused_word_sums(const at::Tensor&) { return std::nullopt; }
std::optional<ElementwiseCounts> fused_compare(const at::Tensor&, const at::Tensor&, double, const std::function<double(double)>&,
                                             double) {
  return std::nullopt;
}

#endif

}  // namespace kbench::check
