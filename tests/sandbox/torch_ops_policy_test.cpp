// --torch-ops forbid decided from the host program, before anything runs: no GPU needed. The same
// policy applied to the ops that run in the trials is the adversarial test's, on the GPU.
#include "fixtures.h"
#include "sandbox/evaluation.h"

#include "catch.h"  // last: libtorch brings glog, whose CHECK would replace Catch's

using namespace kbench;

namespace {

nlohmann::json compile_only(const std::string& fixture, int level, int problem, bool forbid) {
  sandbox::EvalRequest req;
  req.submission = (testing::test_dir() / fixture).string();
  req.level = level;
  req.problem = problem;
  req.compile_only = true;
  req.check.forbid_torch_ops = forbid;
  return sandbox::evaluate(req);
}

}  // namespace

TEST_CASE("under --torch-ops forbid a forward that calls PyTorch compute ops is no_custom_kernel before it runs", "[sandbox]") {
  const auto nudged = compile_only("fixtures/adversarial/torch_result_nudged.cu", 1, 19, true);
  CHECK(nudged["verdict"] == "no_custom_kernel");
  CHECK_THAT(nudged["message"].get<std::string>(), contains_text("aten::relu"));
  // KernelBench has no such policy, and nothing ran to tell what its eval would say.
  CHECK(nudged["verdicts"]["kernelbench"]["verdict"] == "not_checked");
  // Allowed (the default), it compiles and waits for a GPU like any other.
  CHECK(compile_only("fixtures/adversarial/torch_result_nudged.cu", 1, 19, false)["verdict"] == "not_checked");
  // A program of kernels, allocation and views only passes the policy.
  CHECK(compile_only("fixtures/adversarial/sgemm_honest.cu", 1, 1, true)["verdict"] == "not_checked");
  // Looking a parameter up by name computes nothing: L3#4's reference kernel (params["conv1.weight"], ...)
  // passes the policy; on the H100 it was refused for aten::__getitem__.
  CHECK(compile_only("../level3/4_LeNet5.cu", 3, 4, true)["verdict"] == "not_checked");
  // The option travels to the worker with the request.
  sandbox::EvalRequest req;
  req.check.forbid_torch_ops = true;
  CHECK(sandbox::EvalRequest::from_json(req.to_json()).check.forbid_torch_ops);
  CHECK(req.to_json()["options"]["torch_ops"] == "forbid");
}
