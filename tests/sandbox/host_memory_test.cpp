// The host memory a request may hold: computed from its problem (sandbox/host_memory.h), and
// enforced by the parent on stand-in workers that grow their resident memory on purpose.
#include "fixtures.h"
#include "problems/catalog.h"
#include "sandbox/host_memory.h"
#include "sandbox/worker.h"

#include "catch.h"

using namespace kbench;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

sandbox::EvalRequest request_for(int level, int problem) {
  sandbox::EvalRequest r;
  r.submission = "x.cu";
  r.level = level;
  r.problem = problem;
  return r;
}

double weight_gib(int level, int id) {
  return static_cast<double>(problems::Catalog::load(problems::project_root()).get(level, id).weight_bytes) / kGiB;
}

// A stand-in worker in Python: reads the request, holds `mib` MiB (written, so resident), then
// answers with a record and waits for the next request.
std::string python_worker(const std::string& name, int mib) {
  return testing::fake_worker(
      name, "exec python3 -c \"\nimport json, os, sys, time\nfor line in sys.stdin:\n"
            "    token = json.loads(line)['reply_token']\n    held = b'x' * (" + std::to_string(mib) + " << 20)\n"
            "    time.sleep(0.3)\n    os.write(3, (json.dumps({'record': {'verdict': 'correct'}, 'token': token}) + "
            "'\\\\n').encode())\n\"");
}

}  // namespace

TEST_CASE("a request's host memory budget: what its worker held, headroom, its weights and the next problem's", "[sandbox]") {
  sandbox::Budgets budgets;
  budgets.host_memory_gib = 48;
  budgets.host_memory_headroom_gib = 10;
  // L1#19 (ReLU) has no weights: the headroom alone.
  auto b = sandbox::host_memory_budget(request_for(1, 19), budgets, 3.0);
  CHECK(b.allowance_gib == Approx(10.0));
  CHECK(b.budget_gib == Approx(13.0));
  // L3#1 (MLP, 2.5 GiB of weights) with L2#56 (4 GiB) read ahead: each problem's weights twice.
  auto mlp = request_for(3, 1);
  mlp.next_level = 2, mlp.next_problem = 56;
  b = sandbox::host_memory_budget(mlp, budgets, 3.0);
  REQUIRE(weight_gib(3, 1) > 2);
  CHECK(b.allowance_gib == Approx(10.0 + 2 * weight_gib(3, 1) + 2 * weight_gib(2, 56)));
  CHECK(b.budget_gib == Approx(3.0 + b.allowance_gib));
  // Under --gpu-memory the candidate's output may wait in host memory: more is allowed.
  auto offloaded = request_for(1, 19);
  offloaded.gpu_memory_gib = 22;
  CHECK(sandbox::host_memory_budget(offloaded, budgets, 3.0).allowance_gib > 10.0);
  // Never above the cap; the cap alone where nothing is known.
  budgets.host_memory_gib = 8;
  CHECK(sandbox::host_memory_budget(request_for(1, 19), budgets, 3.0).budget_gib == Approx(8.0));
  CHECK(sandbox::host_memory_budget(request_for(1, 19), budgets, 0.0).budget_gib == Approx(8.0));
  const auto unknown = sandbox::host_memory_budget(request_for(9, 999), budgets, 3.0);
  CHECK(unknown.allowance_gib == 0);
  CHECK(unknown.budget_gib == Approx(8.0));
}

TEST_CASE("a worker that grows past its request's budget is killed there, below the cap", "[sandbox]") {
  sandbox::Budgets budgets;  // cap 48 GiB
  budgets.host_memory_headroom_gib = 0.25;
  sandbox::Worker worker(python_worker("request-hoard", 400));
  const auto record = worker.evaluate(request_for(1, 19), budgets);
  CHECK(record["verdict"] == "runtime_error");
  CHECK_THAT(record["message"].get<std::string>(), contains_text("out of host memory"));
  CHECK_THAT(record["message"].get<std::string>(), contains_text("for this request"));
  const auto& held = record["host_memory"];
  CHECK(held["start_gib"].get<double>() > 0);
  CHECK(held["budget_gib"].get<double>() == Approx(held["start_gib"].get<double>() + 0.25));
  CHECK(held["peak_gib"].get<double>() > held["budget_gib"].get<double>());
}

TEST_CASE("a worker that stays within its request's budget is not killed, and its record says what it held", "[sandbox]") {
  sandbox::Budgets budgets;
  budgets.host_memory_headroom_gib = 1;
  sandbox::Worker worker(python_worker("request-within", 200));
  const auto record = worker.evaluate(request_for(1, 19), budgets);
  CHECK(record["verdict"] == "correct");
  const auto& held = record["host_memory"];
  CHECK(held["peak_gib"].get<double>() >= 0.19);  // the 200 MiB it wrote
  CHECK(held["peak_gib"].get<double>() < held["budget_gib"].get<double>());
}
