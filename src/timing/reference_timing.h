// The eager baseline of one problem: load its reference on the GPU, make inputs, time its forward
// with the same protocol as candidates. Used by `kbench baseline` (and the GPU sweeps).
#pragma once

#include <nlohmann/json.hpp>

#include "problems/catalog.h"
#include "timing/timer.h"

namespace kbench::timing {

struct ReferenceTiming {
  double load_ms = 0;    // archive → GPU module
  double inputs_ms = 0;  // one input set, made on the GPU and synchronised
  Measurement forward;
};

ReferenceTiming time_reference(const problems::Problem& problem, int device, const TimingOptions& options);

// An entry of baselines/<gpu>/eager.json in KernelBench's layout.
nlohmann::json baseline_entry(const ReferenceTiming& t, const std::string& gpu_name, int device);

}  // namespace kbench::timing
