// check/process_state.h on the CPU: each kind of setting a submission could change is found and
// named, a kernel registered for an aten op (as TORCH_LIBRARY_IMPL or torch.library does) is found
// by the overload's name (at each check for the overloads the watched work ran, at the end for
// every op's), a new op of the submission's own is not a change, and a watch keeps the first
// change it saw. The GPU settings (limits, streams, access-policy windows) are covered by the GPU
// tests of tests/sandbox/process_state_gpu_test.cpp.
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>
#include <torch/torch.h>

#include "check/process_state.h"

#include "catch.h"

using namespace kbench::check;

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

at::Tensor not_relu(const at::Tensor& x) { return x.clone(); }
at::Tensor not_add(const at::Tensor& a, const at::Tensor&, const at::Scalar&) { return a.clone(); }
at::Tensor not_add_scalar(const at::Tensor& a, const at::Scalar&, const at::Scalar&) { return a.clone(); }

}  // namespace

TEST_CASE("process state: an unchanged process shows no change", "[process_state]") {
  const auto before = capture_settings(-1);
  CHECK(state_changes(before, capture_settings(-1)).empty());
  CHECK(before.count("cudnn.enabled") == 1);
  CHECK(before.count("matmul.allow_tf32") == 1);
  CHECK(before.count("default_dtype") == 1);
}

TEST_CASE("process state: backend flags, dtype, threads and dispatch keys are named when changed", "[process_state]") {
  auto& context = at::globalContext();
  const auto before = capture_settings(-1);

  context.setUserEnabledCuDNN(!context.userEnabledCuDNN());
  auto changes = joined(state_changes(before, capture_settings(-1)));
  context.setUserEnabledCuDNN(!context.userEnabledCuDNN());
  CHECK_THAT(changes, contains_text("cudnn.enabled: 1 -> 0"));

  context.setAllowTF32CuBLAS(!context.allowTF32CuBLAS());
  changes = joined(state_changes(before, capture_settings(-1)));
  context.setAllowTF32CuBLAS(!context.allowTF32CuBLAS());
  CHECK_THAT(changes, contains_text("matmul.allow_tf32"));

  context.setBenchmarkCuDNN(!context.benchmarkCuDNN());
  changes = joined(state_changes(before, capture_settings(-1)));
  context.setBenchmarkCuDNN(!context.benchmarkCuDNN());
  CHECK_THAT(changes, contains_text("cudnn.benchmark"));

  const auto dtype = c10::get_default_dtype();
  c10::set_default_dtype(caffe2::TypeMeta::Make<double>());
  changes = joined(state_changes(before, capture_settings(-1)));
  c10::set_default_dtype(dtype);
  CHECK_THAT(changes, contains_text("default_dtype: float -> double"));

  const int threads = at::get_num_threads();
  at::set_num_threads(threads + 1);
  changes = joined(state_changes(before, capture_settings(-1)));
  at::set_num_threads(threads);
  CHECK_THAT(changes, contains_text("threads.intra_op"));

  {
    // What autocast or a Python dispatch mode does: a key added to the thread's dispatch.
    c10::impl::IncludeDispatchKeyGuard autocast(c10::DispatchKey::AutocastCPU);
    changes = joined(state_changes(before, capture_settings(-1)));
  }
  CHECK_THAT(changes, contains_text("thread.dispatch_keys.included"));

  CHECK(state_changes(before, capture_settings(-1)).empty());  // all restored
}

TEST_CASE("process state: a kernel registered for an aten op is found by the op's name", "[process_state]") {
  const auto before = capture_dispatcher({"aten::relu"});
  REQUIRE(before.count("aten::relu") == 1);
  {
    // What TORCH_LIBRARY_IMPL(aten, CPU, m) { m.impl("relu", ...); } in an extension does when it loads.
    torch::Library override(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    override.impl("relu", TORCH_FN(not_relu));
    const auto changes = joined(state_changes(before, capture_dispatcher({"aten::relu"})));
    CHECK_THAT(changes, contains_text("aten::relu: CPU replaced"));
  }
  CHECK(state_changes(before, capture_dispatcher({"aten::relu"})).empty());  // deregistered with the library
}

namespace {

// The file and line of the kernel registered for `key` in an op's dumpState(): "CPU: registered at
// <file>:<line> :: ...", which a submission can read as easily as kbench.
std::pair<std::string, uint32_t> registered_at(const std::string& state, const std::string& key) {
  const std::string marker = "\n" + key + ": registered at ";
  const auto start = state.find(marker) + marker.size();
  const auto line_at = state.find(':', state.find(".cpp", start));
  return {state.substr(start, line_at - start), static_cast<uint32_t>(std::stoul(state.substr(line_at + 1)))};
}

}  // namespace

TEST_CASE("process state: a kernel registered under the file and line of the one it overrides is found",
          "[process_state]") {
  const auto before = capture_dispatcher({"aten::relu"});
  auto& dispatcher = c10::Dispatcher::singleton();
  const auto state = dispatcher.findOp({"aten::relu", ""})->dumpState();
  const auto [file, line] = registered_at(state, "CPU");
  {
    torch::Library forged(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, file.c_str(), line);
    forged.impl("relu", TORCH_FN(not_relu));
    const auto now = dispatcher.findOp({"aten::relu", ""})->dumpState();
    REQUIRE(registered_at(now, "CPU") == std::make_pair(file, line));  // the active kernel reads as before
    CHECK_FALSE(at::relu(-at::ones({2})).eq(0).all().item<bool>());  // and is not relu
    CHECK_THAT(joined(state_changes(before, capture_dispatcher({"aten::relu"}))), contains_text("aten::relu: CPU replaced"));
  }
  CHECK(state_changes(before, capture_dispatcher({"aten::relu"})).empty());
}

TEST_CASE("process state: an op of the submission's own namespace is not a change", "[process_state]") {
  const auto before = capture_dispatcher();
  torch::Library own(torch::Library::DEF, "kbench_test_own_ops", c10::nullopt, __FILE__, __LINE__);
  own.def("twice(Tensor x) -> Tensor");
  CHECK(state_changes(before, capture_dispatcher()).empty());
}

TEST_CASE("process state: a watch compares the watched ops at each check and every op at the end", "[process_state]") {
  ProcessStateWatch watch(-1, /*watch_dispatcher=*/true);
  watch.watch_ops(ops_called_by([] { at::relu(at::ones({4})); }));
  CHECK(watch.verify(ProcessStateWatch::Depth::watched_ops, "before anything"));
  {
    torch::Library override(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    override.impl("sigmoid", TORCH_FN(not_relu));  // an op the watched work never called
    CHECK(watch.verify(ProcessStateWatch::Depth::watched_ops, "sigmoid replaced"));
    CHECK_FALSE(watch.verify(ProcessStateWatch::Depth::all_ops, "at the end"));
  }
  CHECK(watch.changed());
  CHECK_THAT(watch.change(), contains_text("aten::sigmoid"));
  CHECK_THAT(watch.change(), contains_text("(at the end)"));
  CHECK_FALSE(watch.verify(ProcessStateWatch::Depth::settings, "later"));  // the first change is kept
  CHECK_THAT(watch.change(), !contains_text("later"));
}

TEST_CASE("process state: ops_called_by names the overload each call ran", "[process_state]") {
  const auto ops = ops_called_by([] { at::add(at::ones({4}), at::ones({4})); });
  CHECK(ops.count("aten::add.Tensor") == 1);
  CHECK(ops.count("aten::add.Scalar") == 0);
  CHECK(ops.count("aten::add") == 0);
}

TEST_CASE("process state: a watched check finds the overload its work ran replaced, and no other op", "[process_state]") {
  ProcessStateWatch watch(-1, /*watch_dispatcher=*/true);
  watch.watch_ops(ops_called_by([] { at::add(at::ones({4}), at::ones({4})); }));  // aten::add.Tensor
  {
    torch::Library others(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    others.impl("sigmoid", TORCH_FN(not_relu));
    CHECK(watch.verify(ProcessStateWatch::Depth::watched_ops, "sigmoid replaced"));
  }
  torch::Library override(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
  override.impl("add.Tensor", TORCH_FN(not_add));
  CHECK_FALSE(watch.verify(ProcessStateWatch::Depth::watched_ops, "after the candidate's call in trial 1"));
  CHECK_THAT(watch.change(), contains_text("aten::add.Tensor: CPU replaced (after the candidate's call in trial 1)"));
}

TEST_CASE("process state: another overload of a watched op is compared at the end, not at each check", "[process_state]") {
  ProcessStateWatch watch(-1, /*watch_dispatcher=*/true);
  watch.watch_ops(ops_called_by([] { at::add(at::ones({4}), at::ones({4})); }));  // aten::add.Tensor alone
  torch::Library override(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
  override.impl("add.Scalar", TORCH_FN(not_add_scalar));  // what the watched work never runs
  CHECK(watch.verify(ProcessStateWatch::Depth::watched_ops, "after the candidate's call in trial 1"));
  CHECK_FALSE(watch.verify(ProcessStateWatch::Depth::all_ops, "at the end of the evaluation"));
  CHECK_THAT(watch.change(), contains_text("aten::add.Scalar: CPU added (at the end of the evaluation)"));
}

TEST_CASE("process state: the active watch hears the checks' calls, and none is a no-op", "[process_state]") {
  CHECK(verify_process_state(ProcessStateWatch::Depth::settings, "no watch"));
  ProcessStateWatch watch(-1, /*watch_dispatcher=*/true);
  watch.watch_ops(ops_called_by([] { at::relu(at::ones({4})); }));
  {
    ActiveProcessStateWatch active(&watch);
    torch::Library override(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    override.impl("relu", TORCH_FN(not_relu));
    CHECK_FALSE(verify_process_state(ProcessStateWatch::Depth::watched_ops, "after the candidate's call in trial 0"));
  }
  CHECK_THAT(watch.change(), contains_text("aten::relu: CPU replaced (after the candidate's call in trial 0)"));
  CHECK(verify_process_state(ProcessStateWatch::Depth::all_ops, "no longer active"));
}

TEST_CASE("process state: ops_called_by lists the ops a piece of work calls, nested ones included", "[process_state]") {
  const auto ops = ops_called_by([] { at::linear(at::ones({2, 3}), at::ones({4, 3})); });
  CHECK(ops.count("aten::linear") == 1);
  CHECK(ops.size() > 1);  // what linear calls in turn (matmul, mm, t, ...)
}
