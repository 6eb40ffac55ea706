#include "sandbox/ncu_pass.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "compile/child_process.h"
#include "profile/ncu.h"

namespace kbench::sandbox {
namespace {

std::string tail(const std::string& text, size_t chars = 1500) {
  return text.size() > chars ? text.substr(text.size() - chars) : text;
}

nlohmann::json run_under_ncu(const EvalRequest& request, const Budgets& budgets, const std::string& worker_exe,
                             const std::string& ncu, const std::vector<std::string>& kernels) {
  static std::atomic<int> runs{0};
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kbench-ncu-" + std::to_string(::getpid()) + "-" + std::to_string(runs++));
  std::filesystem::create_directories(dir);
  const auto report = (dir / "candidate.ncu-rep").string();
  nlohmann::json out;
  try {
    Worker worker(worker_exe == kForkWithoutExec ? compile::this_executable() : worker_exe,
                  profile::ncu_command(ncu, report, kernels, kNcuLaunchCount));
    auto target = request;
    target.ncu_target = true;
    target.profile = target.ncu = target.time = false;
    const auto result = worker.evaluate(target, budgets);
    const bool exited = worker.finish(60);
    if (result.contains("error"))
      throw std::runtime_error("the worker under ncu failed: " + result["error"].get<std::string>());
    if (!result.value("ncu_target", nlohmann::json::object()).value("ran", false))
      throw std::runtime_error("the worker under ncu did not run the forward: " + result.value("verdict", "?") + ": " +
                               result.value("message", "") + "\n" + tail(result.value("worker_output", "")));
    if (!std::filesystem::exists(report))
      throw std::runtime_error(std::string("ncu wrote no report") + (exited ? "" : " (it did not exit within 60 s)") +
                               "; its output:\n" + tail(worker.output()));
    out["kernels"] = profile::read_ncu_report(ncu, report)["kernels"];
  } catch (const std::exception& e) {
    out["error"] = e.what();
  }
  // Not std::filesystem::remove_all: see tests/fixtures.h (libtorch 2.11 binds a broken copy of it).
  std::remove(report.c_str());
  std::remove(dir.c_str());
  return out;
}

}  // namespace

void add_ncu_figures(nlohmann::json& record, const EvalRequest& request, const Budgets& budgets,
                     const std::string& worker_exe) {
  if (!request.ncu) return;
  if (!record.contains("profile") || !record["profile"].contains("candidate") ||
      !record["profile"]["candidate"].contains("kernels")) {
    record["profile"]["ncu"] = {{"skipped", "the candidate was not profiled (only a candidate that was timed is)"}};
    return;
  }
  auto& profile = record["profile"];
  const auto where = profile::find_ncu();
  if (where.path.empty()) {
    profile["ncu"] = {{"unavailable", where.why_absent}};
    return;
  }
  std::vector<std::string> kernels;
  for (const auto& k : profile["candidate"]["kernels"]) kernels.push_back(k.value("kernel", ""));
  const auto t0 = std::chrono::steady_clock::now();
  auto ncu = run_under_ncu(request, budgets, worker_exe, where.path, kernels);
  ncu["ncu"] = where.path;
  ncu["wall_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (ncu.contains("kernels")) profile::merge_ncu(profile["candidate"], ncu["kernels"]);
  profile["ncu"] = ncu;
}

}  // namespace kbench::sandbox
