// The options table behind serve's requests and `kbench eval --server`: names to fields and back.
#include "sandbox/eval_options.h"

#include "catch.h"

using namespace kbench::sandbox;

TEST_CASE("options set their fields, and options_of gives back the ones that differ from the defaults", "[serve]") {
  auto s = default_eval_settings();
  apply_options({{"trials", 3}, {"seed", 7}, {"robust_trials", 0}, {"compat", "kernelbench"}, {"atol", 0.5},
                 {"timing_trials", 20}, {"warmup", 1}, {"no_flush", true}, {"no_timing", true}, {"compile_only", true},
                 {"arch", "sm_80"}, {"check_budget", 30}, {"torch_ops", "forbid"}},
                s);
  CHECK(s.request.check.trials == 3);
  CHECK(s.request.check.base_seed == 7u);
  CHECK(s.request.check.robust_trials == 0);
  CHECK(s.request.compat_kernelbench);
  CHECK(s.request.check.tolerance.atol == 0.5);
  CHECK(s.request.check.tolerance.rtol == -1);  // still the problem's own
  CHECK(s.request.timing.trials == 20);
  CHECK(s.request.timing.warmup == 1);
  CHECK_FALSE(s.request.timing.flush_l2);
  CHECK_FALSE(s.request.time);
  CHECK(s.request.compile_only);
  CHECK(s.request.arch == "sm_80");
  CHECK(s.budgets.correctness_s == 30);
  CHECK(s.request.check.forbid_torch_ops);

  const auto back = options_of(s);
  CHECK(back == nlohmann::json{{"trials", 3}, {"seed", 7}, {"robust_trials", 0}, {"compat", "kernelbench"}, {"atol", 0.5},
                               {"timing_trials", 20}, {"warmup", 1}, {"no_flush", true}, {"no_timing", true},
                               {"compile_only", true}, {"arch", "sm_80"}, {"check_budget", 30.0}, {"torch_ops", "forbid"}});
  auto again = default_eval_settings();
  apply_options(back, again);
  CHECK(options_of(again) == back);
  CHECK(options_of(default_eval_settings()).empty());

  auto v0_1 = default_eval_settings();
  apply_options({{"compat", "kernelbench-v0.1"}}, v0_1);
  CHECK(v0_1.request.compat_kernelbench);
  CHECK(v0_1.request.check.tolerance.kernelbench == kbench::check::KernelBenchRule::v0_1);
  CHECK(options_of(v0_1) == nlohmann::json{{"compat", "kernelbench-v0.1"}});
}

TEST_CASE("bad options are refused together, each named, and leave budgets at most the caller's", "[serve]") {
  auto s = default_eval_settings();
  try {
    apply_options({{"trails", 3}, {"trials", 2.5}, {"seed", -1}, {"no_timing", "yes"}, {"timing_budget", 301}}, s);
    FAIL("no error");
  } catch (const OptionsError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, contains_text("unknown option \"trails\""));
    CHECK_THAT(what, contains_text("option \"trials\" must be an integer from 1 to 1000, not 2.5"));
    CHECK_THAT(what, contains_text("option \"seed\" must be an integer"));
    CHECK_THAT(what, contains_text("option \"no_timing\" must be true or false"));
    CHECK_THAT(what, contains_text("option \"timing_budget\" must be a number > 0 and at most 300"));
  }
  CHECK_THROWS_AS(apply_options(nlohmann::json::array(), s), OptionsError);
  CHECK(option_list().size() == 23);
}

TEST_CASE("gpu_memory may lower the evaluator's GPU memory limit, never raise or lift it", "[serve]") {
  auto s = default_eval_settings();
  apply_options({{"gpu_memory", 40}}, s);  // no limit of the evaluator's own: any size
  CHECK(s.request.gpu_memory_gib == 40);
  CHECK(options_of(s) == nlohmann::json{{"gpu_memory", 40.0}});
  s = default_eval_settings();
  s.request.gpu_memory_gib = 22;  // kbench serve --gpu-memory 22
  apply_options({{"gpu_memory", 10}}, s);
  CHECK(s.request.gpu_memory_gib == 10);
  s.request.gpu_memory_gib = 22;
  CHECK_THROWS_WITH(apply_options({{"gpu_memory", 24}}, s), contains_text("option \"gpu_memory\" must be a number > 0 and at most 22"));
  CHECK_THROWS_WITH(apply_options({{"gpu_memory", 0}}, s), contains_text("option \"gpu_memory\" must be a number > 0"));
  CHECK(s.request.gpu_memory_gib == 22);
}

TEST_CASE("the timing mode is set by name, travels to the worker, and keeps baselines of one mode from another", "[serve]") {
  auto s = default_eval_settings();
  CHECK(s.request.timing.mode == kbench::timing::TimingMode::fixed);
  apply_options({{"timing", "both"}, {"timing_min_trials", 10}, {"timing_target", 0.005}}, s);
  CHECK(s.request.timing.mode == kbench::timing::TimingMode::both);
  CHECK(options_of(s) == nlohmann::json{{"timing", "both"}, {"timing_min_trials", 10}, {"timing_target", 0.005}});
  CHECK_THROWS_WITH(apply_options({{"timing", "quick"}}, s),
                    contains_text("option \"timing\" must be \"fixed\", \"adaptive\" or \"both\""));
  // The worker's request carries them.
  const auto req = EvalRequest::from_json(s.request.to_json());
  CHECK(req.timing.mode == kbench::timing::TimingMode::both);
  CHECK(req.timing.min_trials == 10);
  CHECK(req.timing.target == 0.005);
  // An adaptive figure is not a fixed one, nor one of another target.
  auto fixed = req.timing, other_target = req.timing;
  fixed.mode = kbench::timing::TimingMode::fixed;
  other_target.target = 0.01;
  CHECK(baseline_key("1/19", fixed) != baseline_key("1/19", req.timing));
  CHECK(baseline_key("1/19", other_target) != baseline_key("1/19", req.timing));
}
