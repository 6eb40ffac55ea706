#include "timing/compiled_reference.h"

#include <fstream>

#include <nlohmann/json.hpp>
#include <torch/version.h>

#include "problems/reference.h"

#if defined(KBENCH_WITH_CUDA) && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 6))
#define KBENCH_WITH_AOTI 1
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#endif

namespace kbench::timing {

std::filesystem::path compiled_package_path(const problems::Problem& problem, const std::string& gpu_slug) {
  return problems::cache_dir() / "aoti" / gpu_slug / ("torch-" + problems::libtorch_version()) /
         ("level" + std::to_string(problem.level)) / (problem.name + "." + problem.sha256.substr(0, 12) + ".pt2");
}

#ifdef KBENCH_WITH_AOTI
struct CompiledReference::Loader {
  explicit Loader(const std::string& path) : package(path) {}
  torch::inductor::AOTIModelPackageLoader package;
};
#else
struct CompiledReference::Loader {};
#endif

CompiledReference::CompiledReference(const problems::Problem& problem, const std::string& gpu_slug)
    : path_(compiled_package_path(problem, gpu_slug)) {
#ifdef KBENCH_WITH_AOTI
  std::ifstream sidecar(path_.string() + ".json");
  if (!std::filesystem::exists(path_) || !sidecar)
    throw std::runtime_error("no AOTInductor package at " + path_.string() + " (scripts/tools/compile_baselines.py makes it)");
  const auto meta = nlohmann::json::parse(sidecar, nullptr, false);
  if (meta.is_discarded() || meta.value("sha256", "") != problem.sha256)
    throw std::runtime_error("the AOTInductor package's sidecar " + path_.string() + ".json is unreadable or stale");
  tensor_inputs_ = meta.value("tensor_inputs", std::vector<size_t>{});
  loader_ = std::make_unique<Loader>(path_.string());
#else
  (void)problem;
  throw std::runtime_error("this build of kbench cannot load AOTInductor packages (needs a CUDA libtorch >= 2.6; it has " +
                           problems::libtorch_version() + ")");
#endif
}

CompiledReference::~CompiledReference() = default;

std::vector<at::Tensor> CompiledReference::run(const std::vector<c10::IValue>& inputs) {
#ifdef KBENCH_WITH_AOTI
  std::vector<at::Tensor> tensors;
  for (const size_t i : tensor_inputs_) tensors.push_back(inputs.at(i).toTensor());
  return loader_->package.run(tensors);
#else
  (void)inputs;
  return {};
#endif
}

}  // namespace kbench::timing
