// Which PyTorch op computed the answer? A host program may call PyTorch ops (a cuBLAS matmul
// before a fused epilogue kernel), but when one of them produces the output's values and a kernel
// is only handed them (copies them, does nothing with them, or merely sets a flag the host program
// tests before using them), PyTorch did the work. Skipping the kernels (the ablation run) misses
// that: a copy kernel or a flag is needed, even though it computes nothing. So during robustness
// trials, whose outputs are judged, every result of a value-computing op (compile::computes_values)
// that is as large as an output tensor of the reference is kept, as it was when made, and afterwards
// compared with the reference's outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/script.h>

#include "check/compare.h"

namespace kbench::check {

struct ObservedResult {
  std::string op;              // aten::relu
  at::Tensor values;           // a copy, taken when the op returned
  int64_t launches_before = 0; // kbench.launch calls made before the op
};

// Observes the PyTorch ops that the current thread calls while alive, outside kbench.launch.
// Results with as many elements as one of `output_numels` are copied: on the GPU while the copies
// fit in `device_budget_bytes`, else to host memory.
class TorchOpObserver {
 public:
  TorchOpObserver(std::vector<int64_t> output_numels, int64_t device_budget_bytes);
  ~TorchOpObserver();
  TorchOpObserver(const TorchOpObserver&) = delete;
  TorchOpObserver& operator=(const TorchOpObserver&) = delete;

  const std::vector<ObservedResult>& results() const { return results_; }

  // Called by the op callback as each op returns, `depth` being the number of ops it runs inside.
  void op_returned(const char* op, const std::vector<at::Tensor>& outputs, int depth);

 private:
  std::vector<int64_t> output_numels_;
  int64_t device_budget_bytes_;
  int64_t device_bytes_ = 0;
  std::vector<ObservedResult> results_;
  const void* last_data_ = nullptr;  // where the last kept result lives
  int last_depth_ = -1;              // and how deep its op ran
  uint64_t handle_ = 0;
};

// The finding when a kept result made before the forward's last launch (`total_launches`) matches
// one of the reference's output tensors under kbench's rule for `tol`: which op made it and which
// output it matches. Empty when none does. A result made after the last launch is a copy of what
// the kernels wrote (a reshape at the end), not the kernels' input.
std::string pytorch_computed_answer(const std::vector<ObservedResult>& observed, const c10::IValue& expected,
                                    int64_t total_launches, const Tolerance& tol);

}  // namespace kbench::check
