#include "report/baselines.h"

#include <fstream>

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

std::optional<nlohmann::json> recorded_baseline(const std::string& gpu_name, const std::string& kind, int level,
                                                const std::string& problem_name) {
  const auto doc = read_json(baseline_file(gpu_name, kind));
  if (doc.is_discarded()) return std::nullopt;
  const auto level_key = "level" + std::to_string(level);
  const auto file_key = problem_name + ".py";
  if (!doc.contains(level_key) || !doc[level_key].contains(file_key)) return std::nullopt;
  return doc[level_key][file_key];
}

void record_baseline(const std::string& gpu_name, const std::string& kind, int level,
                     const std::string& problem_name, const nlohmann::json& entry) {
  const auto path = baseline_file(gpu_name, kind);
  auto doc = read_json(path);
  if (doc.is_discarded()) doc = nlohmann::json::object();
  doc["level" + std::to_string(level)][problem_name + ".py"] = entry;
  std::filesystem::create_directories(path.parent_path());
  compile::write_file_atomically(path, doc.dump(2) + "\n");
}

}  // namespace kbench::report
