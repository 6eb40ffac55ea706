#include "problems/catalog.h"

#include <cstdlib>
#include <functional>
#include <fstream>
#include <stdexcept>

namespace kbench::problems {

std::string Problem::key() const { return "level" + std::to_string(level) + "/" + name; }

std::string Problem::spec() const { return std::to_string(level) + ":" + std::to_string(id); }

Problem problem_from_json(const nlohmann::json& e) {
  Problem p;
  p.level = e.at("level").get<int>();
  p.id = e.at("id").get<int>();
  p.name = e.at("name").get<std::string>();
  p.file = e.at("file").get<std::string>();
  p.sha256 = e.value("sha256", "");
  p.min_torch = e.value("min_torch", "");
  p.skip_reason = e.value("reason", "");
  for (const auto& in : e.value("inputs", nlohmann::json::array())) {
    InputSpec spec;
    spec.is_scalar = in.value("scalar", false);
    spec.dtype = in.value("dtype", "");
    spec.shape = in.value("shape", std::vector<int64_t>{});
    p.inputs.push_back(spec);
  }
  p.input_bytes = e.value("input_bytes", int64_t{0});
  p.parameter_count = e.value("params", int64_t{0});
  p.weight_bytes = e.value("weight_bytes", int64_t{0});
  p.atol = e.value("atol", 1e-2);
  p.rtol = e.value("rtol", 1e-2);
  p.stochastic = e.value("stochastic", false);
  p.input_generator = e.value("input_generator", "");
  return p;
}

namespace {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string() + " (is --root the kbench checkout?)");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path.string() + " is not valid JSON: " + e.what());
  }
}

}  // namespace

std::filesystem::path degeneracy_file(const std::filesystem::path& root) { return root / "problems" / "degenerate.json"; }
std::filesystem::path footprint_file(const std::filesystem::path& root) { return root / "problems" / "footprint.json"; }

Catalog Catalog::load(const std::filesystem::path& root) {
  const auto doc = read_json_file(root / "problems" / "manifest.json");
  Catalog catalog;
  catalog.root_ = root;
  for (const auto& entry : doc.at("problems")) catalog.problems_.push_back(problem_from_json(entry));
  // Facts measured on a GPU, each file keyed by problem (absent files: nothing measured).
  const auto read_measured = [&](const std::filesystem::path& file,
                                 const std::function<void(Problem&, const nlohmann::json&)>& take) {
    if (!std::filesystem::exists(file)) return;
    const auto measured = read_json_file(file).value("problems", nlohmann::json::object());
    for (auto& p : catalog.problems_)
      if (const auto it = measured.find(p.key()); it != measured.end()) take(p, *it);
  };
  read_measured(degeneracy_file(root), [](Problem& p, const nlohmann::json& m) {
    p.degenerate_kinds = m.value("kinds", std::vector<std::string>{});
    p.degeneracy_note = m.value("note", "");
  });
  read_measured(footprint_file(root), [](Problem& p, const nlohmann::json& m) {
    const auto need = [](const nlohmann::json& measured) {
      MemoryNeed n;
      n.more_than = measured.contains("out_of_memory_under_bytes");
      n.bytes = measured.value(n.more_than ? "out_of_memory_under_bytes" : "peak_bytes", int64_t{0});
      return n;
    };
    p.footprint = need(m);
    if (m.contains("offloaded")) p.footprint_offloaded = need(m["offloaded"]);
  });
  return catalog;
}

nlohmann::json to_json(const Problem& p) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& in : p.inputs)
    inputs.push_back(in.is_scalar ? nlohmann::json{{"scalar", true}, {"dtype", in.dtype}}
                                  : nlohmann::json{{"shape", in.shape}, {"dtype", in.dtype}});
  nlohmann::json j = {{"level", p.level}, {"id", p.id}, {"name", p.name}, {"file", p.file}, {"sha256", p.sha256},
                      {"inputs", inputs}, {"input_bytes", p.input_bytes}, {"params", p.parameter_count},
                      {"atol", p.atol}, {"rtol", p.rtol}, {"stochastic", p.stochastic},
                      {"degenerate", p.degenerate_kinds}};
  if (!p.degeneracy_note.empty()) j["degeneracy"] = p.degeneracy_note;
  for (const auto& [need, name] : {std::pair{&p.footprint, "gpu_memory"}, std::pair{&p.footprint_offloaded, "gpu_memory_offloaded"}})
    if (need->bytes > 0) j[std::string(name) + (need->more_than ? "_more_than_bytes" : "_bytes")] = need->bytes;
  if (!p.min_torch.empty()) j["min_torch"] = p.min_torch, j["reason"] = p.skip_reason;
  return j;
}

const Problem* Catalog::find(int level, int id) const {
  for (const auto& p : problems_)
    if (p.level == level && p.id == id) return &p;
  return nullptr;
}

const Problem& Catalog::get(int level, int id) const {
  if (const auto* p = find(level, id)) return *p;
  throw std::runtime_error("unknown problem: level " + std::to_string(level) + " problem " +
                           std::to_string(id) + " (see `kbench list`)");
}

std::filesystem::path project_root(const std::string& override_root) {
  if (!override_root.empty()) return override_root;
  if (const char* env = std::getenv("KBENCH_ROOT"); env && *env) return env;
  return KBENCH_SOURCE_DIR;
}

std::filesystem::path cache_dir() {
  // Absolute: builds run their compilers in directories of their own, under it.
  if (const char* env = std::getenv("KBENCH_CACHE"); env && *env) return std::filesystem::absolute(env);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "kbench";
  if (const char* home = std::getenv("HOME"); home && *home) return std::filesystem::path(home) / ".cache" / "kbench";
  return std::filesystem::temp_directory_path() / "kbench-cache";
}

std::filesystem::path archive_path(const Problem& problem, const std::string& torch_version) {
  return cache_dir() / ("torch-" + torch_version) / ("level" + std::to_string(problem.level)) /
         (problem.name + "." + problem.sha256.substr(0, 12) + ".pt");
}

}  // namespace kbench::problems
