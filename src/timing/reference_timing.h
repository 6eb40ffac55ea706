// The eager baseline of one problem: load its reference on the GPU, make inputs, time its forward
// with the same protocol as candidates. Used by `kbench baseline` (and the GPU sweeps).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "problems/catalog.h"
#include "timing/timer.h"

namespace kbench::timing {

struct ReferenceTiming {
  double load_ms = 0;    // archive → GPU module
  double inputs_ms = 0;  // one input set, made on the GPU and synchronised
  Measurement forward;
  // With a compiled-baseline slug: the AOTInductor package timed on the same inputs, or why not.
  std::optional<Measurement> compiled;
  std::string compiled_unavailable;
};

// `compiled_gpu_slug` non-empty: also time the problem's AOTInductor package for that GPU.
ReferenceTiming time_reference(const problems::Problem& problem, int device, const TimingOptions& options,
                               const std::string& compiled_gpu_slug = "");

// An entry of baselines/<gpu>/{eager,compiled}.json in KernelBench's layout; `path` (compiled
// entries) says how the figure was made.
nlohmann::json baseline_entry(const Measurement& m, const std::string& gpu_name, int device, const std::string& path = "");

}  // namespace kbench::timing
