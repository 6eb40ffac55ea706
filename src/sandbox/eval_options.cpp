#include "sandbox/eval_options.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <vector>

namespace kbench::sandbox {
namespace {

using S = EvalSettings;

struct Option {
  std::string name, type, meaning;
  std::function<void(const nlohmann::json&, S&)> set;  // throws std::invalid_argument: what was expected
  std::function<nlohmann::json(const S&)> get;
};

// The table's entry kinds. `field` selects the member an option sets (a function, so that nested
// members of EvalRequest and Budgets are one expression each).
template <class T>
Option integer(const char* name, T& (*field)(S&), T min, T max, const char* meaning) {
  return {name, "integer", meaning,
          [=](const nlohmann::json& v, S& s) {
            const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(max)
                                                     : v.is_number_integer() && v.get<int64_t>() >= 0;
            if (!v.is_number_integer() || !fits || v.get<T>() < min || v.get<T>() > max)
              throw std::invalid_argument("an integer from " + std::to_string(min) + " to " + std::to_string(max));
            field(s) = v.get<T>();
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s))); }};
}

Option number(const char* name, double& (*field)(S&), const char* meaning) {
  return {name, "number", meaning,
          [=](const nlohmann::json& v, S& s) {
            if (!v.is_number() || v.get<double>() < 0) throw std::invalid_argument("a number >= 0");
            field(s) = v.get<double>();
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s))); }};
}

// A budget may be lowered, never raised above what the caller set (the server's own limit; 0: none).
Option budget(const char* name, double& (*field)(S&), const char* meaning) {
  return {name, "number", meaning,
          [=](const nlohmann::json& v, S& s) {
            if (!v.is_number() || v.get<double>() <= 0) throw std::invalid_argument("a number > 0");
            std::ostringstream ceiling;
            ceiling << field(s);
            if (field(s) > 0 && v.get<double>() > field(s))
              throw std::invalid_argument("a number > 0 and at most " + ceiling.str() + " (this evaluator's limit)");
            field(s) = v.get<double>();
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s))); }};
}

// `inverted`: the option says "no_x" for a field that says "x".
Option flag(const char* name, bool& (*field)(S&), bool inverted, const char* meaning) {
  return {name, "boolean", meaning,
          [=](const nlohmann::json& v, S& s) {
            if (!v.is_boolean()) throw std::invalid_argument("true or false");
            field(s) = v.get<bool>() != inverted;
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s)) != inverted); }};
}

Option text(const char* name, std::string& (*field)(S&), const char* meaning) {
  return {name, "string", meaning,
          [=](const nlohmann::json& v, S& s) {
            if (!v.is_string()) throw std::invalid_argument("a string");
            field(s) = v.get<std::string>();
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s))); }};
}

// A two-valued choice kept as a bool: `on` sets it, `off` clears it.
Option choice(const char* name, bool& (*field)(S&), const char* on, const char* off, const char* meaning) {
  return {name, "string", meaning,
          [=](const nlohmann::json& v, S& s) {
            if (!v.is_string() || (v != on && v != off))
              throw std::invalid_argument(std::string("\"") + on + "\" or \"" + off + "\"");
            field(s) = v == on;
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s)) ? on : off); }};
}

Option timing_mode(const char* name, const char* meaning) {
  return {name, "string", meaning,
          [](const nlohmann::json& v, S& s) {
            if (!v.is_string() || !timing::parse_mode(v.get<std::string>(), s.request.timing.mode))
              throw std::invalid_argument("\"fixed\", \"adaptive\" or \"both\"");
          },
          [](const S& s) { return nlohmann::json(timing::mode_name(s.request.timing.mode)); }};
}

// --compat: which verdict is the record's, and the rule of KernelBench's (sandbox/evaluation.h).
Option compat() {
  return {"compat", "string",
          "kernelbench: the verdict is KernelBench's (its rule today); kernelbench-v0.1: under the paper's rule; "
          "none: kbench's (KernelBench's today's beside it)",
          [](const nlohmann::json& v, S& s) {
            if (!v.is_string() || !set_compat(s.request, v.get<std::string>())) throw std::invalid_argument(kCompatModes);
          },
          [](const S& s) { return nlohmann::json(compat_mode(s.request)); }};
}

constexpr uint64_t kAnySeed = std::numeric_limits<uint64_t>::max();

const std::vector<Option>& options() {
  static const std::vector<Option> table = {
      text("arch", [](S& s) -> std::string& { return s.request.arch; }, "NVRTC architecture, e.g. sm_80 (default: the GPU's)"),
      flag("compile_only", [](S& s) -> bool& { return s.request.compile_only; }, false,
           "split, NVRTC, signatures and host program only"),
      integer<int>("trials", [](S& s) -> int& { return s.request.check.trials; }, 1, 1000, "correctness trials"),
      integer<uint64_t>("seed", [](S& s) -> uint64_t& { return s.request.check.base_seed; }, 0, kAnySeed,
                        "seed of the first trial"),
      integer<int>("robust_trials", [](S& s) -> int& { return s.request.check.robust_trials; }, 0, 100,
                   "trials on inputs from other distributions (0: none)"),
      integer<uint64_t>("robust_seed", [](S& s) -> uint64_t& { return s.request.check.robust_seed; }, 0, kAnySeed,
                        "seed of the first robustness trial (0: drawn per evaluation)"),
      compat(),
      choice("torch_ops", [](S& s) -> bool& { return s.request.check.forbid_torch_ops; }, "forbid", "allow",
             "forbid: a PyTorch op that computes values in forward is no_custom_kernel"),
      number("atol", [](S& s) -> double& { return s.request.check.tolerance.atol; }, "absolute tolerance (default: the problem's)"),
      number("rtol", [](S& s) -> double& { return s.request.check.tolerance.rtol; }, "relative tolerance (default: the problem's)"),
      integer<int>("timing_trials", [](S& s) -> int& { return s.request.timing.trials; }, 1, 100000,
                   "timed trials (adaptive timing: the most)"),
      timing_mode("timing", "fixed: every timed trial; adaptive: until the mean is known within timing_target at the "
                            "GPU's unthrottled clock; "
                            "both: adaptive's figure and every trial's, on the same calls"),
      integer<int>("timing_min_trials", [](S& s) -> int& { return s.request.timing.min_trials; }, 2, 100000,
                   "adaptive timing: a candidate's trials before the first stop and between two stops (baselines "
                   "twice as many)"),
      number("timing_target", [](S& s) -> double& { return s.request.timing.target; },
             "adaptive timing: the 95% interval's half-width as a share of the mean (0.01: within 1%; baselines "
             "half of it)"),
      integer<int>("warmup", [](S& s) -> int& { return s.request.timing.warmup; }, 0, 10000, "warm-up runs before timing"),
      flag("no_flush", [](S& s) -> bool& { return s.request.timing.flush_l2; }, true,
           "do not flush the L2 before each timed trial"),
      flag("no_timing", [](S& s) -> bool& { return s.request.time; }, true, "check correctness only"),
      flag("profile", [](S& s) -> bool& { return s.request.profile; }, false,
           "add a profile of the candidate's kernels and the reference's operators (one more call of each)"),
      budget("compile_budget", [](S& s) -> double& { return s.budgets.compile_s; }, "seconds allowed for compiling"),
      budget("check_budget", [](S& s) -> double& { return s.budgets.correctness_s; },
             "seconds allowed for the correctness trials"),
      budget("timing_budget", [](S& s) -> double& { return s.budgets.timing_s; }, "seconds allowed for timing"),
      budget("host_memory_budget", [](S& s) -> double& { return s.budgets.host_memory_gib; },
             "GiB of host memory the worker may hold"),
      budget("gpu_memory", [](S& s) -> double& { return s.request.gpu_memory_gib; },
             "GiB of GPU memory the evaluation may use, as on a GPU that small (default: all of it)"),
  };
  return table;
}

}  // namespace

EvalSettings default_eval_settings() {
  EvalSettings s;
  s.request.check.tolerance = {-1, -1};  // the problem's own (manifest) unless given
  return s;
}

void apply_options(const nlohmann::json& given, EvalSettings& settings) {
  if (!given.is_object()) throw OptionsError("\"options\" must be an object, e.g. {\"trials\": 3}");
  std::vector<std::string> problems;
  for (const auto& [name, value] : given.items()) {
    const auto& table = options();
    const auto it = std::find_if(table.begin(), table.end(), [&](const Option& o) { return o.name == name; });
    if (it == table.end()) {
      std::string known;
      for (const auto& o : table) known += (known.empty() ? "" : ", ") + o.name;
      problems.push_back("unknown option \"" + name + "\" (options: " + known + ")");
      continue;
    }
    try {
      it->set(value, settings);
    } catch (const std::invalid_argument& e) {
      problems.push_back("option \"" + name + "\" must be " + e.what() + ", not " + value.dump());
    }
  }
  if (problems.empty()) return;
  std::string message;
  for (const auto& p : problems) message += (message.empty() ? "" : "; ") + p;
  throw OptionsError(message);
}

nlohmann::json options_of(const EvalSettings& settings, const EvalSettings& defaults) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& o : options())
    if (o.get(settings) != o.get(defaults)) out[o.name] = o.get(settings);
  return out;
}

nlohmann::json option_list() {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& o : options()) out.push_back({{"name", o.name}, {"type", o.type}, {"meaning", o.meaning}});
  return out;
}

}  // namespace kbench::sandbox
