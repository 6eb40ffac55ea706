// The reference output cache's bookkeeping, on CPU tensors: which outputs it keeps (the copy rate is
// set to extremes so that the decision does not depend on this machine's speed), that a kept output
// comes back equal and is not recomputed, and that its memory cap holds. That kept outputs are
// reused in a batch on the GPU is checked by the GPU batch test (its records count them).
#include <limits>
#include <thread>

#include "check/reference_outputs.h"
#include "fixtures.h"
#include "catch.h"

using kbench::check::ReferenceOutputCache;
using kbench::check::with_output_in_host_memory;

namespace {

struct CountingReference {
  int calls = 0;
  at::Tensor output = at::arange(256, at::kFloat);  // 1 KiB
  c10::IValue operator()() {
    ++calls;
    return c10::ivalue::Tuple::create({output * 2, output + 1});
  }
};

}  // namespace

TEST_CASE("a reference output that copies back faster than it computes is kept and reused", "[check]") {
  ReferenceOutputCache cache(/*max_bytes=*/1 << 20, /*copy_bytes_per_ms=*/1e12);
  CountingReference reference;
  const auto compute = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return reference();
  };
  const auto first = cache.get(42, "own", 42, compute);
  const auto again = cache.get(42, "own", 42, compute);
  CHECK(reference.calls == 1);
  CHECK(cache.reused() == 1);
  REQUIRE(again.isTuple());
  CHECK(at::equal(again.toTupleRef().elements()[0].toTensor(), first.toTupleRef().elements()[0].toTensor()));
  CHECK(at::equal(again.toTupleRef().elements()[1].toTensor(), first.toTupleRef().elements()[1].toTensor()));
  // Another input seed, input distribution or forward seed is another output.
  cache.get(43, "own", 42, compute);
  cache.get(42, "own", 43, compute);
  cache.get(42, "normal", 42, compute);
  CHECK(reference.calls == 4);
  // A kept output is a copy: writing into what the caller got does not change it.
  again.toTupleRef().elements()[0].toTensor().zero_();
  CHECK(at::equal(cache.get(42, "own", 42, compute).toTupleRef().elements()[0].toTensor(), reference.output * 2));
  cache.clear();
  cache.get(42, "own", 42, compute);
  CHECK(reference.calls == 5);
}

TEST_CASE("a reference output that computes faster than it copies back is recomputed", "[check]") {
  ReferenceOutputCache cache(/*max_bytes=*/1 << 20, /*copy_bytes_per_ms=*/1e-3);  // a 2 KiB output: 2e6 ms
  CountingReference reference;
  cache.get(42, "own", 42, [&] { return reference(); });
  cache.get(42, "own", 42, [&] { return reference(); });
  CHECK(reference.calls == 2);
  CHECK(cache.reused() == 0);
  CHECK(cache.computed() == 2);
}

TEST_CASE("the kept outputs stay under their memory cap", "[check]") {
  ReferenceOutputCache cache(/*max_bytes=*/3000, /*copy_bytes_per_ms=*/1e12);  // room for one 2 KiB output
  CountingReference reference;
  const auto compute = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return reference();
  };
  cache.get(1, "own", 1, compute);
  cache.get(2, "own", 2, compute);  // over the cap: not kept
  cache.get(1, "own", 1, compute);
  cache.get(2, "own", 2, compute);
  CHECK(reference.calls == 3);
  CHECK(cache.reused() == 1);
}

TEST_CASE("a candidate's output set aside for the reference comes back whole, also when the reference throws", "[check]") {
  // On the CPU the host copy is the tensor itself; tests/sandbox/gpu_memory_test.cpp shows the GPU
  // memory freed meanwhile.
  const auto a = torch::tensor({1.0f, 2.0f});
  const auto b = torch::tensor({3.0f});
  c10::IValue output = c10::ivalue::Tuple::create({a, c10::List<at::Tensor>({b})});
  bool ran = false;
  with_output_in_host_memory(output, true, [&] {
    ran = true;
    CHECK(output.isNone());  // not the reference's to see
  });
  CHECK(ran);
  REQUIRE(output.isTuple());
  CHECK(output.toTupleRef().elements()[0].toTensor().equal(a));
  CHECK(output.toTupleRef().elements()[1].toTensorList().get(0).equal(b));

  CHECK_THROWS_WITH(with_output_in_host_memory(output, true, [] { throw std::runtime_error("out of memory"); }),
                    "out of memory");
  REQUIRE(output.isTuple());
  CHECK(output.toTupleRef().elements()[0].toTensor().equal(a));

  c10::IValue kept = a;  // not offloaded: the very tensor stays
  with_output_in_host_memory(kept, false, [&] { CHECK(kept.toTensor().is_same(a)); });
  CHECK(kept.toTensor().is_same(a));
}

namespace {

// `finite` (an even count of elements) is found finite, and a NaN, +inf or -inf put at its first,
// middle or last element is found: alone, in a tuple beside a finite tensor and an integer one, and
// in a view that is not contiguous.
void check_finiteness(const at::Tensor& finite) {
  CHECK(kbench::check::all_finite(finite));
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
    for (const int64_t at : {int64_t{0}, finite.numel() / 2, finite.numel() - 1}) {
      INFO(bad << " at " << at << " of " << finite.numel() << " " << finite.dtype() << " on " << finite.device());
      auto t = finite.clone();
      t.view(-1)[at] = bad;
      CHECK_FALSE(kbench::check::all_finite(t));
      CHECK_FALSE(kbench::check::all_finite(
          c10::ivalue::Tuple::create({torch::ones({3}, t.options()), torch::tensor({1, 2}), t})));
      CHECK_FALSE(kbench::check::all_finite(t.view({2, -1}).t()));
    }
  }
}

}  // namespace

TEST_CASE("finiteness on the CPU: a NaN or an infinity anywhere is found", "[check]") {
  check_finiteness(torch::zeros({(int64_t{1} << 24) + 6}));
  check_finiteness(torch::zeros({4, 6}, torch::kDouble));
  CHECK(kbench::check::all_finite(torch::zeros({0, 3})));
  check_finiteness(torch::zeros({10}, torch::kHalf));
  CHECK(kbench::check::all_finite(torch::full({2}, 65504, torch::kHalf)));  // half's largest is finite
  // Finite in its own dtype is finite: a double beyond float's range too.
  CHECK(kbench::check::all_finite(torch::full({2}, 1e300, torch::kDouble)));
}

TEST_CASE("finiteness on the GPU, from each tensor's extremes: a NaN or an infinity anywhere is found, in float, "
          "half and bfloat16",
          "[gpu]") {
  if (!kbench::testing::gpu_or_skip()) return;
  for (const auto dtype : {torch::kFloat, torch::kHalf, torch::kBFloat16})
    check_finiteness(torch::randn({(int64_t{1} << 26) + 4}, torch::TensorOptions().device(torch::kCUDA).dtype(dtype)));
  CHECK(kbench::check::all_finite(torch::zeros({0}, torch::TensorOptions().device(torch::kCUDA))));
  // An output of tensors on two devices (a CPU scalar beside the GPU's answer).
  const auto gpu = torch::zeros({8}, torch::TensorOptions().device(torch::kCUDA));
  CHECK(kbench::check::all_finite(c10::ivalue::Tuple::create({gpu, torch::ones({1})})));
  CHECK_FALSE(kbench::check::all_finite(c10::ivalue::Tuple::create({gpu, torch::full({1}, NAN)})));
}
