#include "check/torch_op_observer.h"

#include <algorithm>

#include <ATen/record_function.h>

#include "check/reference_outputs.h"
#include "compile/host_program.h"
#include "launch/launch_op.h"

namespace kbench::check {
namespace {

// RecordFunction callbacks are plain function pointers: the active observer and the nesting state
// live in thread-local variables.
thread_local TorchOpObserver* t_observer = nullptr;
thread_local int t_depth = 0;          // ops running: an op that another op calls runs deeper
thread_local int t_inside_kbench = 0;  // inside kbench.launch: its own ops are not the program's
thread_local bool t_keeping = false;   // the observer's own copies are not observed

bool is_kbench_op(const at::RecordFunction& fn) { return std::string(fn.name()).rfind("kbench::", 0) == 0; }

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  ++t_depth;
  if (is_kbench_op(fn)) ++t_inside_kbench;
  return nullptr;
}

void on_op_end(const at::RecordFunction& fn, at::ObserverContext*) {
  --t_depth;
  if (is_kbench_op(fn)) {
    --t_inside_kbench;
    return;
  }
  if (!t_observer || t_inside_kbench > 0 || t_keeping) return;
  t_keeping = true;
  std::vector<at::Tensor> results;  // outputs() is a vector in libtorch 1.13, an ArrayRef later
  for (const auto& v : fn.outputs())
    if (v.isTensor() && v.toTensor().defined()) results.push_back(v.toTensor());
  t_observer->op_returned(fn.name(), results, t_depth);
  t_keeping = false;
}

}  // namespace

TorchOpObserver::TorchOpObserver(std::vector<int64_t> output_numels, int64_t device_budget_bytes)
    : output_numels_(std::move(output_numels)), device_budget_bytes_(device_budget_bytes) {
  t_observer = this;
  t_depth = t_inside_kbench = 0;
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(on_op_start, on_op_end).needsOutputs(true).scopes({at::RecordScope::FUNCTION}));
}

TorchOpObserver::~TorchOpObserver() {
  at::removeCallback(handle_);
  t_observer = nullptr;
}

void TorchOpObserver::op_returned(const char* op, const std::vector<at::Tensor>& outputs, int depth) {
  // The last kept result was made inside this op (aten::mm inside aten::matmul): if this op returns
  // it, it is kept once, under this op's name; from now on it counts as this op's.
  const bool nested = last_depth_ > depth;
  if (nested) last_depth_ = depth;
  if (!compile::computes_values(op)) return;
  for (const auto& result : outputs) {
    if (std::find(output_numels_.begin(), output_numels_.end(), result.numel()) == output_numels_.end()) continue;
    const void* data = result.has_storage() ? result.data_ptr() : nullptr;
    if (nested && data && data == last_data_) {
      results_.back().op = op;
      continue;
    }
    const int64_t bytes = result.numel() * static_cast<int64_t>(result.element_size());
    const bool on_device = !result.is_cuda() || device_bytes_ + bytes <= device_budget_bytes_;
    if (result.is_cuda() && on_device) device_bytes_ += bytes;
    // A copy as it is now: the program may write into the result later (an in-place epilogue kernel).
    auto copy = on_device ? result.clone(at::MemoryFormat::Contiguous)
                          : result.to(at::kCPU, /*non_blocking=*/false, /*copy=*/true);
    results_.push_back({op, std::move(copy), launch::launch_count()});
    last_data_ = data;
    last_depth_ = depth;
  }
}

std::string pytorch_computed_answer(const std::vector<ObservedResult>& observed, const c10::IValue& expected,
                                    int64_t total_launches, const Tolerance& tol) {
  std::vector<at::Tensor> outputs;
  collect_tensors(expected, outputs);
  for (const auto& r : observed) {
    if (r.launches_before >= total_launches) continue;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const auto& out = outputs[i];
      if (!out.defined() || out.numel() != r.values.numel()) continue;
      // Compared as flat values in the output's dtype: a result computed in double or with another
      // shape is the same answer.
      const auto values = r.values.reshape(-1).to(out.device(), out.scalar_type());
      if (compare_outputs(out.reshape(-1), values, tol).verdict == Verdict::correct)
        return "PyTorch computed the answer: the result of " + r.op + " (made before launch " +
               std::to_string(r.launches_before + 1) + " of " + std::to_string(total_launches) +
               ") matches output " + std::to_string(i) + "; the kernels were only handed it";
    }
  }
  return "";
}

}  // namespace kbench::check
