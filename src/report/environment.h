// What a record says about where it was measured.
#pragma once

#include <nlohmann/json.hpp>

namespace kbench::report {

// kbench, libtorch, NVRTC, CUDA runtime and driver versions, and the GPU (or why there is none).
nlohmann::json environment(int device_ordinal = 0);

}  // namespace kbench::report
