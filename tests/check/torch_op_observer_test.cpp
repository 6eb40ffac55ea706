// The observer of the host program's PyTorch ops, on the CPU: which results it digests
// (value-computing ops, as large as an output; values as they were when made) and when an output
// counts as a PyTorch result handed through. The GPU test (tests/sandbox/adversarial_test.cpp)
// runs it in real trials on submissions that hand a PyTorch result to a copy kernel, to an idle
// kernel, or to a kernel that only sets a flag.
#include <torch/script.h>

#include "check/compare.h"
#include "check/torch_op_observer.h"
#include "compile/host_program.h"

#include "catch.h"

using namespace kbench;

TEST_CASE("the observer digests value-computing results as large as an output, as they were when made", "[check]") {
  const compile::ScriptHostProgram host(
      "def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:\n"
      "    y = torch.relu(x)\n"
      "    z = y.contiguous().view(-1)\n"
      "    params['w'] = torch.zeros_like(x)\n"
      "    params['s'] = torch.sum(x)\n"
      "    params['d'] = torch.relu(x.double())\n"  // kept in params: TorchScript drops unused results
      "    y.mul_(2.0)\n"
      "    return z\n",
      1);
  const auto x = torch::randn({4, 8});
  c10::Dict<std::string, at::Tensor> params;
  std::vector<check::ObservedResult> seen;
  {
    check::TorchOpObserver observer({{32, at::kFloat}});
    host.forward({x}, params);
    seen = observer.results();
  }
  // relu (its inner clamp_min is the same result, counted once), relu in double, the in-place mul_;
  // not the copy, the view, the fill, nor the one-element sum.
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].op == "aten::relu");
  CHECK(seen[1].op == "aten::relu");
  CHECK(seen[2].op == "aten::mul_");
  // Digests of the values when made, in the output's dtype: relu's before mul_ doubled them, and the
  // double result's the same as the float one's.
  CHECK(seen[0].digest == check::fingerprint(torch::relu(x).reshape(-1)));
  CHECK(seen[1].digest == seen[0].digest);
  CHECK(seen[2].digest == check::fingerprint(2 * torch::relu(x).reshape(-1)));
  // Nothing is observed once the observer is gone.
  check::TorchOpObserver later({{32, at::kFloat}});
  CHECK(later.results().empty());
}

TEST_CASE("an output that is a PyTorch result made before a later launch is PyTorch's answer", "[check]") {
  const auto x = torch::randn({64, 16});
  const auto answer = torch::relu(x);
  const auto digest = check::fingerprint(answer.reshape(-1));
  // Made before the only launch (a copy kernel was handed it): found, whatever the output's shape.
  const std::vector<check::ObservedResult> before{{"aten::relu", 0, digest, 0}};
  const auto found = check::pytorch_computed_answer(before, answer.clone().reshape({16, 64}), 1);
  CHECK_THAT(found, contains_text("aten::relu"));
  CHECK_THAT(found, contains_text("output 0"));
  // Made after the last launch: a copy of what the kernels wrote.
  CHECK(check::pytorch_computed_answer(before, answer, 0).empty());
  // An output that differs from the result (a matmul before an epilogue kernel that adds a bias,
  // however small) is no finding.
  CHECK(check::pytorch_computed_answer(before, answer + 1e-3, 1).empty());
  // The second output of a tuple is found too.
  const std::vector<check::ObservedResult> second{{"aten::relu", 1, digest, 0}};
  const auto pair = c10::ivalue::Tuple::create({torch::ones({3}), answer});
  CHECK_THAT(check::pytorch_computed_answer(second, pair, 2), contains_text("output 1"));
}

TEST_CASE("a library function's result handed to the output is found as a PyTorch op's is", "[check]") {
  const auto answer = torch::randn({8, 4});
  // The outputs compared below, made before the observer watches this thread's ops.
  const auto copied = answer.clone(), with_bias = answer + 1;
  std::vector<check::ObservedResult> seen;
  {
    check::TorchOpObserver observer({{32, at::kFloat}});
    // What launch/library_calls.cpp hands the observer after a GEMM: what it wrote into C.
    observer.library_returned("cublasSgemm_v2", answer);
    observer.library_returned("cublasGemmEx", at::Tensor());  // captured into a graph: no values yet
    CHECK(observer.computing_ops_ran() == std::map<std::string, int64_t>{{"cublasGemmEx", 1}, {"cublasSgemm_v2", 1}});
    seen = observer.results();
  }
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].op == "cublasSgemm_v2");
  CHECK_THAT(check::pytorch_computed_answer(seen, copied, 1), contains_text("cublasSgemm_v2"));
  // An epilogue of the submission's own on the result (a bias) is no finding.
  CHECK(check::pytorch_computed_answer(seen, with_bias, 1).empty());
}
