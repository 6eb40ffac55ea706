#include "check/timed_calls.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "check/correctness.h"
#include "check/exact_reference.h"
#include "check/process_state.h"
#include "check/reference_outputs.h"
#include "launch/launches.h"
#include "log/elapsed.h"
#include "timing/clocks.h"
#include "timing/stopping_rule.h"

#ifdef KBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace kbench::check {
namespace {



// So that a draw's time is the GPU's; an error surfacing here is reported by the timing loop's
// own synchronisation right after.
void wait_for_device() {
#ifdef KBENCH_WITH_CUDA
  cudaDeviceSynchronize();
#endif
}

// The SM clock at or above which the current GPU runs unthrottled; 0 where it is not known.
unsigned current_unthrottled_sm_mhz() {
#ifdef KBENCH_WITH_CUDA
  int device = 0;
  if (cudaGetDevice(&device) == cudaSuccess) return timing::unthrottled_sm_mhz(device);
#endif
  return 0;
}

// The times of the first `calls` calls that ran on the problem's own inputs.
std::vector<double> own_times(const CallPlan& plan, const std::vector<double>& trial_ms, int calls) {
  std::vector<double> own;
  for (int i = 0; i < calls; ++i)
    if (plan.timed[static_cast<size_t>(i)].distribution == problems::kOwnDistribution) own.push_back(trial_ms[static_cast<size_t>(i)]);
  return own;
}

std::string call_label(const CallPlan& plan, size_t index) {
  const auto& c = plan.timed[index];
  return "timed call " + std::to_string(index + 1) + " of " + std::to_string(plan.timed.size()) + " (" +
         (c.distribution == problems::kOwnDistribution ? "the problem's own" : c.distribution) + " inputs, seed " +
         std::to_string(c.seed) + ")";
}

// What the calls of a run measured: the figure of the problem's own inputs (up to where adaptive
// timing stopped), its precision and drift, and each robustness distribution's.
void summarize_calls(const timing::Measurement& all, const CallPlan& plan, const TimedCallOptions& options, TimedCalls& r) {
  r.calls_run = static_cast<int>(all.trial_ms.size());
  const auto own = [&](int i) { return plan.timed[static_cast<size_t>(i)].distribution == problems::kOwnDistribution; };
  r.own = timing::select_trials(all, [&](int i) { return i < r.timed_calls && own(i); }, options.timing);
  r.interval = timing::relative_half_width(r.own.trial_ms);
  r.drift = timing::relative_drift(r.own.trial_ms);
  if (r.timed_calls > 0) r.check_probability = plan.check_probability[static_cast<size_t>(r.timed_calls - 1)];
  if (options.timing.mode == timing::TimingMode::both) r.all_calls = timing::select_trials(all, own, options.timing);
  // Every distribution's calls come before the first stop: all of them ran.
  for (const auto& d : options.distributions) {
    std::vector<double> ms;
    for (size_t i = 0; i < all.trial_ms.size(); ++i)
      if (plan.timed[i].distribution == d) ms.push_back(all.trial_ms[i]);
    if (!ms.empty()) r.distributions[d] = timing::summarize(ms);
  }
}

// The calls of one run: inputs drawn before each (the last call's freed first, so that one input set
// lives at a time; a baseline's only when the distribution changes), `call` timed, and `check`
// handed the output of each checked call.
TimedCalls run_calls(problems::Reference& reference, const TimedCallOptions& options, Caller caller,
                     const std::function<c10::IValue(const std::vector<c10::IValue>&, uint64_t seed)>& call,
                     const std::function<void(size_t index, c10::IValue output, TimedCalls&)>& check,
                     CallPlan& plan) {
  TimedCalls r;
  r.seed = options.seed != 0 ? options.seed : draw_robust_seed();
  plan = plan_calls(options, r.seed, caller);
  r.fresh_inputs = caller == Caller::candidate;
  r.mode = options.timing.mode;
  if (r.mode != timing::TimingMode::fixed) r.target = options.timing.target, r.min_calls = options.timing.min_trials;
  r.max_calls = static_cast<int>(plan.timed.size());
  const int warmup = static_cast<int>(plan.warmup.size());
  const auto call_at = [&](int i) -> const CallPlan::Call& { return i < 0 ? plan.warmup[i + warmup] : plan.timed[i]; };

  std::vector<c10::IValue> inputs;
  std::string drawn;  // the distribution of the input set alive
  c10::IValue out;
  int current = 0;
  timing::CallHooks hooks;
  hooks.before = [&](int i) {
    out = c10::IValue();
    current = i;
    const auto& c = call_at(i);
    if (r.fresh_inputs || inputs.empty() || drawn != c.distribution) {
      const log::PhaseTimer timer(r.redraw_ms);
      inputs.clear();
      inputs = reference.make_inputs(c.seed, c.distribution);
      drawn = c.distribution;
      wait_for_device();
    }
    torch::manual_seed(c.seed);  // a stochastic forward draws what the check's reference draws
  };
  hooks.after = [&](int i) {
    // A check draws the inputs again from the seed: the candidate may have written into them.
    if (r.fresh_inputs) inputs.clear();
    // Outside the timed region: the settings after every call, the dispatcher before a reference runs.
    if (caller == Caller::candidate)
      verify_process_state(plan.timed[i].checked ? ProcessStateWatch::Depth::watched_ops : ProcessStateWatch::Depth::settings,
                           "after " + call_label(plan, static_cast<size_t>(i)));
    if (!plan.timed[i].checked) {
      out = c10::IValue();
      return;
    }
    const log::PhaseTimer timer(r.checks_ms);
    check(static_cast<size_t>(i), std::move(out), r);
    out = c10::IValue();
  };
  r.unthrottled_sm_mhz = current_unthrottled_sm_mhz();
  // `both` notes where adaptive timing would have ended and carries on to the last call.
  hooks.finished = [&](int, const timing::Measurement& so_far) {
    if (r.timed_calls == 0 &&
        ends_run(plan, so_far.trial_ms, so_far.trial_sm_mhz, options.timing.target, r.unthrottled_sm_mhz))
      r.timed_calls = static_cast<int>(so_far.trial_ms.size());
    return r.timed_calls != 0 && options.timing.mode != timing::TimingMode::both;
  };
  auto timing_options = options.timing;
  timing_options.warmup = warmup;
  timing_options.trials = r.max_calls;
  const auto all = timing::measure([&] { out = call(inputs, call_at(current).seed); }, timing_options, hooks);
  inputs.clear();
  out = c10::IValue();
  summarize_calls(all, plan, options, r);
  return r;
}

}  // namespace

CallPlan plan_calls(const TimedCallOptions& options, uint64_t seed, Caller caller) {
  std::mt19937_64 rng(seed);
  CallPlan plan;
  for (int i = 0; i < options.timing.warmup; ++i) plan.warmup.push_back({rng(), problems::kOwnDistribution, false});
  const int trials = std::max(0, options.timing.trials);
  const bool fixed = options.timing.mode == timing::TimingMode::fixed;
  const int step = std::max(1, options.timing.min_trials);
  const int first_own = fixed ? trials : std::min(trials, step);
  // The first stop's calls: its own ones, then every distribution's; the other own calls after.
  std::vector<std::string> order(static_cast<size_t>(first_own), problems::kOwnDistribution);
  for (const auto& d : options.distributions)
    order.insert(order.end(), static_cast<size_t>(std::max(0, options.calls_per_distribution)), d);
  const int first_stop = static_cast<int>(order.size());
  order.insert(order.end(), static_cast<size_t>(trials - first_own), problems::kOwnDistribution);
  const int total = static_cast<int>(order.size());
  for (int stop = first_stop; stop < total; stop += step) plan.stops.push_back(stop);
  plan.stops.push_back(total);
  if (caller == Caller::candidate) std::shuffle(order.begin(), order.begin() + first_stop, rng);
  size_t stop = 0;
  for (int i = 0; i < total; ++i) {
    if (plan.stops[stop] <= i) ++stop;
    const double p = caller == Caller::candidate ? check_probability(plan.stops[stop]) : 0.0;
    const uint64_t call_seed = rng();
    plan.timed.push_back({call_seed, std::move(order[static_cast<size_t>(i)]), std::bernoulli_distribution(p)(rng)});
    plan.check_probability.push_back(p);
  }
  return plan;
}

double check_probability(int timed_calls) {
  return timed_calls > 0 ? 1.0 - std::pow(2.0, -20.0 / timed_calls) : 0.0;
}

bool ends_run(const CallPlan& plan, const std::vector<double>& trial_ms, const std::vector<unsigned>& sm_mhz,
              double target, unsigned unthrottled_mhz) {
  const int n = static_cast<int>(trial_ms.size());
  if (std::find(plan.stops.begin(), plan.stops.end(), n) == plan.stops.end()) return false;
  if (n == plan.stops.back()) return true;
  const bool unthrottled =
      std::all_of(sm_mhz.begin(), sm_mhz.end(), [&](unsigned mhz) { return mhz >= unthrottled_mhz; });
  return unthrottled && timing::precise_enough(own_times(plan, trial_ms, n), target);
}

double miss_probability(double check_probability, int calls, double skipped) {
  return std::pow(1.0 - check_probability, skipped * calls);
}

TimedCalls time_calls(problems::Reference& reference,
                      const std::function<void(const std::vector<c10::IValue>&, uint64_t seed)>& call,
                      const TimedCallOptions& options) {
  const auto run = [&](const TimedCallOptions& pass) {
    CallPlan plan;
    return run_calls(
        reference, pass, Caller::baseline,
        [&](const std::vector<c10::IValue>& inputs, uint64_t seed) {
          call(inputs, seed);
          return c10::IValue();
        },
        [](size_t, c10::IValue, TimedCalls&) {}, plan);
  };
  const auto [own_pass, distribution_pass] = baseline_passes(options);
  auto r = run(own_pass);
  if (distribution_pass.distributions.empty()) return r;
  auto pass = distribution_pass;
  pass.seed = std::mt19937_64(r.seed)();  // the record's seed repeats both runs
  const auto d = run(pass);
  r.distributions = d.distributions;
  r.redraw_ms += d.redraw_ms;
  r.timed_calls += d.timed_calls;
  r.max_calls += d.max_calls;
  r.calls_run += d.calls_run;
  return r;
}

std::pair<TimedCallOptions, TimedCallOptions> baseline_passes(const TimedCallOptions& options) {
  auto own = options, distributions = options;
  own.distributions.clear();
  // A baseline's figure divides the time of every candidate of its problem, and is timed once per
  // problem and worker: it runs twice the calls before each stop, to half the target. On the H100,
  // eager baselines stopped at twenty calls were up to 2.3% from the figure of all their calls (L2#29
  // stepped from 2.71 to 2.79 ms at its 21st call). Replayed on the calls of five ci runs, this rule
  // took the worst gap of a speedup to the all-calls one from 2.27% to 1.04% (README, "How kbench
  // measures").
  own.timing.min_trials = 2 * options.timing.min_trials;
  own.timing.target = options.timing.target / 2;
  distributions.timing.mode = timing::TimingMode::fixed;
  distributions.timing.warmup = 0;  // the GPU is warm from the own calls just before
  distributions.timing.trials = 0;
  return {own, distributions};
}

TimedCalls time_candidate(problems::Reference& reference, const compile::HostProgram& host,
                          const c10::Dict<std::string, at::Tensor>& params, const TimedCallOptions& options,
                          const Tolerance& tolerance) {
  CallPlan plan;
  const auto check = [&](size_t index, c10::IValue output, TimedCalls& r) {
    if (r.verdict != Verdict::correct) return;  // nothing left to find
    const auto& c = plan.timed[index];
    const bool robustness = c.distribution != problems::kOwnDistribution;
    c10::IValue expected;
    with_output_in_host_memory(output, options.offload_candidate_output, [&] {
      auto inputs = log::timed(r.check_inputs_ms, [&] {
        auto drawn = reference.make_inputs(c.seed, c.distribution);
        wait_for_device();
        return drawn;
      });
      expected = log::timed(r.check_reference_ms, [&] { return run_reference(reference, inputs, c.seed); });
    });
    if (robustness && !all_finite(expected)) {
      ++r.checks_skipped;
      return;
    }
    ++r.checked;
    auto rule = tolerance;
    rule.robustness = robustness;
    const auto cmp = log::timed(r.check_compare_ms, [&] {
      const auto first = compare_outputs(expected, output, rule);
      expected = c10::IValue();  // room for the exact reference, where the retry needs one
      return with_exact_reference_retry(first, output, rule, reference, {c.seed, c.distribution},
                                        options.offload_candidate_output);
    });
    const std::string why = "correct when checked, but " + call_label(plan, index) + " gave a wrong output: ";
    if (cmp.verdict != Verdict::correct) r.verdict = Verdict::inconsistent, r.message = why + cmp.message;
  };
  const int64_t settled = options.settled_launches;
  const int64_t loads_before = launch::module_load_count();
  int64_t other_count = -1;
  // Launches are counted around a call only where the forward settled on a count (a Triton
  // candidate's): a .cu's timed region holds its forward and nothing more.
  std::function<c10::IValue(const std::vector<c10::IValue>&, uint64_t)> call =
      [&](const std::vector<c10::IValue>& inputs, uint64_t) { return host.forward(inputs, params); };
  if (settled >= 0)
    call = [&](const std::vector<c10::IValue>& inputs, uint64_t) {
      const int64_t before = launch::launch_count();
      auto out = host.forward(inputs, params);
      if (const int64_t launched = launch::launch_count() - before; launched != settled && other_count < 0)
        other_count = launched;
      return out;
    };
  auto r = run_calls(reference, options, Caller::candidate, call, check, plan);
  const int64_t loads = launch::module_load_count() - loads_before;
  if (r.verdict == Verdict::correct && settled >= 0 && (other_count >= 0 || loads > 0)) {
    r.verdict = Verdict::inconsistent;
    r.message = "a Triton kernel was compiled or autotuned inside the timed calls: " +
                (loads > 0 ? std::to_string(loads) + " kernel(s) loaded during them"
                           : "a timed call launched " + std::to_string(other_count) + " kernels where the settled forward launched " +
                                 std::to_string(settled));
  }
  return r;
}

nlohmann::json to_json(const TimedCalls& t) {
  auto j = timing::to_json(t.own);
  nlohmann::json distributions = nlohmann::json::object();
  for (const auto& [d, stats] : t.distributions) distributions[d] = timing::to_json(stats);
  j["distributions"] = distributions;
  j["protocol"] = {{"seed", t.seed}, {"fresh_inputs", t.fresh_inputs}, {"mode", timing::mode_name(t.mode)},
                   {"timed_calls", t.timed_calls}, {"max_calls", t.max_calls}, {"calls_run", t.calls_run},
                   {"target", t.target}, {"min_calls", t.min_calls}, {"interval", t.interval}, {"drift", t.drift},
                   {"unthrottled_sm_mhz", t.unthrottled_sm_mhz},
                   {"check_probability", t.check_probability}, {"checked", t.checked},
                   {"checks_skipped", t.checks_skipped}, {"redraw_ms", t.redraw_ms}, {"checks_ms", t.checks_ms},
                   {"checks_split", {{"inputs_ms", t.check_inputs_ms}, {"reference_ms", t.check_reference_ms},
                                     {"compare_ms", t.check_compare_ms}}}};
  if (t.all_calls) {  // --timing both: the own calls' times in order, to see where the two figures part
    j["all_calls"] = timing::to_json(*t.all_calls);
    j["all_calls"]["trial_ms"] = t.all_calls->trial_ms;
    j["all_calls"]["trial_sm_mhz"] = t.all_calls->trial_sm_mhz;
  }
  return j;
}

std::map<std::string, double> distribution_means(const nlohmann::json& timing_entry) {
  std::map<std::string, double> means;
  if (timing_entry.contains("mean_ms")) means[problems::kOwnDistribution] = timing_entry["mean_ms"].get<double>();
  if (const auto d = timing_entry.find("distributions"); d != timing_entry.end() && d->is_object())
    for (const auto& [name, stats] : d->items())
      if (stats.contains("mean_ms")) means[name] = stats["mean_ms"].get<double>();
  return means;
}

}  // namespace kbench::check
