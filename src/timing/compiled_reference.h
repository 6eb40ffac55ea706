// The torch.compile-class baseline: an AOTInductor package of a reference problem, made by
// scripts/tools/compile_baselines.py on a machine with PyTorch >= 2.6 and loaded here from C++, so it is
// timed beside the candidate in the same process with the same protocol.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <torch/script.h>

#include "problems/catalog.h"

namespace kbench::timing {

// Where compile_baselines.py puts the package of `problem` for this GPU and libtorch version:
// <cache>/aoti/<gpu_slug>/torch-<major.minor>/level<L>/<name>.<sha12>.pt2 (a sidecar .json beside it).
std::filesystem::path compiled_package_path(const problems::Problem& problem, const std::string& gpu_slug);

class CompiledReference {
 public:
  // Loads the package; throws std::runtime_error with a one-line reason when there is none, it is
  // stale, or this build of kbench cannot load AOTInductor packages (libtorch < 2.6 or no CUDA).
  CompiledReference(const problems::Problem& problem, const std::string& gpu_slug);
  ~CompiledReference();
  CompiledReference(const CompiledReference&) = delete;
  CompiledReference& operator=(const CompiledReference&) = delete;

  // Runs on the current CUDA stream with the tensor inputs the package was compiled for.
  std::vector<at::Tensor> run(const std::vector<c10::IValue>& inputs);

  const std::filesystem::path& path() const { return path_; }

 private:
  struct Loader;
  std::unique_ptr<Loader> loader_;
  std::filesystem::path path_;
  std::vector<size_t> tensor_inputs_;  // positions of the inputs the package takes
};

}  // namespace kbench::timing
