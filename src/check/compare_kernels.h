// The comparison of check/compare.h in one pass over the GPU, for float32 outputs: a dozen PyTorch
// ops over every output chunk (each writing a temporary) become two kernels that read the
// reference and the candidate once (the mean |reference| first, then the rest), whose results are
// the same numbers: the same float32 operations in the same order, without contraction. Likewise
// the fingerprint of an input (three sums, one pass). Compiled with NVRTC on first use (through the
// compile cache) and loaded once per process.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include <torch/script.h>

namespace kbench::check {

// The kernels' source (compiled in CI's NVRTC test too).
const std::string& compare_kernels_source();

// Sum over the tensor of |value|, non-finite values counting 0. nullopt where the fused path does
// not apply: no GPU build, not a contiguous float32 CUDA tensor, or the kernels failed to load.
std::optional<double> fused_sum_abs(const at::Tensor& ref);

// check::fingerprint's three sums of a contiguous int32 CUDA tensor (all words, words at i % 3 == 0,
// at i % 7 == 1) in one pass; nullopt where the fused path does not apply.
std::optional<std::array<int64_t, 3>> fused_word_sums(const at::Tensor& words);

// What the elementwise rule finds over a whole output: by these kernels, or chunk by chunk with
// PyTorch's ops in compare.cpp where they do not apply.
struct ElementwiseCounts {
  int64_t bad = 0, bad_upstream = 0;        // outside kbench's tolerance, outside KernelBench's
  int64_t first_bad = -1, first_bad_upstream = -1;
  int64_t nan_bad = 0;                      // NaN where the reference has none
  double max_abs_error = 0, max_rel_error = 0;
};
// `upstream_tolerance`: KernelBench's atol and rtol (check/kernelbench_rule.h).
std::optional<ElementwiseCounts> fused_compare(const at::Tensor& ref, const at::Tensor& cand, double rtol, double atol_kbench,
                                             double upstream_tolerance);

}  // namespace kbench::check
