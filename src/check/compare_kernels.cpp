#include "check/compare_kernels.h"

#include "log/log.h"

#ifdef KBENCH_WITH_CUDA
#include <algorithm>
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

const std::string& compare_kernels_source() {
  // Elementwise, as compare.cpp's PyTorch ops compute it in float32: diff = |x - r|, bad where not
  // diff <= |r| * rtol + atol unless x == r or both are NaN; KernelBench's bad where not x == r and
  // not (diff finite and diff <= |x| * t + t), as torch.allclose(r, x, t, t); the maxima over diff
  // with NaN as 0. __f*_rn keep each operation rounded on its own, as separate PyTorch kernels are.
  static const std::string source = R"(
#define FOR_EACH(i, n) for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)

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

extern "C" __global__ void kbench_sum_abs_finite(const float* __restrict__ r, long long n, double* __restrict__ sum) {
  double s = 0;
  FOR_EACH(i, n) {
    const float v = fabsf(r[i]);
    if (isfinite(v)) s += v;
  }
  s = block_reduce(s, Add(), 0.0);
  if (threadIdx.x == 0) atomicAdd(sum, s);
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

// counts: bad, bad_upstream, nan_bad; firsts: first bad, first bad upstream (start at ~0);
// maxima: bit patterns of the non-negative float maxima of the absolute and the relative error.
extern "C" __global__ void kbench_compare(const float* __restrict__ r, const float* __restrict__ x, long long n,
                                          float rtol, float atol, float upstream_tolerance,
                                          unsigned long long* __restrict__ counts,
                                          unsigned long long* __restrict__ firsts,
                                          unsigned int* __restrict__ maxima) {
  unsigned long long bad = 0, bad_up = 0, nan_bad = 0, first = ~0ull, first_up = ~0ull;
  float max_abs = 0.f, max_rel = 0.f;
  FOR_EACH(i, n) {
    const float rv = r[i], xv = x[i];
    const float diff = fabsf(__fsub_rn(xv, rv)), r_abs = fabsf(rv);
    const bool exempt = xv == rv || (isnan(rv) && isnan(xv));
    const float scaled = __fmul_rn(r_abs, rtol);
    if (!(diff <= __fadd_rn(scaled, atol)) && !exempt) { ++bad; if (first == ~0ull) first = i; }
    const bool close_upstream = xv == rv || (isfinite(diff) && diff <= __fadd_rn(__fmul_rn(fabsf(xv), upstream_tolerance), upstream_tolerance));
    if (!close_upstream) { ++bad_up; if (first_up == ~0ull) first_up = i; }
    if (isnan(xv) && !isnan(rv)) ++nan_bad;
    const float finite = isnan(diff) ? 0.f : diff;
    max_abs = fmaxf(max_abs, finite);
    max_rel = fmaxf(max_rel, __fdiv_rn(finite, fmaxf(r_abs, 1e-12f)));
  }
  bad = block_reduce(bad, Add(), 0ull);
  bad_up = block_reduce(bad_up, Add(), 0ull);
  nan_bad = block_reduce(nan_bad, Add(), 0ull);
  first = block_reduce(first, Min(), ~0ull);
  first_up = block_reduce(first_up, Min(), ~0ull);
  const unsigned int abs_bits = block_reduce(__float_as_uint(max_abs), Max(), 0u);
  const unsigned int rel_bits = block_reduce(__float_as_uint(max_rel), Max(), 0u);
  if (threadIdx.x == 0) {
    atomicAdd(&counts[0], bad);
    atomicAdd(&counts[1], bad_up);
    atomicAdd(&counts[2], nan_bad);
    atomicMin(&firsts[0], first);
    atomicMin(&firsts[1], first_up);
    atomicMax(&maxima[0], abs_bits);  // non-negative floats order as their bit patterns
    atomicMax(&maxima[1], rel_bits);
  }
}
)";
  return source;
}

#ifdef KBENCH_WITH_CUDA
namespace {

struct CompareKernels {
  std::unique_ptr<launch::LoadedModule> module;
  CUfunction sum_abs = nullptr, compare = nullptr, fingerprint = nullptr;
  int blocks = 0;  // enough to fill the GPU
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
    k->sum_abs = static_cast<CUfunction>(k->module->find("kbench_sum_abs_finite")->function);
    k->compare = static_cast<CUfunction>(k->module->find("kbench_compare")->function);
    k->fingerprint = static_cast<CUfunction>(k->module->find("kbench_fingerprint")->function);
    k->blocks = gpu.multiprocessors * 8;
    slot = std::move(k);
  } catch (const std::exception& e) {
    log::warn(std::string("the fused comparison kernels are unavailable, PyTorch's ops compare instead: ") + e.what());
  }
  return slot.get();
}

bool applies(const at::Tensor& t) { return t.is_cuda() && t.scalar_type() == at::kFloat && t.is_contiguous(); }

void launch(CUfunction fn, int blocks, int64_t n, void** args) {
  constexpr int kThreads = 256;
  const auto wanted = (n + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, wanted)));
  const CUresult r = cuLaunchKernel(fn, grid, 1, 1, kThreads, 1, 1, 0, at::cuda::getCurrentCUDAStream().stream(), args, nullptr);
  if (r != CUDA_SUCCESS) throw std::runtime_error("launching kbench's comparison kernel failed (CUresult " + std::to_string(r) + ")");
}

}  // namespace

std::optional<double> fused_sum_abs(const at::Tensor& ref) {
  if (!applies(ref)) return std::nullopt;
  const auto* k = kernels_for_current_device();
  if (!k) return std::nullopt;
  auto sum = at::zeros({1}, ref.options().dtype(at::kDouble));
  const float* r = ref.data_ptr<float>();
  long long n = ref.numel();
  double* s = sum.data_ptr<double>();
  void* args[] = {&r, &n, &s};
  launch(k->sum_abs, k->blocks, n, args);
  return sum.item<double>();
}

std::optional<std::array<int64_t, 3>> fused_word_sums(const at::Tensor& words) {
  if (!words.is_cuda() || words.scalar_type() != at::kInt || !words.is_contiguous()) return std::nullopt;
  const auto* k = kernels_for_current_device();
  if (!k) return std::nullopt;
  auto sums = at::zeros({3}, words.options().dtype(at::kLong));
  const int* w = words.data_ptr<int>();
  long long n = words.numel();
  void* s = sums.data_ptr();
  void* args[] = {&w, &n, &s};
  launch(k->fingerprint, k->blocks, n, args);
  const auto host = sums.cpu();
  return std::array<int64_t, 3>{host[0].item<int64_t>(), host[1].item<int64_t>(), host[2].item<int64_t>()};
}

std::optional<ElementwiseCounts> fused_compare(const at::Tensor& ref, const at::Tensor& cand, double rtol, double atol_kbench,
                                             double upstream_tolerance) {
  if (!applies(ref) || !applies(cand) || ref.numel() != cand.numel() || ref.device() != cand.device()) return std::nullopt;
  const auto* k = kernels_for_current_device();
  if (!k) return std::nullopt;
  auto counts = at::zeros({3}, ref.options().dtype(at::kLong));
  auto firsts = at::full({2}, -1, ref.options().dtype(at::kLong));  // ~0: no bad element yet
  auto maxima = at::zeros({2}, ref.options().dtype(at::kInt));
  const float* r = ref.data_ptr<float>();
  const float* x = cand.data_ptr<float>();
  long long n = ref.numel();
  float rt = static_cast<float>(rtol), at_k = static_cast<float>(atol_kbench), at_u = static_cast<float>(upstream_tolerance);
  void* c = counts.data_ptr();
  void* f = firsts.data_ptr();
  void* m = maxima.data_ptr();
  void* args[] = {&r, &x, &n, &rt, &at_k, &at_u, &c, &f, &m};
  launch(k->compare, k->blocks, n, args);
  const auto counts_host = counts.cpu(), firsts_host = firsts.cpu(), maxima_host = maxima.cpu();
  const auto bits_to_float = [](int32_t bits) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return static_cast<double>(v);
  };
  ElementwiseCounts out;
  out.bad = counts_host[0].item<int64_t>();
  out.bad_upstream = counts_host[1].item<int64_t>();
  out.nan_bad = counts_host[2].item<int64_t>();
  out.first_bad = firsts_host[0].item<int64_t>();
  out.first_bad_upstream = firsts_host[1].item<int64_t>();
  out.max_abs_error = bits_to_float(maxima_host[0].item<int32_t>());
  out.max_rel_error = bits_to_float(maxima_host[1].item<int32_t>());
  return out;
}

#else

std::optional<double> fused_sum_abs(const at::Tensor&) { return std::nullopt; }
std::optional<std::array<int64_t, 3>> fused_word_sums(const at::Tensor&) { return std::nullopt; }
std::optional<ElementwiseCounts> fused_compare(const at::Tensor&, const at::Tensor&, double, double, double) { return std::nullopt; }

#endif

}  // namespace kbench::check
