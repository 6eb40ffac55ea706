#include "compile/extension_build.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sys/resource.h>
#include <unistd.h>

#include <torch/csrc/api/include/torch/version.h>

#include "compile/build_forks.h"
#include "compile/child_process.h"
#include "compile/extension_compile.h"
#include "compile/file_lock.h"
#include "compile/nvrtc_compiler.h"
#include "compile/python_runtime.h"
#include "compile/submission.h"
#include "problems/catalog.h"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace kbench::compile {
namespace {

constexpr const char* kResultFile = "kbench-build.json";
constexpr const char* kCommandsFile = "build-commands.sh";  // the fast route's

std::string& build_executable() {
  static std::string path;
  return path;
}

std::optional<nlohmann::json> read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;  // torn: a miss
  return j;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double cpu_seconds_so_far() {  // this process's, and that of the processes it waited for
  double total = 0;
  for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    struct rusage usage {};
    ::getrusage(who, &usage);
    total += cpu_seconds(usage);
  }
  return total;
}

// A child process must not see a GPU (a build needs none, and a batch's GPUs are busy), nor an
// environment that submission code changed: it gets the one kbench started with.
std::vector<std::string> build_environment() {
  std::vector<std::string> env;
  for (const auto& entry : python::environment_at_start())
    if (entry.rfind("CUDA_VISIBLE_DEVICES=", 0) != 0) env.push_back(entry);
  env.push_back("CUDA_VISIBLE_DEVICES=");
  return env;
}

}  // namespace

nlohmann::json ExtensionSpec::to_json() const {
  return {{"name", name}, {"cpp_sources", cpp_sources}, {"cuda_sources", cuda_sources}, {"functions", functions},
          {"extra_cflags", extra_cflags}, {"extra_cuda_cflags", extra_cuda_cflags}, {"extra_ldflags", extra_ldflags},
          {"extra_include_paths", extra_include_paths},
          {"with_cuda", with_cuda ? nlohmann::json(*with_cuda) : nlohmann::json(nullptr)},
          {"with_pytorch_error_handling", with_pytorch_error_handling},
          {"no_implicit_headers", no_implicit_headers}};
}

ExtensionSpec ExtensionSpec::from_json(const nlohmann::json& j) {
  ExtensionSpec s;
  s.name = j.at("name");
  for (auto [field, list] : {std::pair{"cpp_sources", &s.cpp_sources}, std::pair{"cuda_sources", &s.cuda_sources},
                             std::pair{"functions", &s.functions}, std::pair{"extra_cflags", &s.extra_cflags},
                             std::pair{"extra_cuda_cflags", &s.extra_cuda_cflags},
                             std::pair{"extra_ldflags", &s.extra_ldflags},
                             std::pair{"extra_include_paths", &s.extra_include_paths}})
    *list = j.value(field, std::vector<std::string>{});
  if (j.contains("with_cuda") && !j["with_cuda"].is_null()) s.with_cuda = j["with_cuda"].get<bool>();
  s.with_pytorch_error_handling = j.value("with_pytorch_error_handling", true);
  s.no_implicit_headers = j.value("no_implicit_headers", false);
  return s;
}

nlohmann::json ExtensionBuild::to_json() const {
  nlohmann::json j = {{"name", name},       {"key", key},     {"ok", ok},       {"from_cache", from_cache},
                      {"seconds", seconds}, {"cpu_seconds", cpu_seconds},      {"route", route}};
  if (!why.empty()) j["why"] = why;
  if (!adaptations.empty()) j["adaptations"] = adaptations;
  if (!pch.empty()) j["pch"] = pch;
  if (!headers.empty()) j["headers"] = headers;
  if (!steps.is_null()) j["steps"] = steps;
  if (!process.empty()) j["process"] = process;
  if (!log.empty()) j["log"] = log;
  if (waited_seconds > 0) j["waited_seconds"] = waited_seconds;
  return j;
}

const char* route_name(BuildRoute route) { return route == BuildRoute::fast ? "fast" : "pytorch"; }

BuildRoute requested_build_route() {
  const char* value = std::getenv("KBENCH_EXTENSION_BUILD");
  if (!value || !*value || std::string(value) == "fast") return BuildRoute::fast;
  if (std::string(value) == "pytorch") return BuildRoute::pytorch;
  throw std::runtime_error("KBENCH_EXTENSION_BUILD is '" + std::string(value) + "': it must be fast or pytorch");
}

bool light_headers_requested() {
  const char* value = std::getenv("KBENCH_EXTENSION_HEADERS");
  if (!value || !*value || std::string(value) == "light") return true;
  if (std::string(value) == "full") return false;
  throw std::runtime_error("KBENCH_EXTENSION_HEADERS is '" + std::string(value) + "': it must be light or full");
}

const std::vector<std::string>& wrapped_launch_functions() {
  static const std::vector<std::string> functions = {
      "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "cudaLaunchKernel", "cudaLaunchKernel_ptsz",
      "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz", "cudaLaunchCooperativeKernel",
      "cudaLaunchCooperativeKernel_ptsz", "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
      "cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz"};
  return functions;
}

const std::vector<std::string>& wrapped_library_functions() {
  static const std::vector<std::string> functions = {"cublasSgemm_v2", "cublasSgemmStridedBatched", "cublasGemmEx",
                                                     "cublasGemmStridedBatchedEx", "cublasLtMatmul",
                                                     "cudnnConvolutionForward"};
  return functions;
}

std::vector<std::string> extension_link_flags() {
  std::vector<std::string> flags;
  for (const auto* list : {&wrapped_launch_functions(), &wrapped_library_functions()})
    for (const auto& f : *list) flags.push_back("-Wl,--wrap=" + f);
  return flags;
}

std::string torch_arch_list(const std::string& sm_arch) {
  std::string digits = sm_arch.rfind("sm_", 0) == 0 ? sm_arch.substr(3) : sm_arch;
  std::string suffix;
  while (!digits.empty() && !std::isdigit(static_cast<unsigned char>(digits.back()))) suffix.insert(0, 1, digits.back()), digits.pop_back();
  if (digits.size() < 2) return sm_arch;  // not an sm_XY name: passed on as given
  return digits.substr(0, digits.size() - 1) + "." + digits.back() + suffix;
}

namespace {
// What decides the library but the route (the module's name is made of it alone, so that both routes
// compile the same sources under the same name).
nlohmann::json key_material(const ExtensionSpec& spec, const std::string& arch) {
  auto material = spec.to_json();
  material.erase("name");
  material["toolchain"] = {{"torch", TORCH_VERSION}, {"cuda", nvrtc_version()}, {"python", PY_VERSION},
                           {"arch", torch_arch_list(arch)}, {"link_flags", extension_link_flags()}};
  return material;
}
}  // namespace

std::string ExtensionCache::key(const ExtensionSpec& spec, const std::string& arch, BuildRoute route) {
  auto material = key_material(spec, arch);
  material["route"] = route_name(route);
  if (route == BuildRoute::fast && !light_headers_requested()) material["headers"] = "full";
  return content_hash(material.dump());
}

std::optional<ExtensionBuild> ExtensionCache::lookup(const std::string& key) const {
  const auto entry = dir_ / key;
  const auto result = read_json(entry / kResultFile);
  if (!result) return std::nullopt;
  ExtensionBuild b;
  b.key = key;
  b.ok = result->value("ok", false);
  b.log = result->value("log", "");
  b.seconds = result->value("seconds", 0.0);
  b.module = result->value("module", "");
  b.library = entry / (b.module + ".so");
  b.cpu_seconds = result->value("cpu_seconds", 0.0);
  b.route = result->value("route", "");
  b.why = result->value("why", "");
  b.adaptations = result->value("adaptations", std::vector<std::string>{});
  b.pch = result->value("pch", "");
  b.headers = result->value("headers", "");
  b.process = result->value("process", "");
  if (result->contains("steps")) b.steps = (*result)["steps"];
  if (b.ok && !std::filesystem::exists(b.library)) return std::nullopt;
  b.from_cache = true;
  return b;
}

namespace {
struct BuildProcess {
  std::filesystem::path scratch;  // where it built
  ChildResult child;
  std::optional<nlohmann::json> result;  // what it wrote there, if anything
  bool forked = false;
};

BuildProcess run_build_process(const ExtensionCache& cache, const std::string& key, nlohmann::json& request) {
  static std::atomic<int> builds{0};
  BuildProcess run;
  run.scratch = cache.dir() / (key + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(builds++));
  std::filesystem::create_directories(run.scratch);
  request["directory"] = run.scratch.string();
  ChildOptions options;
  options.environment = build_environment();
  if (auto forked = run_forked_build(request, options.environment)) {
    run.child = std::move(*forked);
    run.forked = true;
  } else {
    options.input = request.dump();
    run.child = run_child(build_executable().empty() ? this_executable() : build_executable(), {"__build-extension"},
                          options);
  }
  run.result = read_json(run.scratch / kResultFile);
  return run;
}

}  // namespace

ExtensionBuild build_extension(const ExtensionSpec& spec, const std::string& arch, const ExtensionCache& cache,
                               BuildRoute route) {
  const auto key = ExtensionCache::key(spec, arch, route);
  if (auto hit = cache.lookup(key)) {
    hit->name = spec.name;
    return *hit;
  }
  std::filesystem::create_directories(cache.dir());
  const auto t0 = std::chrono::steady_clock::now();
  // Processes that share a cache (a batch's build pass, several machines over a network file
  // system) build each entry once: the others wait for its result.
  const FileLock lock(cache.dir() / (key + ".lock"));
  if (auto hit = cache.lookup(key)) {  // built by the process that held the lock
    hit->name = spec.name;
    hit->waited_seconds = seconds_since(t0);
    return *hit;
  }
  nlohmann::json request = {{"spec", spec.to_json()},
                            {"arch", arch},
                            {"module", "kbench_ext_" + content_hash(key_material(spec, arch).dump()).substr(0, 16)},
                            {"route", route_name(route)},
                            {"pch_dir", (problems::cache_dir() / "extension-pch").string()},
                            {"headers_dir", (problems::cache_dir() / "extension-headers").string()},
                            {"light_headers", light_headers_requested()}};
  if (route == BuildRoute::pytorch) request["why"] = "asked for (KBENCH_EXTENSION_BUILD=pytorch)";
  auto run = run_build_process(cache, key, request);
  double cpu_seconds = run.child.cpu_seconds, seconds = 0;
  if (run.result && run.result->contains("fallback")) {  // the fast route cannot take it: PyTorch's build, afresh
    seconds = run.result->value("seconds", 0.0);
    request["route"] = route_name(BuildRoute::pytorch);
    request["why"] = (*run.result)["fallback"];
    remove_tree(run.scratch);
    run = run_build_process(cache, key, request);
    cpu_seconds += run.child.cpu_seconds;
  }
  if (run.result) {
    (*run.result)["cpu_seconds"] = cpu_seconds;
    (*run.result)["process"] = run.forked ? "fork" : "fresh: " + why_builds_start_fresh();
    (*run.result)["seconds"] = seconds + run.result->value("seconds", 0.0);
    std::ofstream(run.scratch / kResultFile) << run.result->dump(1) << "\n";
    std::error_code taken;
    std::filesystem::rename(run.scratch, cache.dir() / key, taken);
    if (taken) remove_tree(run.scratch);  // another process stored it first
    if (auto built = cache.lookup(key)) {
      built->name = spec.name;
      built->from_cache = false;
      return *built;
    }
  }
  remove_tree(run.scratch);
  ExtensionBuild failed;  // the build process died: not cached, a later evaluation tries again
  failed.name = spec.name;
  failed.key = key;
  failed.route = request["route"];
  failed.log = "the build process ended without a result (wait status " + std::to_string(run.child.status) + "):\n" +
               run.child.output;
  return failed;
}

int run_extension_build(std::istream& request_stream) {
  const auto request = nlohmann::json::parse(request_stream);
  const std::filesystem::path directory = request.at("directory").get<std::string>();
  const auto t0 = std::chrono::steady_clock::now();
  nlohmann::json result = {{"module", request.at("module")}, {"route", request.at("route")}};
  if (request.contains("why")) result["why"] = request["why"];
  std::string log;
  try {
    auto support = python::start(/*with_cuda=*/false);
    const auto json = py::module_::import("json");
    const auto spec = json.attr("loads")(request.at("spec").dump());
    const auto arch_list = torch_arch_list(request.at("arch"));
    const auto module = request.at("module").get<std::string>();
    if (request.at("route") == route_name(BuildRoute::pytorch)) {
      log = support.attr("build_extension")(spec, arch_list, directory.string(), module, extension_link_flags())
                .cast<std::string>();
    } else {
      const auto plan = nlohmann::json::parse(
          json.attr("dumps")(support.attr("build_plan")(spec, arch_list, directory.string(), module,
                                                        extension_link_flags()))
              .cast<std::string>());
      result["steps"]["plan"] = {{"wall_s", seconds_since(t0)}, {"cpu_s", cpu_seconds_so_far()}};
      if (plan.contains("fallback")) {
        result["fallback"] = plan["fallback"];  // build_extension starts PyTorch's build in a fresh process
      } else {
        if (!plan.at("adaptations").empty()) result["adaptations"] = plan["adaptations"];
        const auto built = run_planned_build(
            plan, directory,
            {request.at("pch_dir").get<std::string>(), request.at("headers_dir").get<std::string>(), request.at("light_headers")});
        std::ofstream commands(directory / kCommandsFile);
        commands << "# What kbench's fast route ran, in this directory: PyTorch's plan (build.ninja) with the changes "
                    "kbench-build.json lists (adaptations, headers, pch). Sources are named as they were built, in the scratch "
                    "directory that then became this one.\n";
        for (const auto& command : built.commands) commands << command << "\n";
        result["steps"].update(built.steps);
        result["pch"] = built.pch;
        result["headers"] = built.headers;
        const auto built_module = std::filesystem::path(plan.at("library").get<std::string>()).stem().string();
        result["module"] = built_module;
        log = built.ok ? support.attr("load_built")(directory.string(), built_module).cast<std::string>() : built.log;
      }
    }
  } catch (const std::exception& e) {
    log = std::string("kbench could not run the build: ") + e.what();
  }
  result["ok"] = log.empty() && !result.contains("fallback");
  result["log"] = log;
  result["seconds"] = seconds_since(t0);
  std::ofstream(directory / kResultFile) << result.dump(1) << "\n";
  return 0;
}

void set_build_executable(const std::string& path) { build_executable() = path; }

}  // namespace kbench::compile
