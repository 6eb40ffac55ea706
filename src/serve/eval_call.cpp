#include "serve/eval_call.h"

#include <filesystem>
#include <set>

#include "compile/modelnew.h"
#include "problems/reference.h"
#include "serve/api_error.h"

namespace kbench::serve {
namespace {

int integer_field(const nlohmann::json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end()) throw ApiError(400, std::string("missing field \"") + name + "\" (an integer)");
  if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 1000000)
    throw ApiError(400, std::string("field \"") + name + "\" must be a non-negative integer, not " + it->dump());
  return it->get<int>();
}

std::string string_field(const nlohmann::json& body, const char* name, bool required) {
  const auto it = body.find(name);
  if (it == body.end()) {
    if (required) throw ApiError(400, std::string("missing field \"") + name + "\" (a string)");
    return "";
  }
  if (!it->is_string()) throw ApiError(400, std::string("field \"") + name + "\" must be a string, not " + it->dump());
  return it->get<std::string>();
}

// A problem this server can evaluate: in the catalog, and (unless only compiled) loadable here.
void check_problem(const problems::Catalog& catalog, int level, int id, bool compile_only) {
  const auto* problem = catalog.find(level, id);
  if (!problem)
    throw ApiError(404, "unknown problem: level " + std::to_string(level) + " problem " + std::to_string(id) +
                            " (GET /v1/problems lists them)");
  if (compile_only) return;
  if (problems::needs_newer_torch(*problem))
    throw ApiError(404, problem->key() + " needs PyTorch >= " + problem->min_torch + "; this server's libtorch is " +
                            problems::libtorch_version());
  if (!std::filesystem::exists(problems::archive_path(*problem, problems::libtorch_version())))
    throw ApiError(404, problem->key() + " is not exported on this server: run python3 scripts/tools/export_problems.py --only " +
                            std::to_string(level) + ":" + std::to_string(id) + " there");
}

}  // namespace

EvalCall parse_eval_call(const std::string& body_text, const problems::Catalog& catalog,
                         const sandbox::EvalSettings& defaults, size_t max_source_bytes) {
  const auto body = nlohmann::json::parse(body_text, nullptr, false);
  if (body.is_discarded()) throw ApiError(400, "the request body is not valid JSON");
  if (!body.is_object())
    throw ApiError(400, "the request body must be a JSON object: {\"source\": ..., \"level\": ..., \"problem\": ...}");
  static const std::set<std::string> known = {"source", "level", "problem", "options", "name", "format"};
  for (const auto& [key, value] : body.items())
    if (!known.count(key))
      throw ApiError(400, "unknown field \"" + key + "\" (fields: source, level, problem, options, name, format)");

  EvalCall call;
  call.source = string_field(body, "source", true);
  if (call.source.size() > max_source_bytes)
    throw ApiError(413, "source of " + std::to_string(call.source.size()) + " bytes is over this server's limit of " +
                            std::to_string(max_source_bytes) + " bytes");
  call.name = string_field(body, "name", false);
  const auto format = string_field(body, "format", false);
  if (!format.empty() && format != "kbench" && format != "modelnew")
    throw ApiError(400, "format must be \"kbench\" (a .cu) or \"modelnew\" (KernelBench's ModelNew .py), not \"" + format + "\"");
  call.modelnew = format.empty() ? compile::is_modelnew_file(call.name) : format == "modelnew";
  call.settings = defaults;
  call.settings.request.level = integer_field(body, "level");
  call.settings.request.problem = integer_field(body, "problem");
  try {
    sandbox::apply_options(body.value("options", nlohmann::json::object()), call.settings);
  } catch (const sandbox::OptionsError& e) {
    throw ApiError(400, e.what());
  }
  check_problem(catalog, call.settings.request.level, call.settings.request.problem, call.settings.request.compile_only);
  return call;
}

}  // namespace kbench::serve
