#include "report/baselines.h"

#include <fstream>
#include <functional>

#include "compile/file_lock.h"
#include "compile/submission.h"
#include "problems/catalog.h"

namespace kbench::report {
namespace {

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

}  // namespace

std::string gpu_slug(const std::string& gpu_name) {
  std::string s = gpu_name;
  if (s.rfind("NVIDIA ", 0) == 0) s = s.substr(7);
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s.empty() ? "unknown_gpu" : s;
}

std::filesystem::path baseline_file(const std::string& gpu_name, const std::string& kind) {
  return problems::project_root() / "baselines" / gpu_slug(gpu_name) / (kind + ".json");
}

nlohmann::json read_baseline_file(const std::filesystem::path& file) { return read_json(file); }

std::optional<nlohmann::json> baseline_entry(const nlohmann::json& doc, int level, const std::string& problem_name) {
  if (!doc.is_object()) return std::nullopt;
  const auto level_key = "level" + std::to_string(level);
  const auto file_key = problem_name + ".py";
  if (!doc.contains(level_key) || !doc[level_key].contains(file_key)) return std::nullopt;
  return doc[level_key][file_key];
}

std::optional<nlohmann::json> baseline_entry_in(const std::filesystem::path& file, int level, const std::string& problem_name) {
  return baseline_entry(read_json(file), level, problem_name);
}

std::optional<nlohmann::json> recorded_baseline(const std::string& gpu_name, const std::string& kind, int level,
                                                const std::string& problem_name) {
  return baseline_entry_in(baseline_file(gpu_name, kind), level, problem_name);
}

nlohmann::json compiled_timing_entry(const nlohmann::json& recorded, const std::string& where) {
  if (!recorded.contains("mean")) return {{"source", "none: " + recorded.value("reason", "no figure") + " (" + where + ")"}};
  nlohmann::json entry = {{"mean_ms", recorded["mean"]},
                          {"source", recorded.value("path", "AOTInductor package") + "; " + where}};
  for (const auto* field : {"torch", "created", "compile_s"})
    if (recorded.contains(field)) entry[field] = recorded[field];
  if (!recorded.value("matches_eager", true)) entry["differs_from_eager"] = recorded.value("max_abs_error", 0.0);
  return entry;
}

void record_baseline(const std::string& gpu_name, const std::string& kind, int level,
                     const std::string& problem_name, const nlohmann::json& entry) {
  const auto path = baseline_file(gpu_name, kind);
  std::filesystem::create_directories(path.parent_path());
  // The lock beside the file would show in git: one in the temporary directory, named after it.
  const auto lock_name = "kbench-record-" + std::to_string(std::hash<std::string>{}(path.string())) + ".lock";
  const compile::FileLock lock(std::filesystem::temp_directory_path() / lock_name);
  auto doc = read_json(path);
  if (doc.is_discarded()) doc = nlohmann::json::object();
  doc["level" + std::to_string(level)][problem_name + ".py"] = entry;
  compile::write_file_atomically(path, doc.dump(2) + "\n");
}

}  // namespace kbench::report
