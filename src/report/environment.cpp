#include "report/environment.h"

#include "compile/nvrtc_compiler.h"
#include "launch/cuda_driver.h"
#include "problems/reference.h"

namespace kbench::report {
namespace {
std::string cuda_version(int v) { return v ? std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10) : ""; }
}  // namespace

nlohmann::json environment(int device_ordinal) {
  const auto gpu = launch::query_device(device_ordinal);
  nlohmann::json env = {{"kbench", KBENCH_VERSION},
                        {"libtorch", problems::libtorch_version()},
                        {"nvrtc", compile::nvrtc_version()},
                        {"gpu_build", launch::built_with_cuda()}};
  if (gpu.present) {
    env["gpu"] = gpu.name;
    env["arch"] = gpu.arch();
    env["driver"] = cuda_version(gpu.driver_version);
    env["cuda_runtime"] = cuda_version(gpu.runtime_version);
  } else {
    env["gpu"] = nullptr;
    env["gpu_absent"] = gpu.why_absent;
  }
  return env;
}

}  // namespace kbench::report
