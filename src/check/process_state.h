// The worker's shared process state, and a watch on it. A ModelNew's Python and native code run in
// the process where the reference computes the outputs a candidate is compared with and where the
// eager baseline is timed, so whatever process-wide state a submission changes, they inherit: a
// kernel of its own registered for aten::relu in PyTorch's dispatcher makes the reference slow or
// wrong, cuDNN switched off makes the eager baseline slow, an L2 persistence window survives the
// L2 flush. The watch takes a snapshot before any submission code runs and compares the state with
// it after every candidate call and before every reference run; the first difference is the
// evaluation's verdict (state_changed), and nothing measured in that process is kept.
//
// What is compared: PyTorch's backend flags (cuDNN, TF32, reduced-precision reductions, matmul
// precision, deterministic algorithms, SDPA backends, preferred BLAS/linalg libraries), the default
// dtype, thread counts, flush-denormal, the calling thread's dispatch keys (autocast, Python modes),
// and with a GPU the current device and stream, device limits (L2 persistence among them), cache
// config, device flags and the access-policy windows of the current and the default stream. The
// dispatcher: the kernels registered for the overloads the reference and kbench's own checks call
// (each check), and for every op (at the end of an evaluation; it costs tens of milliseconds).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kbench::check {

// One snapshot: each setting by name, its value as text (a dispatcher entry: a digest of the
// kernels registered for the op), so that snapshots compare entry by entry.
using ProcessState = std::map<std::string, std::string>;

// The flags and settings above, of the process and of the calling thread (`device`: the GPU whose
// settings count; -1 without one).
ProcessState capture_settings(int device);

// The kernels registered in PyTorch's dispatcher under the dispatch keys that a forward on dense
// CPU or CUDA tensors can reach, one entry per overload ("aten::add.Tensor", "aten::relu"): for the
// overloads `ops` names, or for every op's when `ops` is empty.
ProcessState capture_dispatcher(const std::set<std::string>& ops = {});

// The overloads of the ops `work` calls on this thread, nested ones included ("aten::add.Tensor",
// "aten::relu"): what a watch's watched_ops checks compare.
std::set<std::string> ops_called_by(const std::function<void()>& work);

// What differs from `before` in `after`, one line each ("cudnn.enabled: 1 -> 0"). Entries that only
// `after` has are not changes (a submission may define ops of its own), nor is a value "?" in
// `after` (a query that failed: after a sticky CUDA error, say).
std::vector<std::string> state_changes(const ProcessState& before, const ProcessState& after);

class ProcessStateWatch {
 public:
  // Takes the snapshot: the settings, and with `watch_dispatcher` every op's kernels.
  ProcessStateWatch(int device, bool watch_dispatcher);
  // The settings now, and every op's kernels as `dispatcher` (capture_dispatcher()) found them
  // earlier, before any submission code ran.
  ProcessStateWatch(int device, ProcessState dispatcher);

  // How deep a check looks: the settings alone (microseconds: after every timed call), the kernels
  // of the watched ops too (before a reference runs), or every op's (at the end).
  enum class Depth { settings, watched_ops, all_ops };

  // Compares the state now with the snapshot; the first change found is kept with `where` ("after
  // the candidate's call in trial 2"). Returns false once anything has changed.
  bool verify(Depth depth, const std::string& where);

  // Overloads whose kernels every watched_ops check compares: those the reference and kbench's
  // checks were seen to call (ops_called_by). Another overload of the same op is read only at the
  // end: the calls that follow a check dispatch to the overloads seen, and only theirs can change
  // an answer.
  void watch_ops(const std::set<std::string>& ops);

  bool changed() const { return !change_.empty(); }
  const std::string& change() const { return change_; }  // "what: before -> after (where)"
  int checks() const { return checks_; }
  double checking_ms() const { return checking_ms_; }  // spent in verify: the watch's cost
  bool watches_dispatcher() const { return watch_dispatcher_; }

 private:
  int device_;
  bool watch_dispatcher_;
  ProcessState settings_, dispatcher_;
  std::set<std::string> watched_ops_;
  std::string change_;
  int checks_ = 0;
  double checking_ms_ = 0;
};

// The watch of the evaluation running on this thread, if any: the checks call
// verify_process_state at their call sites, and it does nothing where no watch is active.
class ActiveProcessStateWatch {
 public:
  explicit ActiveProcessStateWatch(ProcessStateWatch* watch);
  ~ActiveProcessStateWatch();
  ActiveProcessStateWatch(const ActiveProcessStateWatch&) = delete;
  ActiveProcessStateWatch& operator=(const ActiveProcessStateWatch&) = delete;

 private:
  ProcessStateWatch* previous_;
};

// The active watch's verify(depth, where); true where none is active.
bool verify_process_state(ProcessStateWatch::Depth depth, const std::string& where);

}  // namespace kbench::check
