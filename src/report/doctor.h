// `kbench doctor`: what works on this machine, and how to fix what does not.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kbench::report {

// {"ok": all passed, "checks": [{"check", "ok", "detail", "fix"}]}: the GPU, libtorch, NVRTC (a probe
// kernel compiled), the Python and toolchain ModelNew files build with, the problems of the checkout
// at `root` ("" = default) and their archives, and the cache.
nlohmann::json doctor_checks(const std::string& root);

// The checks as lines, with the fix under each that failed.
std::string doctor_text(const nlohmann::json& checks);

}  // namespace kbench::report
