// The reference's forward under libtorch's profiler (Kineto: PyTorch's operators and, through CUPTI,
// the GPU kernels each one launched), summarised by breakdown.h.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>
#include <torch/script.h>

#include "launch/cuda_driver.h"
#include "problems/reference.h"

namespace kbench::profile {

// One call of the reference on `inputs` after an L2 flush. The record's "reference" part of
// `profile`; {"unavailable": why} where libtorch records no GPU activity (Debian's CPU libtorch).
nlohmann::json profile_reference(problems::Reference& reference, const std::vector<c10::IValue>& inputs, uint64_t seed,
                                 const launch::DeviceInfo& gpu);

}  // namespace kbench::profile
