// The submission's host side: what forward does around the kernels. In kbench's format, a TorchScript
// program compiled in C++, where `kbench.launch` resolves to the kbench::launch operator.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/script.h>

namespace kbench::compile {

struct HostProgramError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether a PyTorch operator (aten::relu, prim::NumToTensor) can compute an answer: everything but
// allocation, views, copies and dtype conversions, fills and random draws. A copy of an input or a
// constant is right only where the answer is that input or that constant, which the robustness
// trials rule out.
bool computes_values(const std::string& op);

// What the checks run of a candidate: forward (and setup) with the problem's inputs and the reference's
// parameters, and which PyTorch ops its program calls. One implementation per submission format.
class HostProgram {
 public:
  virtual ~HostProgram() = default;

  virtual bool has_setup() const = 0;
  virtual std::string forward_schema() const = 0;

  // The PyTorch operators the program calls (aten::...), reported in the record: a candidate may
  // allocate and reshape with PyTorch, and its compute ops are listed for the reader to judge.
  virtual const std::vector<std::string>& torch_ops() const = 0;

  // The PyTorch ops outside setup that make a tensor and compute its values (computes_values). Where
  // there are none, forward's outputs are written by the submission's kernels, or are copies of
  // inputs or constants, which the robustness trials fail; the ablation run (check/correctness.h)
  // has nothing to find.
  virtual const std::vector<std::string>& computing_ops() const = 0;

  // Whether the program lives across calls (a ModelNew instance, whose attributes persist): what its
  // outputs hold may then come from an earlier call (a cache), not only from this call's inputs and
  // constants, so the ablation run is made even where computing_ops() is empty.
  virtual bool keeps_state() const { return false; }

  // The kernels' language: "cuda" (kbench's format, a load_inline extension) or "triton".
  virtual std::string backend() const { return "cuda"; }

  // Whether forward's first calls compile or tune its kernels (Triton's JIT and autotuner): the
  // checks then call it untimed until it has settled (check/correctness.h), before anything counts.
  virtual bool settles() const { return false; }
  // forward outside the checks' watch of its PyTorch ops, the device synchronised, its output
  // dropped: a settling call. Throws what forward threw.
  virtual void untimed_call(const std::vector<c10::IValue>& inputs, const c10::Dict<std::string, at::Tensor>& params) const {
    forward(inputs, params);
  }

  // setup(params) -> Dict[str, Tensor], run once and untimed; without setup, params pass through.
  virtual c10::Dict<std::string, at::Tensor> setup(const c10::Dict<std::string, at::Tensor>& params) const = 0;
  virtual c10::IValue forward(const std::vector<c10::IValue>& inputs,
                              const c10::Dict<std::string, at::Tensor>& params) const = 0;
};

// kbench's own format: the TorchScript program of the `kbench:host` block, compiled in C++.
class ScriptHostProgram : public HostProgram {
 public:
  // Throws HostProgramError (verdict host_error) when the program does not compile or lacks a
  // forward taking `input_count` inputs plus the parameter dictionary.
  ScriptHostProgram(const std::string& source, size_t input_count);

  bool has_setup() const override { return setup_ != nullptr; }
  std::string forward_schema() const override;
  const std::vector<std::string>& torch_ops() const override { return torch_ops_; }
  const std::vector<std::string>& computing_ops() const override { return computing_ops_; }
  c10::Dict<std::string, at::Tensor> setup(const c10::Dict<std::string, at::Tensor>& params) const override;
  c10::IValue forward(const std::vector<c10::IValue>& inputs,
                      const c10::Dict<std::string, at::Tensor>& params) const override;

 private:
  std::shared_ptr<torch::jit::CompilationUnit> unit_;
  torch::jit::Function* forward_ = nullptr;
  torch::jit::Function* setup_ = nullptr;
  std::vector<std::string> torch_ops_;
  std::vector<std::string> computing_ops_;
};

}  // namespace kbench::compile
