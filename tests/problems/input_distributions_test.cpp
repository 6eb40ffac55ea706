// The input generators' distributions (scripts/tools/problem_source.py's _draw), run from C++ on the CPU
// as the robustness trials run them on the GPU: "own" gives the problem's inputs; the others draw
// every floating-point input from another distribution, leave integer draws to the problem's own
// distribution, and keep what the problem derives from its draws.
#include "problems/catalog.h"
#include "problems/reference.h"

#include "catch.h"

using namespace kbench;

namespace {

std::vector<at::Tensor> inputs_of(int level, int id, const std::string& dist, uint64_t seed = 5) {
  const auto catalog = problems::Catalog::load(problems::project_root());
  const auto gen = problems::compile_input_generator(catalog.get(level, id).input_generator);
  std::vector<at::Tensor> out;
  for (const auto& v : problems::run_input_generator(*gen, seed, torch::kCPU, dist))
    if (v.isTensor()) out.push_back(v.toTensor());
  return out;
}

}  // namespace

TEST_CASE("every generator takes a distribution, and 'own' is the default", "[problems]") {
  const auto catalog = problems::Catalog::load(problems::project_root());
  for (const auto& p : catalog.all()) {
    INFO(p.key());
    const auto gen = problems::compile_input_generator(p.input_generator);
    const auto meta = torch::Device(torch::kMeta);
    const auto own = problems::run_input_generator(*gen, 0, meta);
    for (const auto& dist : problems::kRobustnessDistributions) {
      const auto other = problems::run_input_generator(*gen, 0, meta, dist);
      REQUIRE(other.size() == own.size());
      for (size_t i = 0; i < own.size(); ++i)
        if (own[i].isTensor()) CHECK(other[i].toTensor().sizes() == own[i].toTensor().sizes());
    }
  }
}

TEST_CASE("the robustness distributions are signed, heavy-tailed and large, signed and small", "[problems]") {
  // L1#72 has a 16 MiB input: enough values for stable moments, small enough for the CPU.
  const auto own = inputs_of(1, 72, "own")[0];
  CHECK(own.min().item<float>() >= 0.0f);
  CHECK(own.max().item<float>() < 1.0f);
  CHECK(torch::equal(own, inputs_of(1, 72, "own")[0]));  // the same seed, the same inputs

  const auto normal = inputs_of(1, 72, "normal")[0];
  CHECK(normal.mean().item<double>() == Approx(0.0).margin(0.01));
  CHECK(normal.std().item<double>() == Approx(1.0).epsilon(0.02));

  const auto logistic = inputs_of(1, 72, "logistic_x10")[0];
  CHECK(logistic.std().item<double>() == Approx(10.0 * M_PI / std::sqrt(3.0)).epsilon(0.05));  // pi / sqrt(3) x 10
  CHECK(logistic.abs().max().item<double>() > 100.0);

  const auto small = inputs_of(1, 72, "uniform_pm0.1")[0];
  CHECK(small.min().item<double>() >= -0.1);
  CHECK(small.max().item<double>() <= 0.1);
  CHECK(small.min().item<double>() < -0.09);
}

TEST_CASE("integer inputs keep their distribution and derived structure is kept", "[problems]") {
  // L1#95 CrossEntropyLoss (512 MiB of logits): the class indices are still integers of [0, 4096)
  // spread over the range, whatever the logits' distribution.
  const auto own = inputs_of(1, 95, "own"), normal = inputs_of(1, 95, "normal");
  REQUIRE(own.size() == 2);
  CHECK(normal[1].scalar_type() == own[1].scalar_type());
  CHECK(normal[1].min().item<int64_t>() >= 0);
  CHECK(normal[1].max().item<int64_t>() < 4096);
  CHECK(normal[1].max().item<int64_t>() > 4000);
  CHECK(normal[0].min().item<float>() < 0.0f);
  // L1#14: upper triangular inputs stay upper triangular, now with signed values.
  const auto triu = inputs_of(1, 14, "normal");
  for (const auto& t : triu) {
    CHECK(torch::equal(t, torch::triu(t)));
    CHECK(t.min().item<float>() < 0.0f);
  }
}
