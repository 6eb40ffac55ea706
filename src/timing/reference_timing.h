// The eager baseline of one problem: load its reference on the GPU, make inputs, time its forward
// with the same protocol as candidates. Used by `kbench baseline` (and the GPU sweeps).
#pragma once

#include <string>

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

// An entry of baselines/<gpu>/eager.json in KernelBench's layout, with its provenance: `path` (how
// the figure was made), the PyTorch and kbench versions, and when.
nlohmann::json baseline_entry(const Measurement& m, const std::string& gpu_name, int device, const std::string& path);

}  // namespace kbench::timing
