// Which PyTorch op computed the answer? A host program may call PyTorch ops (a cuBLAS matmul before
// a fused epilogue kernel), but when one of them produces the returned output and a kernel is only
// handed it (copies it, does nothing with it, or merely sets a flag that the host program tests
// before calling the op), PyTorch did the work. Skipping the kernels (the ablation run) misses that:
// the copy or the flag is needed, though it computes nothing. So in every trial after the first,
// each result of a value-computing op (compile::computes_values) with as many elements as an output
// tensor gets a digest of its values as they are when the op returns; a returned output with the
// same digest, made before a later kernel launch, is PyTorch's result handed through. The same for
// the compute functions of CUDA's libraries that the submission's extensions call themselves
// (launch/library_calls.h): a cuBLAS GEMM copied into the output is the library's answer.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <torch/script.h>

namespace kbench::check {

// What the observer must know of one output tensor of the reference.
struct OutputSpec {
  int64_t numel = 0;
  at::ScalarType dtype = at::kFloat;
};

struct ObservedResult {
  std::string op;                       // aten::relu
  size_t output = 0;                    // the output tensor it is as large as
  std::pair<int64_t, int64_t> digest;   // check::fingerprint of its values in that output's dtype
  int64_t launches_before = 0;          // kbench.launch calls made before the op returned
};

// Observes the PyTorch ops that the current thread, and the submission's own threads
// (compile/submission_threads.h), call while alive, outside kbench.launch: which value-computing
// ops the program called, and (with the outputs known) digests of their results.
class TorchOpObserver {
 public:
  // `outputs` empty: only which ops ran (the first trial, before the reference's outputs are known).
  explicit TorchOpObserver(std::vector<OutputSpec> outputs);
  ~TorchOpObserver();
  TorchOpObserver(const TorchOpObserver&) = delete;
  TorchOpObserver& operator=(const TorchOpObserver&) = delete;

  const std::vector<ObservedResult>& results() const { return results_; }
  // The value-computing ops the program itself called (not those they call inside), with counts.
  const std::map<std::string, int64_t>& computing_ops_ran() const { return computing_ops_ran_; }

  // Called by the op callback as each op returns, `depth` being the number of ops it runs inside.
  void op_returned(const char* op, const std::vector<at::Tensor>& outputs, int depth);
  // Called as a library function the submission called returns (launch/library_calls.h): it
  // computed values, as a PyTorch op does; `result` is what it wrote (undefined: not readable yet).
  void library_returned(const char* function, const at::Tensor& result);

 private:
  std::vector<OutputSpec> outputs_;
  std::vector<ObservedResult> results_;
  std::map<std::string, int64_t> computing_ops_ran_;
  std::mutex mutex_;  // ops may return on several threads at once

  // Keeps a digest of `result`, which is as large as output `output`.
  void keep(const std::string& op, size_t output, const at::Tensor& result);
  const void* last_data_ = nullptr;  // where the last observed result lives,
  int last_depth_ = -1;              // how deep its op ran,
  size_t last_first_ = 0;            // and its first entry in results_
  uint64_t handle_ = 0;
};

// The finding when an output tensor of `output` holds exactly the values of a result observed
// before the forward's last launch (`total_launches`): which op made it. Empty when none does. A
// result made after the last launch is a copy of what the kernels wrote, not their input.
std::string pytorch_computed_answer(const std::vector<ObservedResult>& observed, const c10::IValue& output,
                                    int64_t total_launches);

}  // namespace kbench::check
