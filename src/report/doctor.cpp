#include "report/doctor.h"

#include <cstdio>
#include <unistd.h>

#include "compile/modelnew.h"
#include "compile/nvrtc_compiler.h"
#include "launch/cuda_driver.h"
#include "log/number_text.h"
#include "problems/catalog.h"
#include "problems/reference.h"

namespace kbench::report {
namespace {

class Checks {
 public:
  void add(const std::string& what, bool ok, const std::string& detail, const std::string& fix) {
    checks_.push_back({{"check", what}, {"ok", ok}, {"detail", detail}, {"fix", ok ? "" : fix}});
    all_ok_ = all_ok_ && ok;
  }
  nlohmann::json to_json() const { return {{"ok", all_ok_}, {"checks", checks_}}; }

 private:
  nlohmann::json checks_ = nlohmann::json::array();
  bool all_ok_ = true;
};

void check_gpu_and_compilers(Checks& checks, const launch::DeviceInfo& gpu) {
  checks.add("gpu", gpu.present, gpu.present ? gpu.name + " (" + gpu.arch() + "), " + log::mib(gpu.memory_bytes) : gpu.why_absent,
             launch::built_with_cuda() ? "check nvidia-smi and the driver installation"
                                       : "correctness and timing need a GPU machine and the GPU build (cmake --preset gpu)");
  checks.add("libtorch", true, problems::libtorch_version() + (launch::built_with_cuda() ? " with CUDA" : " (CPU only)"), "");
  const auto probe = compile::nvrtc_compile("extern \"C\" __global__ void probe(float* x) { x[0] = 1.0f; }", "probe.cu",
                                            {gpu.present ? gpu.arch() : "sm_90a", {}});
  checks.add("nvrtc", probe.ok && probe.kernels.size() == 1,
             "NVRTC " + compile::nvrtc_version() +
                 (probe.ok ? ", compiled a probe kernel in " + std::to_string(int(probe.compile_ms)) + " ms" : ": " + probe.log),
             "install the CUDA toolkit (NVRTC) and make libnvrtc.so findable");
}

void check_modelnew(Checks& checks) {
  try {
    const auto py = compile::modelnew_environment();
    const bool usable = !py.value("ninja", "").empty() && (!launch::built_with_cuda() || !py.value("cuda_home", "").empty());
    checks.add("modelnew", usable,
               "Python " + py.value("python", "") + " (" + py.value("executable", "") + "), torch " + py.value("torch", "") +
                   ", ninja " + (py.value("ninja", "").empty() ? "missing" : py.value("ninja", "")) + ", CUDA toolkit " +
                   (py.value("cuda_home", "").empty() ? "missing" : py.value("cuda_home", "")),
               "ModelNew files build with torch.utils.cpp_extension: install ninja beside that Python (pip install "
               "ninja) and the CUDA toolkit (or set CUDA_HOME)");
  } catch (const std::exception& e) {
    checks.add("modelnew", false, e.what(),
               "kbench runs ModelNew files in the Python it was built against: set KBENCH_PYTHON to a Python whose "
               "torch is kbench's libtorch");
  }
}

void check_problems(Checks& checks, const std::string& root) {
  try {
    const auto catalog = problems::Catalog::load(problems::project_root(root));
    size_t archives = 0, usable = 0;
    for (const auto& p : catalog.all()) {
      if (problems::needs_newer_torch(p)) continue;
      ++usable;
      if (std::filesystem::exists(problems::archive_path(p, problems::libtorch_version()))) ++archives;
    }
    checks.add("problems", !catalog.all().empty(), std::to_string(catalog.all().size()) + " problems in the manifest",
               "run from a kbench checkout or pass --root");
    checks.add("archives", archives == usable,
               std::to_string(archives) + " of " + std::to_string(usable) + " TorchScript archives for libtorch " +
                   problems::libtorch_version() + " in " + problems::cache_dir().string(),
               "scripts/tools/export_problems.py (same PyTorch as kbench's libtorch)");
  } catch (const std::exception& e) {
    checks.add("problems", false, e.what(), "run from a kbench checkout or pass --root");
  }
  std::error_code ec;
  const auto dir = problems::cache_dir();
  std::filesystem::create_directories(dir, ec);
  checks.add("cache", !ec && ::access(dir.c_str(), W_OK) == 0, dir.string(), "set KBENCH_CACHE to a writable directory");
}

}  // namespace

nlohmann::json doctor_checks(const std::string& root) {
  Checks checks;
  check_gpu_and_compilers(checks, launch::query_device(0));
  check_modelnew(checks);
  check_problems(checks, root);
  return checks.to_json();
}

std::string doctor_text(const nlohmann::json& checks) {
  std::string out;
  char line[1024];
  for (const auto& c : checks["checks"]) {
    const bool ok = c["ok"].get<bool>();
    std::snprintf(line, sizeof line, "%-4s %-9s %s\n", ok ? "ok" : "FAIL", c["check"].get<std::string>().c_str(),
                  c["detail"].get<std::string>().c_str());
    out += line;
    if (!ok) out += "               fix: " + c["fix"].get<std::string>() + "\n";
  }
  return out;
}

}  // namespace kbench::report
