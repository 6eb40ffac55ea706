// A loaded reference problem: the TorchScript model (fixed weights) and its input generator.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <torch/script.h>

#include "problems/catalog.h"

namespace kbench::problems {

// "2.11" for the libtorch kbench was built with; archives are keyed by it (TorchScript archives
// load across patch releases).
std::string libtorch_version();

// Numeric comparison of dotted versions: "2.6" < "2.11".
bool version_less(const std::string& a, const std::string& b);

// True when `problem` declares a minimum PyTorch newer than this libtorch (it cannot be loaded here).
bool needs_newer_torch(const Problem& problem);

// Input distributions the generators know (scripts/tools/problem_source.py, _draw): "own" is the
// problem's; the others draw every floating-point input from another distribution (integer draws
// stay the problem's) for the robustness trials: signed, heavy-tailed and large, signed and small.
inline constexpr const char* kOwnDistribution = "own";
inline const std::vector<std::string> kRobustnessDistributions = {"normal", "logistic_x10", "uniform_pm0.1"};

// The seed every reference model is built under (scripts/tools/export_problems.py's MODEL_SEED): a
// submission that builds its own modules (a ModelNew) is built under it too, so that its parameters
// equal the reference's.
inline constexpr uint64_t kModelSeed = 1234;

class Reference {
 public:
  // Loads the archive made by scripts/tools/export_problems.py on the CPU, then moves it to `device`;
  // throws with a line that says how to make it when it is missing or stale.
  Reference(const Problem& problem, const torch::Device& device);

  // Moves every tensor the module holds to `device`. Loading on the CPU needs no CUDA context, so
  // an evaluation reads and compiles the archive while CUDA starts, and moves it afterwards.
  void to(const torch::Device& device);

  const Problem& problem() const { return problem_; }
  const torch::Device& device() const { return device_; }

  // Same seed and distribution, same inputs; made directly on `device` so multi-GB inputs never
  // cross PCIe.
  std::vector<c10::IValue> make_inputs(uint64_t seed, const std::string& distribution = kOwnDistribution) const;

  // The reference forward as KernelBench runs it: training mode, no autograd, seed set first, op by
  // op (no TorchScript fusion).
  c10::IValue forward(const std::vector<c10::IValue>& inputs, uint64_t seed);

  // A copy whose module computes in float64: the float32 tensors of a deep copy of the module
  // widened (this one's are untouched). It takes float64 where this one takes float32 inputs.
  Reference in_float64() const;

  // Parameters and buffers by state_dict name, on the device: what a candidate receives.
  const c10::Dict<std::string, at::Tensor>& state() const { return state_; }

  torch::jit::Module& module() { return module_; }

 private:
  Problem problem_;
  torch::Device device_;
  torch::jit::Module module_;
  std::shared_ptr<torch::jit::CompilationUnit> generator_;
  c10::Dict<std::string, at::Tensor> state_;

  void collect_state();  // state_ from the module's parameters and buffers
};

// Calls `fn` once for every distinct tensor held by the module: parameters, buffers and plain
// attributes (an LSTM's initial state), also inside lists, tuples, dicts and submodules.
void for_each_tensor(const torch::jit::Module& module, const std::function<void(at::Tensor&)>& fn);

// Compiles a manifest input generator; exposed for the tests that check it against the catalog.
std::shared_ptr<torch::jit::CompilationUnit> compile_input_generator(const std::string& source);
std::vector<c10::IValue> run_input_generator(torch::jit::CompilationUnit& generator, uint64_t seed,
                                             const torch::Device& device,
                                             const std::string& distribution = kOwnDistribution);

}  // namespace kbench::problems
