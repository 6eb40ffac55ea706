// Every problem of the manifest, loaded from C++ the way an evaluation loads it. Needs the archives
// that the `export_problems` ctest fixture makes (models above the test's weight budget are skipped
// with the reason printed).
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check/compare.h"
#include "fixtures.h"
#include "problems/catalog.h"
#include "problems/reference.h"

#include "catch.h"

using namespace kbench;

namespace {

int64_t weight_budget() {
  const char* env = std::getenv("KBENCH_TEST_MAX_WEIGHT_BYTES");
  return env ? std::atoll(env) : (int64_t{1} << 30);
}

// Why this build cannot load `p`, or "" when it can.
std::string skip_reason(const problems::Problem& p) {
  if (problems::needs_newer_torch(p))
    return "needs PyTorch >= " + p.min_torch + ": " + p.skip_reason;
  if (p.weight_bytes > weight_budget())
    return "weights of " + std::to_string(p.weight_bytes >> 20) + " MiB exceed KBENCH_TEST_MAX_WEIGHT_BYTES";
  return "";
}

std::string dtype_name(const at::Tensor& t) {
  std::string s = c10::toString(t.scalar_type());
  static const std::map<std::string, std::string> names = {{"Float", "float32"}, {"Long", "int64"}, {"Bool", "bool"},
                                                           {"Int", "int32"}, {"Double", "float64"}, {"Half", "float16"}};
  return names.count(s) ? names.at(s) : s;
}

// The catalog's facts about every problem, kept in the repository (tests/fixtures/problems/catalog_facts.jsonl;
// $KBENCH_CATALOG_FACTS names another such file), by (level, id).
std::map<std::pair<int, int>, nlohmann::json> read_catalog_facts() {
  const char* env = std::getenv("KBENCH_CATALOG_FACTS");
  const std::filesystem::path path = env ? env : testing::test_dir() / "fixtures" / "problems" / "catalog_facts.jsonl";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::map<std::pair<int, int>, nlohmann::json> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto row = nlohmann::json::parse(line);
    rows[{row["level"].get<int>(), row["id"].get<int>()}] = row;
  }
  return rows;
}

}  // namespace

TEST_CASE("a relative KBENCH_CACHE names a directory under the working directory, as an absolute path", "[problems]") {
  // Builds run their compilers in directories of their own under the cache: a relative path there
  // would name another file.
  const auto dir = [] {
    const testing::ScopedEnv relative("KBENCH_CACHE", "relative/cache");
    return problems::cache_dir();
  }();
  CHECK(dir.is_absolute());
  CHECK(dir == std::filesystem::current_path() / "relative" / "cache");
}

TEST_CASE("every problem's archive loads in C++ (or is skipped with its reason)", "[problems]") {
  const auto catalog = problems::Catalog::load(problems::project_root());
  REQUIRE(!catalog.all().empty());
  int loaded = 0, skipped = 0;
  for (const auto& p : catalog.all()) {
    if (const auto why = skip_reason(p); !why.empty()) {
      std::cout << "skipped " << p.key() << ": " << why << "\n";
      ++skipped;
      continue;
    }
    INFO(p.key());
    problems::Reference ref(p, torch::kCPU);
    int64_t count = 0;
    for (const auto& entry : ref.module().named_parameters()) count += entry.value.numel();
    CHECK(count == p.parameter_count);  // and so the catalog's count, which the manifest is checked against
    ++loaded;
  }
  std::cout << loaded << " loaded, " << skipped << " skipped\n";
  CHECK(loaded > 0);
}

TEST_CASE("the manifest has the catalog's problems, parameter counts and input sizes", "[problems]") {
  const auto catalog = problems::Catalog::load(problems::project_root());
  const auto facts = read_catalog_facts();
  CHECK(facts.size() == 250);
  CHECK(catalog.all().size() == facts.size());
  for (const auto& [key, fact] : facts) {
    INFO(fact.at("name").get<std::string>());
    const auto* p = catalog.find(key.first, key.second);
    REQUIRE(p != nullptr);
    CHECK(p->name == fact.at("name").get<std::string>());
    CHECK(p->parameter_count == fact.at("params").get<int64_t>());
    CHECK(p->input_bytes == fact.at("input_bytes").get<int64_t>());
  }
}

TEST_CASE("generated inputs have the catalog's shapes and dtypes", "[problems]") {
  const auto catalog = problems::Catalog::load(problems::project_root());
  const auto facts = read_catalog_facts();
  for (const auto& p : catalog.all()) {
    INFO(p.key());
    const auto fact = facts.find({p.level, p.id});
    REQUIRE(fact != facts.end());
    const auto& want = fact->second.at("inputs");
    // The meta device gives shapes and dtypes without allocating the (often multi-GB) inputs.
    const auto gen = problems::compile_input_generator(p.input_generator);
    const auto inputs = problems::run_input_generator(*gen, 0, torch::Device(torch::kMeta));
    REQUIRE(inputs.size() == p.inputs.size());
    REQUIRE(inputs.size() == want.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (p.inputs[i].is_scalar) {
        CHECK(!inputs[i].isTensor());
        CHECK(want[i].contains("scalar"));
        continue;
      }
      const auto& t = inputs[i].toTensor();
      CHECK(t.sizes().vec() == p.inputs[i].shape);
      CHECK(dtype_name(t) == p.inputs[i].dtype);
      CHECK(t.sizes().vec() == want[i].at("shape").get<std::vector<int64_t>>());
      CHECK(dtype_name(t) == want[i].at("dtype").get<std::string>());
    }
  }
}

TEST_CASE("same seed gives identical inputs, another seed different ones", "[problems]") {
  const auto catalog = problems::Catalog::load(problems::project_root());
  int checked = 0;
  for (const auto& p : catalog.all()) {
    if (p.input_bytes > (int64_t{64} << 20)) continue;  // keep the CPU test light
    INFO(p.key());
    const auto gen = problems::compile_input_generator(p.input_generator);
    const auto a = problems::run_input_generator(*gen, 7, torch::kCPU);
    const auto b = problems::run_input_generator(*gen, 7, torch::kCPU);
    const auto c = problems::run_input_generator(*gen, 8, torch::kCPU);
    bool any_differs = false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].isTensor()) continue;
      CHECK(torch::equal(a[i].toTensor(), b[i].toTensor()));
      any_differs = any_differs || !torch::equal(a[i].toTensor(), c[i].toTensor());
    }
    CHECK(any_differs);
    ++checked;
  }
  std::cout << checked << " problems with inputs up to 64 MiB checked for seed determinism\n";
  CHECK(checked > 0);
}

// Rule for CI: a CPU forward for every problem whose inputs are at most 64 MiB and whose forward fits
// a budget of 4 s of CPU time and 6 GB of address space on the machine running the test, measured
// by running it in a child process under those limits; problems over the budget are listed as
// skipped. The output must be finite (the reference runs in training mode, as KernelBench's).
TEST_CASE("references run a CPU forward where the cost allows", "[problems]") {
  const auto catalog = problems::Catalog::load(problems::project_root());
  int ran = 0, over_budget = 0;
  for (const auto& p : catalog.all()) {
    if (!skip_reason(p).empty() || p.input_bytes > (int64_t{64} << 20)) continue;
    INFO(p.key());
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      rlimit cpu{4, 4}, address_space{int64_t{6} << 30, int64_t{6} << 30};
      ::setrlimit(RLIMIT_CPU, &cpu);
      ::setrlimit(RLIMIT_AS, &address_space);
      try {
        problems::Reference ref(p, torch::kCPU);
        const auto out = ref.forward(ref.make_inputs(1), 1);
        const auto outputs = out.isTuple() ? out.toTupleRef().elements().vec() : std::vector<c10::IValue>{out};
        for (const auto& o : outputs)
          if (o.isTensor() && !torch::isfinite(o.toTensor()).all().item<bool>()) ::_exit(1);
        ::_exit(0);
      } catch (const std::bad_alloc&) {
        ::_exit(3);  // over the memory budget
      } catch (const std::exception& e) {
        const std::string what = e.what();
        ::_exit(what.find("alloc") != std::string::npos ? 3 : 2);
      }
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    const bool killed_by_budget = WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL);
    if (killed_by_budget || (WIFEXITED(status) && WEXITSTATUS(status) == 3)) {
      std::cout << "over the CPU budget, skipped: " << p.key() << "\n";
      ++over_budget;
      continue;
    }
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // 1: non-finite output, 2: the forward raised
    ++ran;
  }
  std::cout << ran << " CPU forwards, " << over_budget << " over the budget\n";
  CHECK(ran > 0);
}

// Reference::to moves what for_each_tensor finds; a tensor it missed would stay on the CPU and fail
// only on the GPU. Here a dtype change stands in for the device change, so the walk is checked on
// any machine.
TEST_CASE("for_each_tensor reaches parameters, buffers, plain attributes, containers and submodules once each", "[problems]") {
  torch::jit::Module inner("Inner");
  inner.register_parameter("weight", torch::ones({2}), false);
  torch::jit::Module outer("Outer");
  const auto h0 = torch::zeros({3});
  outer.register_buffer("running_mean", torch::zeros({2}));
  outer.register_attribute("h0", c10::TensorType::get(), h0);
  c10::List<at::Tensor> list;
  list.push_back(h0);  // the same tensor as h0: visited once
  list.push_back(torch::ones({4}));
  outer.register_attribute("states", c10::ListType::ofTensors(), list);
  outer.register_module("inner", inner);

  int visits = 0;
  problems::for_each_tensor(outer, [&](at::Tensor& t) {
    ++visits;
    t.set_data(t.to(torch::kDouble));
  });
  CHECK(visits == 4);
  CHECK(outer.attr("running_mean").toTensor().scalar_type() == torch::kDouble);
  CHECK(outer.attr("h0").toTensor().scalar_type() == torch::kDouble);
  for (const auto& t : outer.attr("states").toTensorList().vec()) CHECK(t.scalar_type() == torch::kDouble);
  CHECK(outer.attr("inner").toModule().attr("weight").toTensor().scalar_type() == torch::kDouble);
}

TEST_CASE("a reference's BatchNorm running statistics, which its training-mode forward updates, are not in its fingerprint",
          "[problems]") {
  // L3#46 (NetVLAD with ghost clusters) has a BatchNorm1d; kbench runs the reference in training
  // mode, as KernelBench does, so every forward moves its running mean. The reference-integrity
  // check fingerprints the reference's state around a candidate: before this rule, any candidate of
  // a problem with batch normalisation was input_mutated ("wrote into the reference's parameters").
  const auto catalog = problems::Catalog::load(problems::project_root());
  const auto* p = catalog.find(3, 46);
  REQUIRE(p);
  if (const auto why = skip_reason(*p); !why.empty()) {
    std::cout << "skipped " << p->key() << ": " << why << "\n";
    return;
  }
  problems::Reference ref(*p, torch::kCPU);
  const auto before = check::fingerprints(ref.state());
  const auto running_mean = ref.state().at("batch_norm.running_mean").clone();
  ref.forward(ref.make_inputs(1, "own"), 1);
  CHECK_FALSE(torch::equal(ref.state().at("batch_norm.running_mean"), running_mean));  // the forward moved it
  CHECK(check::fingerprints(ref.state()) == before);
  CHECK(check::is_running_statistic("batch_norm.num_batches_tracked"));
  CHECK_FALSE(check::is_running_statistic("batch_norm.weight"));
  ref.state().at("clusters").add_(1.0);  // a write into a weight is still seen
  CHECK(check::fingerprints(ref.state()) != before);
}
