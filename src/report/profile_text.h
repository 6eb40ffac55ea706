// The record's `profile` section (kbench eval --profile) as text: compact enough for a refinement
// prompt, the same lines after `kbench eval` on the terminal. Slowest kernels first, what bounds
// each, the host program's PyTorch ops, how the reference spends its time, and how far both are
// from the GPU's bandwidth and FLOP peaks.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kbench::report {

std::string profile_text(const nlohmann::json& profile, size_t max_rows = 6);

// A demangled kernel name cut to something a reader can take in: no return type, no parameter
// list, at most `chars` characters.
std::string short_kernel_name(const std::string& name, size_t chars = 90);

}  // namespace kbench::report
