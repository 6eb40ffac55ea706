// The comparison of check/compare.h over the GPU, for float32 outputs: a dozen PyTorch ops over
// every output chunk (each writing a temporary) become one kernel that reads the reference and the
// candidate once, and a second pass only where an element may be outside kbench's tolerance (the
// mean |reference| that sets its atol is known only at the end of the first); the numbers are the
// same: the same float32 operations in the same order, without contraction. Likewise the
// fingerprint of an input (three sums, one pass). Compiled with NVRTC on first use (through the
// compile cache) and loaded once per process.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <torch/script.h>

namespace kbench::check {

// The kernels' source (compiled in CI's NVRTC test too).
const std::string& compare_kernels_source();

// check::fingerprint's three sums of a contiguous int32 CUDA tensor (all words, words at i % 3 == 0,
// at i % 7 == 1) in one pass; nullopt where the fused path does not apply.
std::optional<std::array<int64_t, 3>> fused_word_sums(const at::Tensor& words);

// What the elementwise rule finds over a whole output: by these kernels, or chunk by chunk with
// PyTorch's ops in compare.cpp where they do not apply.
struct ElementwiseCounts {
  double mean_abs = 0;                      // of the reference, non-finite values counting 0
  double atol = 0;                          // kbench's, for that mean
  int64_t bad = 0, bad_upstream = 0;        // outside kbench's tolerance, outside KernelBench's
  int64_t first_bad = -1, first_bad_upstream = -1;
  int64_t nan_bad = 0;                      // NaN where the reference has none (counted where bad > 0)
  double max_abs_error = 0, max_rel_error = 0;
};
// `atol_for`: kbench's atol for the reference's mean |value|; `upstream_tolerance`: KernelBench's
// atol and rtol (check/kernelbench_rule.h). nullopt where the fused path does not apply: no GPU
// build, not contiguous float32 CUDA tensors on one device, or the kernels failed to load.
std::optional<ElementwiseCounts> fused_compare(const at::Tensor& ref, const at::Tensor& cand, double rtol,
                                             const std::function<double(double)>& atol_for, double upstream_tolerance);

}  // namespace kbench::check
