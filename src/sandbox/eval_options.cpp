#include "sandbox/eval_options.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>

namespace kbench::sandbox {
namespace {

using S = EvalSettings;

struct Option {
  OptionSpec spec;
  // Throws std::invalid_argument saying what was expected. `lower_only`: a budget may not be raised.
  std::function<void(const nlohmann::json&, S&, bool lower_only)> set;
  std::function<nlohmann::json(const S&)> get;
  // Where a value means "decided later" (-1: the problem's tolerance), what help says instead.
  std::function<std::string(const nlohmann::json&)> shown;
  bool in_budgets = false;  // a field of Budgets, which the worker's request does not carry
};

constexpr unsigned bit(Command c) { return static_cast<unsigned>(c); }
// Most options: eval and batch take them, serve takes them as every request's default, a request sets them.
constexpr unsigned kEvaluation = bit(Command::eval) | bit(Command::batch) | bit(Command::serve) | bit(Command::request);
constexpr unsigned kWithCi = kEvaluation | bit(Command::ci);

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The table's entry kinds. `field` selects the member an option sets (a function, so that nested
// members of EvalRequest and Budgets are one expression each).
template <class T>
Option integer(const char* name, unsigned commands, T& (*field)(S&), T min, T max, const char* meaning) {
  return {{name, "integer", "N", meaning, commands},
          [=](const nlohmann::json& v, S& s, bool) {
            const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= static_cast<uint64_t>(max)
                                                     : v.is_number_integer() && v.get<int64_t>() >= 0;
            if (!v.is_number_integer() || !fits || v.get<T>() < min || v.get<T>() > max)
              throw std::invalid_argument("an integer from " + std::to_string(min) + " to " + std::to_string(max));
            field(s) = v.get<T>();
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s))); }, nullptr};
}

Option number(const char* name, unsigned commands, double& (*field)(S&), const char* meaning) {
  return {{name, "number", "X", meaning, commands},
          [=](const nlohmann::json& v, S& s, bool) {
            if (!v.is_number() || v.get<double>() < 0) throw std::invalid_argument("a number >= 0");
            field(s) = v.get<double>();
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s))); }, nullptr};
}

// A tolerance of kbench's: -1 leaves it to the problem (its manifest entry).
Option tolerance(const char* name, double& (*field)(S&), const char* meaning) {
  auto o = number(name, kEvaluation, field, meaning);
  o.set = [=](const nlohmann::json& v, S& s, bool) {
    if (!v.is_number() || (v.get<double>() < 0 && v.get<double>() != -1))
      throw std::invalid_argument("a number >= 0, or -1 for the problem's");
    field(s) = v.get<double>();
  };
  return o;
}

// A limit: a request may lower it, never raise it above what the caller set (the server's own limit; 0: none).
Option budget(const char* name, const char* unit, unsigned commands, double& (*field)(S&), const char* meaning) {
  return {{name, "number", unit, meaning, commands},
          [=](const nlohmann::json& v, S& s, bool lower_only) {
            if (!v.is_number() || v.get<double>() <= 0) throw std::invalid_argument("a number > 0");
            if (lower_only && field(s) > 0 && v.get<double>() > field(s))
              throw std::invalid_argument("a number > 0 and at most " + number_text(field(s)) + " (this evaluator's limit)");
            field(s) = v.get<double>();
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s))); }, nullptr};
}

Option worker_budget(const char* name, const char* unit, double& (*field)(S&), const char* meaning) {
  Option o = budget(name, unit, kEvaluation, field, meaning);
  o.in_budgets = true;
  return o;
}

// `inverted`: the option says "no_x" for a field that says "x".
Option flag(const char* name, unsigned commands, bool& (*field)(S&), bool inverted, const char* meaning) {
  return {{name, "boolean", "", meaning, commands},
          [=](const nlohmann::json& v, S& s, bool) {
            if (!v.is_boolean()) throw std::invalid_argument("true or false");
            field(s) = v.get<bool>() != inverted;
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s)) != inverted); }, nullptr};
}

Option text(const char* name, const char* value_name, unsigned commands, std::string& (*field)(S&), const char* meaning) {
  return {{name, "string", value_name, meaning, commands},
          [=](const nlohmann::json& v, S& s, bool) {
            if (!v.is_string()) throw std::invalid_argument("a string");
            field(s) = v.get<std::string>();
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s))); }, nullptr};
}

// A two-valued choice kept as a bool: `on` sets it, `off` clears it.
Option choice(const char* name, const char* value_name, unsigned commands, bool& (*field)(S&), const char* on,
              const char* off, const char* meaning) {
  return {{name, "string", value_name, meaning, commands},
          [=](const nlohmann::json& v, S& s, bool) {
            if (!v.is_string() || (v != on && v != off))
              throw std::invalid_argument(std::string("\"") + on + "\" or \"" + off + "\"");
            field(s) = v == on;
          },
          [=](const S& s) { return nlohmann::json(field(const_cast<S&>(s)) ? on : off); }, nullptr};
}

Option timing_mode() {
  return {{"timing", "string", "MODE",
           "fixed: every timed trial (KernelBench's count); adaptive: until the mean is known within --timing-target "
           "at the GPU's unthrottled clock; both: adaptive's figure and every trial's, on the same calls",
           kWithCi},
          [](const nlohmann::json& v, S& s, bool) {
            if (!v.is_string() || !timing::parse_mode(v.get<std::string>(), s.request.timing.mode))
              throw std::invalid_argument("\"fixed\", \"adaptive\" or \"both\"");
          },
          [](const S& s) { return nlohmann::json(timing::mode_name(s.request.timing.mode)); }, nullptr};
}

// --compat: which verdict is the record's, and the rule of KernelBench's (sandbox/evaluation.h).
Option compat() {
  return {{"compat", "string", "MODE",
           "kernelbench: the verdict is KernelBench's under its rule today (the problem's own inputs, atol = rtol = "
           "1e-4); kernelbench-v0.1: under the paper's rule (1e-2); none: kbench's. The other is kept beside it",
           kEvaluation},
          [](const nlohmann::json& v, S& s, bool) {
            if (!v.is_string() || !set_compat(s.request, v.get<std::string>())) throw std::invalid_argument(kCompatModes);
          },
          [](const S& s) { return nlohmann::json(compat_mode(s.request)); }, nullptr};
}

// --compiled: where the compiled baseline comes from (sandbox/compiled_on_demand.h).
Option compiled_source() {
  return {{"compiled", "string", "SOURCE",
           "the torch.compile baseline: off (none); recorded (baselines/<gpu>/compiled.json, or an AOTInductor "
           "package); on-demand (recorded, else made once per machine and problem by torch.compile in a process of "
           "its own, and kept in the cache)",
           kEvaluation},
          [](const nlohmann::json& v, S& s, bool) {
            if (!v.is_string() || (v != "off" && v != "recorded" && v != "on-demand"))
              throw std::invalid_argument("\"off\", \"recorded\" or \"on-demand\"");
            s.request.compiled = v.get<std::string>();
          },
          [](const S& s) { return nlohmann::json(s.request.compiled); }, nullptr};
}

// An option whose value `special` means something decided later: help shows `instead`.
template <class V>
Option shown_as(Option o, V special, const char* instead) {
  o.shown = [special, instead = std::string(instead)](const nlohmann::json& v) -> std::string {
    return v == nlohmann::json(special) ? instead : "";
  };
  return o;
}

constexpr uint64_t kAnySeed = std::numeric_limits<uint64_t>::max();
constexpr unsigned kEvalBatch = bit(Command::eval) | bit(Command::batch);

// The table itself: one entry per option, however many there are.
const std::vector<Option>& options() {
  static const std::vector<Option> table = {
      shown_as(text("arch", "SM", kEvaluation, [](S& s) -> std::string& { return s.request.arch; },
                    "the architecture NVRTC and the extension builds compile for, e.g. sm_80"),
               "", "the GPU's (batch: the first GPU's); sm_90a without a GPU"),
      flag("compile_only", bit(Command::eval) | bit(Command::ci) | bit(Command::request),
           [](S& s) -> bool& { return s.request.compile_only; }, false,
           "compile and check signatures and host program only, even where there is a GPU"),
      integer<int>("trials", kEvaluation, [](S& s) -> int& { return s.request.check.trials; }, 1, 1000, "correctness trials"),
      integer<uint64_t>("seed", kEvaluation, [](S& s) -> uint64_t& { return s.request.check.base_seed; }, 0, kAnySeed,
                        "seed of the first trial (trial i uses seed + i)"),
      integer<int>("robust_trials", kEvaluation, [](S& s) -> int& { return s.request.check.robust_trials; }, 0, 100,
                   "trials on inputs from other distributions after the problem's own (0: none)"),
      shown_as(integer<uint64_t>("robust_seed", kEvaluation, [](S& s) -> uint64_t& { return s.request.check.robust_seed; },
                                 0, kAnySeed, "seed of the first robustness trial"),
               0, "drawn per evaluation (a batch draws one for all its samples)"),
      compat(),
      choice("torch_ops", "POLICY", kWithCi, [](S& s) -> bool& { return s.request.check.forbid_torch_ops; }, "forbid",
             "allow",
             "allow: forward may call PyTorch ops that compute values (recorded); forbid: any such op is "
             "no_custom_kernel (ci: such kernels are listed as refused)"),
      shown_as(tolerance("atol", [](S& s) -> double& { return s.request.check.tolerance.atol; },
                         "kbench's absolute tolerance (never KernelBench's)"),
               -1.0, "the problem's (1e-2 unless its manifest entry says otherwise)"),
      shown_as(tolerance("rtol", [](S& s) -> double& { return s.request.check.tolerance.rtol; },
                         "kbench's relative tolerance (never KernelBench's)"),
               -1.0, "the problem's (1e-2 unless its manifest entry says otherwise)"),
      integer<int>("timing_trials", kWithCi, [](S& s) -> int& { return s.request.timing.trials; }, 1, 100000,
                   "timed trials (adaptive timing: the most)"),
      timing_mode(),
      integer<int>("timing_min_trials", kWithCi, [](S& s) -> int& { return s.request.timing.min_trials; }, 2, 100000,
                   "adaptive timing: a candidate's trials before the first stop and between two stops (baselines "
                   "twice as many)"),
      number("timing_target", kWithCi, [](S& s) -> double& { return s.request.timing.target; },
             "adaptive timing: the 95% interval's half-width as a share of the mean (baselines half of it)"),
      integer<int>("warmup", kEvaluation, [](S& s) -> int& { return s.request.timing.warmup; }, 0, 10000,
                   "warm-up runs before timing"),
      flag("no_flush", kEvaluation, [](S& s) -> bool& { return s.request.timing.flush_l2; }, true,
           "do not flush the L2 before each timed trial"),
      compiled_source(),
      flag("no_timing", kEvaluation, [](S& s) -> bool& { return s.request.time; }, true, "check correctness only"),
      flag("profile", kEvaluation, [](S& s) -> bool& { return s.request.profile; }, false,
           "after timing, take one more call apart: the candidate's kernels and PyTorch ops with their GPU times, the "
           "reference's operators and kernels, bandwidth and FLOP/s against the GPU's peaks"),
      flag("ncu", kEvalBatch, [](S& s) -> bool& { return s.request.ncu; }, false,
           "also run the candidate's kernels under Nsight Compute (in a worker of their own): SM and DRAM throughput, "
           "achieved occupancy, L2 hit rate, top stall reason; implies --profile"),
      worker_budget("compile_budget", "S", [](S& s) -> double& { return s.budgets.compile_s; },
             "seconds allowed for compiling; past it the worker is killed (serve: the most a request may ask for, as "
             "for every budget)"),
      worker_budget("build_budget", "S", [](S& s) -> double& { return s.budgets.build_s; },
             "seconds allowed for building each extension of a ModelNew"),
      worker_budget("check_budget", "S", [](S& s) -> double& { return s.budgets.correctness_s; },
             "seconds allowed for the correctness trials"),
      worker_budget("timing_budget", "S", [](S& s) -> double& { return s.budgets.timing_s; },
             "seconds allowed for timing"),
      worker_budget("host_memory_budget", "GiB", [](S& s) -> double& { return s.budgets.host_memory_gib; },
             "GiB of host memory a worker may hold"),
      worker_budget("host_memory_headroom", "GiB",
                    [](S& s) -> double& { return s.budgets.host_memory_headroom_gib; },
             "GiB of host memory a request may add to what its worker held, beyond its problem's weights"),
      shown_as(budget("gpu_memory", "GiB", kWithCi, [](S& s) -> double& { return s.request.gpu_memory_gib; },
                      "GiB of GPU memory an evaluation may use, as on a GPU that small, e.g. 22 for a 24 GB card; a "
                      "problem measured (problems/footprint.json) to need more is not run"),
               0.0, "all of it"),
  };
  return table;
}

const Option* find(const std::string& name) {
  const auto& table = options();
  const auto it = std::find_if(table.begin(), table.end(), [&](const Option& o) { return o.spec.name == name; });
  return it == table.end() ? nullptr : &*it;
}

// The text of a command line as the JSON value an option takes.
nlohmann::json parse_text(const std::string& text, const std::string& type) {
  if (type == "string") return text;
  if (type == "boolean") return text != "false";
  size_t used = 0;
  nlohmann::json value;
  try {
    if (type == "integer")
      value = text.find('-') == std::string::npos ? nlohmann::json(std::stoull(text, &used)) : nlohmann::json(std::stoll(text, &used));
    else
      value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) return text;  // refused by the option's own check, with its expectation
  return value;
}

}  // namespace

std::string OptionSpec::flag() const {
  std::string f = "--" + name;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

bool OptionSpec::taken_by(Command command) const { return commands & bit(command); }

std::string OptionSpec::value_text(const EvalSettings& settings) const {
  const Option& o = *find(name);
  const auto v = o.get(settings);
  if (o.shown) {
    const auto instead = o.shown(v);
    if (!instead.empty()) return instead;
  }
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return number_text(v.get<double>());
  return v.dump();
}

void OptionSpec::set_from_text(const std::string& text, EvalSettings& settings) const {
  find(name)->set(parse_text(text, type), settings, false);
}

const std::vector<OptionSpec>& option_specs() {
  static const std::vector<OptionSpec> specs = [] {
    std::vector<OptionSpec> out;
    for (const auto& o : options()) out.push_back(o.spec);
    return out;
  }();
  return specs;
}

EvalSettings default_eval_settings() {
  EvalSettings s;
  s.request.check.tolerance = {-1, -1};  // the problem's own (manifest) unless given
  return s;
}

void apply_options(const nlohmann::json& given, EvalSettings& settings) {
  if (!given.is_object()) throw OptionsError("\"options\" must be an object, e.g. {\"trials\": 3}");
  std::vector<std::string> problems;
  for (const auto& [name, value] : given.items()) {
    const Option* o = find(name);
    if (!o || !o->spec.taken_by(Command::request)) {
      std::string known;
      for (const auto& each : options())
        if (each.spec.taken_by(Command::request)) known += (known.empty() ? "" : ", ") + each.spec.name;
      problems.push_back("unknown option \"" + name + "\" (options: " + known + ")");
      continue;
    }
    try {
      o->set(value, settings, true);
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
    if (o.spec.taken_by(Command::request) && o.get(settings) != o.get(defaults)) out[o.spec.name] = o.get(settings);
  return out;
}

nlohmann::json request_options(const EvalRequest& request) {
  const EvalSettings settings{request, {}};
  nlohmann::json out = nlohmann::json::object();
  for (const auto& o : options())
    if (o.spec.taken_by(Command::request) && !o.in_budgets) out[o.spec.name] = o.get(settings);
  return out;
}

void set_request_options(const nlohmann::json& given, EvalRequest& request) {
  EvalSettings settings{request, {}};
  const auto defaults = default_eval_settings();
  for (const auto& o : options()) {
    if (!o.spec.taken_by(Command::request) || o.in_budgets || !given.contains(o.spec.name)) continue;
    // A default may be a value no one may ask for (gpu_memory 0: the whole GPU): it stays as it is.
    if (given.at(o.spec.name) != o.get(defaults)) o.set(given.at(o.spec.name), settings, false);
  }
  request = settings.request;
}

}  // namespace kbench::sandbox
