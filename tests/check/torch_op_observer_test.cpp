// The observer of the host program's PyTorch ops, on the CPU: which results it keeps (value-computing
// ops, as large as an output; copies as they were when made) and when a kept result counts as
// PyTorch having computed the answer. The GPU test (tests/sandbox/adversarial_test.cpp) runs it
// inside robustness trials on submissions that hand a PyTorch result to a copy kernel or to a kernel
// that only sets a flag.
#include <torch/script.h>

#include "check/torch_op_observer.h"
#include "compile/host_program.h"

#include "catch.h"

using namespace kbench;

TEST_CASE("the observer keeps value-computing results as large as an output, as they were when made", "[check]") {
  const compile::HostProgram host(
      "def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:\n"
      "    y = torch.relu(x)\n"
      "    z = y.contiguous().view(-1)\n"
      "    w = torch.zeros_like(x)\n"
      "    s = torch.sum(x)\n"
      "    y.mul_(2.0)\n"
      "    return z\n",
      1);
  const auto x = torch::randn({4, 8});
  c10::Dict<std::string, at::Tensor> params;
  std::vector<check::ObservedResult> kept;
  {
    check::TorchOpObserver observer({32}, int64_t{1} << 20);
    host.forward({x}, params);
    kept = observer.results();
  }
  // relu (its inner clamp_min is the same result, kept once) and the in-place mul_; not the
  // copy, the view, the fill, nor the one-element sum.
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].op == "aten::relu");
  CHECK(kept[1].op == "aten::mul_");
  CHECK(torch::equal(kept[0].values, torch::relu(x)));  // before mul_ doubled it
  CHECK(torch::equal(kept[1].values, 2 * torch::relu(x)));
  // Nothing is observed once the observer is gone.
  check::TorchOpObserver later({32}, 0);
  CHECK(later.results().empty());
}

TEST_CASE("a PyTorch result counts as the answer only if it matches an output and a launch came after it", "[check]") {
  const auto x = torch::randn({64, 16});
  const auto answer = torch::relu(x);
  const check::Tolerance tol{1e-2, 1e-2, true};
  // Made before the only launch (a copy kernel was handed it), in double and flat: still the answer.
  const std::vector<check::ObservedResult> before{{"aten::relu", answer.to(torch::kDouble).reshape(-1), 0}};
  const auto found = check::pytorch_computed_answer(before, answer, 1, tol);
  CHECK_THAT(found, contains_text("aten::relu"));
  CHECK_THAT(found, contains_text("output 0"));
  // Made after the last launch: a copy of what the kernels wrote.
  CHECK(check::pytorch_computed_answer(before, answer, 0, tol).empty());
  // A result that is not the answer (a matmul before an epilogue kernel) is no finding.
  const std::vector<check::ObservedResult> partial{{"aten::mm", x, 0}};
  CHECK(check::pytorch_computed_answer(partial, answer, 1, tol).empty());
  // The second output of a tuple is found too.
  const auto pair = c10::ivalue::Tuple::create({torch::ones({3}), answer});
  CHECK_THAT(check::pytorch_computed_answer(before, pair, 2, tol), contains_text("output 1"));
}
