#include "check/torch_op_observer.h"

#include <atomic>

#include <ATen/record_function.h>
#ifdef KBENCH_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

#include "check/compare.h"
#include "check/reference_outputs.h"
#include "compile/host_program.h"
#include "compile/submission_threads.h"
#include "launch/launch_op.h"
#include "launch/library_calls.h"

namespace kbench::check {
namespace {

// RecordFunction callbacks are plain function pointers: the active observer lives in a global,
// and the nesting state in thread-local variables. The observer hears the ops of the thread that
// made it and of the threads the submission starts (compile/submission_threads.h).
std::atomic<TorchOpObserver*> g_observer{nullptr};
thread_local bool t_observed = false;  // the thread that made the observer
thread_local int t_depth = 0;          // ops running: an op that another op calls runs deeper
thread_local int t_inside_kbench = 0;  // inside kbench.launch: its own ops are not the program's
thread_local bool t_keeping = false;   // the observer's own ops (the digests) are not observed

bool is_kbench_op(const at::RecordFunction& fn) { return std::string(fn.name()).rfind("kbench::", 0) == 0; }

// Values read while a CUDA graph is being captured are not computed yet: what the op made is only
// known when the graph is replayed, and reading it would end the capture.
bool capturing() {
#ifdef KBENCH_WITH_CUDA
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(c10::cuda::getCurrentCUDAStream().stream(), &status) == cudaSuccess &&
         status != cudaStreamCaptureStatusNone;
#else
  return false;
#endif
}

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
  if (!(t_observed || compile::on_submission_thread())) return;
  auto* observer = g_observer.load();
  if (!observer || t_inside_kbench > 0 || t_keeping) return;
  std::vector<at::Tensor> results;  // outputs() is a vector in libtorch 1.13, an ArrayRef later
  for (const auto& v : fn.outputs())
    if (v.isTensor() && v.toTensor().defined()) results.push_back(v.toTensor());
  observer->op_returned(fn.name(), results, t_depth);
}

void on_library_result(const char* function, const at::Tensor& result) {
  if (!(t_observed || compile::on_submission_thread())) return;
  if (auto* observer = g_observer.load()) observer->library_returned(function, result);
}

}  // namespace

TorchOpObserver::TorchOpObserver(std::vector<OutputSpec> outputs) : outputs_(std::move(outputs)) {
  g_observer = this;
  t_observed = true;
  t_depth = t_inside_kbench = 0;
  handle_ = at::addGlobalCallback(
      at::RecordFunctionCallback(on_op_start, on_op_end).needsOutputs(true).scopes({at::RecordScope::FUNCTION}));
  launch::set_library_observer(on_library_result);
}

TorchOpObserver::~TorchOpObserver() {
  launch::set_library_observer(nullptr);
  at::removeCallback(handle_);
  t_observed = false;
  g_observer = nullptr;
}

void TorchOpObserver::op_returned(const char* op, const std::vector<at::Tensor>& outputs, int depth) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The last observed result was made inside this op (aten::mm inside aten::matmul): if this op
  // returns it, it counts once, under this op's name; from now on it counts as this op's.
  const bool nested = last_depth_ > depth;
  if (nested) last_depth_ = depth;
  if (!compile::computes_values(op) || outputs.empty()) return;
  if (depth == 0) ++computing_ops_ran_[op];
  for (const auto& result : outputs) {
    const void* data = result.has_storage() ? result.data_ptr() : nullptr;
    const size_t first = results_.size();
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (result.numel() != outputs_[i].numel) continue;
      if (nested && data && data == last_data_) {
        for (size_t j = last_first_; j < results_.size(); ++j) results_[j].op = op;
        continue;
      }
      if (capturing()) continue;
      keep(op, i, result);
    }
    if (results_.size() > first) last_data_ = data, last_depth_ = depth, last_first_ = first;
  }
}

void TorchOpObserver::library_returned(const char* function, const at::Tensor& result) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++computing_ops_ran_[function];
  if (!result.defined()) return;  // written into a CUDA graph being captured: no values yet
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (result.numel() == outputs_[i].numel) keep(function, i, result);
}

void TorchOpObserver::keep(const std::string& op, size_t output, const at::Tensor& result) {
  // The values as they are now (the program may write into the result later, as an in-place
  // epilogue kernel does), flat and in the output's dtype: a result computed in double or in
  // another shape is the same answer. The digest's own ops are not the program's (and would take
  // the lock this thread holds).
  struct Keeping {
    Keeping() { t_keeping = true; }
    ~Keeping() { t_keeping = false; }
  } keeping;
  results_.push_back({op, output, fingerprint(result.reshape(-1).to(outputs_[output].dtype)), launch::launch_count()});
}

std::string pytorch_computed_answer(const std::vector<ObservedResult>& observed, const c10::IValue& output,
                                    int64_t total_launches) {
  std::vector<at::Tensor> tensors;
  collect_tensors(output, tensors);
  std::vector<std::pair<int64_t, int64_t>> digests(tensors.size());
  std::vector<bool> digested(tensors.size(), false);
  for (const auto& r : observed) {
    if (r.launches_before >= total_launches || r.output >= tensors.size()) continue;
    const auto& out = tensors[r.output];
    if (!out.defined()) continue;
    if (!digested[r.output]) digests[r.output] = fingerprint(out.reshape(-1)), digested[r.output] = true;
    if (digests[r.output] == r.digest)
      return "PyTorch or a library computed the answer: output " + std::to_string(r.output) + " holds exactly the result of " + r.op +
             ", made before launch " + std::to_string(r.launches_before + 1) + " of " + std::to_string(total_launches) +
             "; the kernels were only handed it";
  }
  return "";
}

}  // namespace kbench::check
