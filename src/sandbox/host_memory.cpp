#include "sandbox/host_memory.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "problems/catalog.h"

namespace kbench::sandbox {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The catalog of a project root, read once: the parent asks for every request.
std::shared_ptr<const problems::Catalog> catalog_of(const std::string& root) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const problems::Catalog>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = loaded[root];
  if (!slot) slot = std::make_shared<const problems::Catalog>(problems::Catalog::load(problems::project_root(root)));
  return slot;
}

}  // namespace

HostMemoryBudget host_memory_budget(const EvalRequest& request, const Budgets& budgets, double start_gib) {
  HostMemoryBudget b;
  b.start_gib = start_gib;
  b.budget_gib = budgets.host_memory_gib;
  if (start_gib <= 0 || request.ncu_target) return b;
  std::shared_ptr<const problems::Catalog> catalog;
  try {
    catalog = catalog_of(request.root);
  } catch (const std::exception&) {
    return b;  // the worker reports the unreadable catalog as the request's error
  }
  const auto* problem = catalog->find(request.level, request.problem);
  if (!problem) return b;
  double bytes = 2.0 * static_cast<double>(problem->weight_bytes);
  if (const auto* next = catalog->find(request.next_level, request.next_problem)) bytes += 2.0 * static_cast<double>(next->weight_bytes);
  // Its output set aside in host memory: at most the evaluation's measured GPU peak.
  if (request.gpu_memory_gib > 0) bytes += static_cast<double>(std::max(problem->footprint.bytes, problem->footprint_offloaded.bytes));
  b.allowance_gib = budgets.host_memory_headroom_gib + bytes / kGiB;
  b.budget_gib = std::min(budgets.host_memory_gib, start_gib + b.allowance_gib);
  return b;
}

nlohmann::json to_json(const HostMemoryBudget& budget, double peak_gib) {
  return {{"start_gib", budget.start_gib}, {"peak_gib", peak_gib}, {"allowance_gib", budget.allowance_gib},
          {"budget_gib", budget.budget_gib}};
}

}  // namespace kbench::sandbox
