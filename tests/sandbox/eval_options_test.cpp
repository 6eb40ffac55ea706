// The options table behind serve's requests and `kbench eval --server`: names to fields and back.
#include "sandbox/eval_options.h"

#include <algorithm>

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
  CHECK_THROWS_WITH(apply_options({{"ncu", true}}, s), contains_text("unknown option \"ncu\""));  // the command line's only
}

TEST_CASE("the table gives each option its flag, its default as help shows it, and sets it from the command line", "[serve]") {
  const auto& specs = option_specs();
  const auto spec = [&](const std::string& name) {
    const auto it = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& o) { return o.name == name; });
    REQUIRE(it != specs.end());
    return *it;
  };
  CHECK(spec("timing_min_trials").flag() == "--timing-min-trials");
  CHECK(spec("no_flush").type == "boolean");
  auto s = default_eval_settings();
  CHECK(spec("trials").value_text(s) == "5");
  CHECK(spec("atol").value_text(s) == "the problem's (1e-2 unless its manifest entry says otherwise)");
  CHECK(spec("no_flush").value_text(s) == "off");
  CHECK(spec("compile_budget").value_text(s) == "60");
  CHECK(spec("gpu_memory").value_text(s) == "all of it");
  spec("trials").set_from_text("7", s);
  spec("timing_target").set_from_text("0.005", s);
  spec("no_flush").set_from_text("true", s);
  spec("compat").set_from_text("kernelbench-v0.1", s);
  spec("check_budget").set_from_text("900", s);  // the command line sets a budget's ceiling: any size
  CHECK(s.request.check.trials == 7);
  CHECK(s.request.timing.target == 0.005);
  CHECK_FALSE(s.request.timing.flush_l2);
  CHECK(s.request.check.tolerance.kernelbench == kbench::check::KernelBenchRule::v0_1);
  CHECK(s.budgets.correctness_s == 900);
  CHECK_THROWS_WITH(spec("trials").set_from_text("7x", s), contains_text("an integer from 1 to 1000"));
  CHECK_THROWS_WITH(spec("trials").set_from_text("0", s), contains_text("an integer from 1 to 1000"));
  CHECK_THROWS_WITH(spec("timing").set_from_text("quick", s), contains_text("\"fixed\", \"adaptive\" or \"both\""));
  // Which commands take which: every request option is a default serve's command line can set (but
  // compile_only, a request's own choice), ci takes the timing and policy ones.
  for (const auto& o : specs) {
    if (o.taken_by(Command::request) && o.name != "compile_only") CHECK(o.taken_by(Command::serve));
    CHECK(o.taken_by(Command::eval));
  }
  CHECK(spec("torch_ops").taken_by(Command::ci));
  CHECK_FALSE(spec("seed").taken_by(Command::ci));
  CHECK_FALSE(spec("ncu").taken_by(Command::request));
}

TEST_CASE("the worker's request carries every request option and what only kbench sets", "[serve]") {
  auto s = default_eval_settings();
  apply_options({{"trials", 3}, {"seed", 7}, {"robust_trials", 1}, {"robust_seed", 9}, {"compat", "kernelbench-v0.1"},
                 {"torch_ops", "forbid"}, {"atol", 0.5}, {"rtol", 0.25}, {"timing_trials", 20}, {"timing", "adaptive"},
                 {"timing_min_trials", 4}, {"timing_target", 0.02}, {"warmup", 1}, {"no_flush", true}, {"profile", true},
                 {"arch", "sm_80"}, {"compile_only", true}, {"gpu_memory", 12}},
                s);
  s.request.submission = "x.cu", s.request.level = 2, s.request.problem = 12, s.request.device = 1, s.request.ncu = true;
  const auto back = EvalRequest::from_json(s.request.to_json());
  CHECK(options_of({back, s.budgets}) == options_of(s));
  CHECK(back.submission == "x.cu");
  CHECK(back.level == 2);
  CHECK(back.problem == 12);
  CHECK(back.device == 1);
  CHECK(back.ncu);
  CHECK(back.gpu_memory_gib == 12);
  CHECK(back.check.tolerance.kernelbench == kbench::check::KernelBenchRule::v0_1);
  CHECK(back.compat_kernelbench);
  // KernelBench's rule alone, without --compat (the adversarial table's v0.1 entries): it travels too.
  auto rule_only = s.request;
  rule_only.compat_kernelbench = false;
  rule_only.check.tolerance.kernelbench = kbench::check::KernelBenchRule::v0_1;
  const auto rule_back = EvalRequest::from_json(rule_only.to_json());
  CHECK_FALSE(rule_back.compat_kernelbench);
  CHECK(rule_back.check.tolerance.kernelbench == kbench::check::KernelBenchRule::v0_1);
  // Nothing given: the defaults, the problem's tolerance among them.
  const auto plain = EvalRequest::from_json({{"submission", "y.cu"}, {"level", 1}, {"problem", 19}});
  CHECK(options_of({plain, {}}).empty());
  CHECK(plain.check.tolerance.atol == -1);
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
