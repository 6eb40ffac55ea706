#include "sandbox/baseline_timing.h"

#include "problems/catalog.h"

#ifdef KBENCH_WITH_CUDA
#include "check/correctness.h"
#include "launch/cuda_driver.h"
#include "problems/reference.h"
#include "report/baselines.h"
#include "timing/compiled_reference.h"
#endif

namespace kbench::sandbox {

void take_known_baselines(const EvalRequest& req, const problems::Problem& problem, BaselineTimings& baselines) {
  for (auto [kind, figures] : {std::pair{"eager", &baselines.eager}, std::pair{"compiled", &baselines.compiled}}) {
    const auto it = req.known_baselines.find(kind);
    if (it == req.known_baselines.end()) continue;
    auto entry = *it;
    entry["from_earlier_worker"] = true;
    figures->emplace(baseline_key(problem.key(), req.timing), entry);
  }
}

#ifdef KBENCH_WITH_CUDA
namespace {

// The compiled figure recorded in baselines/<gpu>/compiled.json, as a timing entry whose "source"
// says where it came from; without "mean_ms" where there is none (and why).
nlohmann::json recorded_compiled_figure(const std::string& gpu_name, const problems::Problem& problem) {
  const auto file = "baselines/" + report::gpu_slug(gpu_name) + "/compiled.json";
  const auto recorded = report::recorded_baseline(gpu_name, "compiled", problem.level, problem.name);
  if (!recorded) return {{"source", "none: no package and no entry in " + file}};
  return report::compiled_timing_entry(*recorded, "recorded in " + file);
}

// The robustness distributions the reference runs on (an index drawn from its inputs may fail on
// some): the eager baseline is timed on each, once per problem, for every later candidate's audit.
std::vector<std::string> reference_distributions(problems::Reference& reference, uint64_t seed) {
  std::vector<std::string> runs_on;
  for (const auto& d : problems::kRobustnessDistributions) {
    try {
      check::run_reference(reference, reference.make_inputs(seed, d), seed);
      runs_on.push_back(d);
    } catch (const std::exception&) {
      // not timed on this distribution; the audit compares the others
    }
  }
  return runs_on;
}

// Where a baseline timed in this worker comes from. A figure is `clean` when no submission's Python
// or native code had been loaded into the process (kbench-format submissions bring neither: their
// host programs are TorchScript, their kernels device code, and the process state is checked after
// each of their calls); only clean figures are handed to other workers (sandbox/gpu_runner.cpp).
void mark_provenance(const BaselineSite& site, nlohmann::json& entry) {
  const bool clean = !site.context.submission_code_loaded;
  entry["clean"] = clean;
  entry["measured"] = clean ? "in this worker, before any submission's Python or native code was loaded in it"
                            : "in this worker, after the submission's code was loaded: used for this record only";
}

}  // namespace

const nlohmann::json& eager_baseline(const BaselineSite& site, const check::TimedCallOptions& calls) {
  auto& figures = site.context.baselines.eager;
  const auto key = baseline_key(site.problem.key(), site.req.timing);
  if (const auto it = figures.find(key); it != figures.end()) return it->second;
  auto& reference = *site.context.reference;
  auto options = calls;
  options.seed = 0;  // a run of its own
  options.distributions = reference_distributions(reference, check::draw_robust_seed());
  const auto timed = check::time_calls(
      reference, [&](const std::vector<c10::IValue>& inputs, uint64_t seed) { reference.forward(inputs, seed); }, options);
  auto entry = check::to_json(timed);
  mark_provenance(site, entry);
  return figures.emplace(key, entry).first->second;
}

const nlohmann::json& compiled_baseline(const BaselineSite& site, const check::TimedCallOptions& calls) {
  auto& figures = site.context.baselines.compiled;
  const auto key = baseline_key(site.problem.key(), site.req.timing);
  // Off, or the parent's figure: this request's own (a later request of the same worker may ask otherwise).
  if (site.req.compiled == "off" || !site.req.compiled_figure.is_null()) {
    auto& own = figures[key + " --compiled " + site.req.compiled];
    own = site.req.compiled == "off" ? nlohmann::json{{"source", "none: --compiled off"}} : site.req.compiled_figure;
    return own;
  }
  if (const auto it = figures.find(key); it != figures.end()) return it->second;
  nlohmann::json entry;
  try {
    timing::CompiledReference package(site.problem, report::gpu_slug(site.gpu.name));
    auto options = calls;
    options.seed = 0;
    options.distributions.clear();
    const auto timed = check::time_calls(
        *site.context.reference, [&](const std::vector<c10::IValue>& inputs, uint64_t) { package.run(inputs); }, options);
    entry = check::to_json(timed);
    entry["source"] = "AOTInductor package, timed here: " + package.path().string();
    mark_provenance(site, entry);
  } catch (const std::exception& e) {
    const std::string why = e.what();
    entry = recorded_compiled_figure(site.gpu.name, site.problem);
    entry["package"] = why.substr(0, why.find('\n'));
  }
  return figures.emplace(key, entry).first->second;
}

#endif

}  // namespace kbench::sandbox
