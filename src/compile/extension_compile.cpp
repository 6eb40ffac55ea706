#include "compile/extension_compile.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <ftw.h>
#include <future>
#include <thread>
#include <unistd.h>
#include <utility>

#include "compile/child_process.h"
#include "compile/file_lock.h"
#include "compile/submission.h"

namespace kbench::compile {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kBindingInclude = "#include <torch/extension.h>";

// The lighter torch/extension.h, tried second, made of PyTorch's own narrower headers: torch/types.h
// declares what load_inline sources mostly use (torch::Tensor, the factories, data_ptr, TORCH_CHECK,
// AT_DISPATCH_*); the C++ one adds the pybind11 casters and wrap_pybind_function that the binding
// file needs. What else the full header brings (torch::nn, optim, jit, data, ...) a source that uses
// it gets by the compiler's error and the full header's try.
constexpr const char* kLightCudaHeader =
    "// kbench's lighter torch/extension.h for CUDA sources (README: How a ModelNew extension is built)\n"
    "#pragma once\n#include <torch/types.h>\n";
constexpr const char* kBindingHeaders = "#include <torch/csrc/utils/pybind.h>\n#include <torch/csrc/Exceptions.h>\n";
const std::string kLightCxxHeader =
    "// kbench's lighter torch/extension.h for C++ sources (README: How a ModelNew extension is built)\n"
    "#pragma once\n#include <torch/types.h>\n" + std::string(kBindingHeaders);

// The narrowest headers, tried first: torch/types.h itself (which load_inline puts before every CUDA
// source) replaced by ATen's Tensor, its operators, the dispatch macros and the per-operator headers
// of the functions load_inline sources call most, with torch:: naming ATen's namespace and the
// scalar types' widths, as torch/types.h has it do. What the full torch/types.h adds, a source that
// uses it gets by the compiler's error and the next try: torch::'s own factories (which differ from
// ATen's only where the options ask for requires_grad), torch::Dtype, torch::nn and the rest. Not
// torch::tensor, which ATen's overloads would compile with another dtype (double for a list of
// doubles, where torch's takes the default, float): a deleted torch::tensor stops the name's lookup
// in torch::, so a call fails to compile even where the source includes ATen's own.
constexpr const char* kNarrowOps[] = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "arange", "rand", "randn", "randint", "from_blob", "cat", "stack", "matmul", "mm", "bmm", "addmm",
    "baddbmm", "einsum", "linear", "conv1d", "conv2d", "conv3d", "conv_transpose2d", "max_pool2d", "avg_pool2d",
    "adaptive_avg_pool2d", "relu", "leaky_relu", "gelu", "silu", "elu", "selu", "hardtanh", "hardswish", "mish",
    "softplus", "sigmoid", "tanh", "softmax", "log_softmax", "dropout", "layer_norm", "batch_norm", "group_norm",
    "instance_norm", "scaled_dot_product_attention", "sum", "mean", "prod", "var", "std", "norm", "cumsum", "max",
    "min", "maximum", "minimum", "argmax", "argmin", "topk", "sort", "clamp", "clamp_min", "clamp_max", "abs",
    "neg", "sign", "floor", "ceil", "round", "exp", "exp2", "log", "sqrt", "rsqrt", "erf", "pow", "add", "sub",
    "mul", "div", "where", "transpose", "permute", "reshape", "flatten", "index_select", "gather"};
// torch/types.h's names for the widths of ATen's scalar types (torch::kFloat32 is at::kFloat).
constexpr std::pair<const char*, const char*> kWidthNames[] = {
    {"kUInt8", "kByte"}, {"kInt8", "kChar"},     {"kInt16", "kShort"},   {"kInt32", "kInt"},
    {"kInt64", "kLong"}, {"kFloat16", "kHalf"}, {"kFloat32", "kFloat"}, {"kFloat64", "kDouble"}};

// The narrow torch/types.h for the PyTorch whose headers are in `torch_include`: an operator's
// header is named only where this PyTorch has it.
std::string narrow_types_header(const std::filesystem::path& torch_include) {
  // ATen/TensorOperators.h (Tensor + Tensor, Tensor * Scalar, ...) brings all of ATen's functions
  // unless PyTorch's own per-operator mode is on, in which it needs one operator's header.
  std::string text =
      "// kbench's narrowest torch/types.h (README: How a ModelNew extension is built)\n#pragma once\n"
      "#include <ATen/core/Tensor.h>\n#include <ATen/Dispatch.h>\n#include <c10/util/Exception.h>\n"
      "#define AT_PER_OPERATOR_HEADERS\n#include <ATen/TensorOperators.h>\n#undef AT_PER_OPERATOR_HEADERS\n";
  for (const auto* op : kNarrowOps)
    if (std::filesystem::exists(torch_include / "ATen" / "ops" / (std::string(op) + ".h")))
      text += "#include <ATen/ops/" + std::string(op) + ".h>\n";
  text += "namespace torch {\nusing namespace at;\nvoid tensor() = delete;\n";
  for (const auto& [width, name] : kWidthNames) text += "constexpr auto " + std::string(width) + " = at::" + name + ";\n";
  return text + "}\n";
}

// Flags as torch hands them to ninja: shell fragments ("-isystem /x", "'-fPIC'"), joined by spaces.
std::string joined(const nlohmann::json& flags, const std::string& leave_out_prefix = "") {
  std::string out;
  for (const auto& flag : flags) {
    const auto& f = flag.get_ref<const std::string&>();
    if (f.empty() || (!leave_out_prefix.empty() && f.rfind(leave_out_prefix, 0) == 0)) continue;
    out += (out.empty() ? "" : " ") + f;
  }
  return out;
}

std::string quoted(const std::string& path) {
  std::string out = "'";
  for (const char c : path) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Ran {
  bool ok = false;
  std::string command, output;
  double wall_s = 0, cpu_s = 0;
  nlohmann::json times() const { return {{"wall_s", wall_s}, {"cpu_s", cpu_s}}; }
};

Ran run_shell(const std::string& command, const std::filesystem::path& directory) {
  ChildOptions options;
  options.environment = current_environment();
  options.working_directory = directory.string();
  const auto t0 = Clock::now();
  const auto child = run_child("/bin/sh", {"-c", command}, options);
  return {child.exited_cleanly(), command, child.output,
          std::chrono::duration<double>(Clock::now() - t0).count(), child.cpu_seconds};
}

// The line of a compiler's output that holds `marker`; empty when none does.
std::string line_with(const std::string& output, const std::string& marker) {
  const auto at = output.find(marker);
  if (at == std::string::npos) return "";
  const auto start = output.rfind('\n', at) + 1;
  return output.substr(start, output.find('\n', at) - start);
}

// PyTorch's own torch/extension.h, in the include directory the plan names first.
std::filesystem::path torch_extension_header(const nlohmann::json& plan) {
  return std::filesystem::path(plan.at("torch_include").get<std::string>()) / "torch" / "extension.h";
}

bool begins_with_binding_include(const std::filesystem::path& source) {
  std::ifstream in(source);
  std::string first;
  std::getline(in, first);
  return first == kBindingInclude;
}

// One tier of headers: the include directories of CUDA and C++ sources, each with the files that
// stand in for PyTorch's (torch/extension.h, and for the narrowest torch/types.h too).
struct HeaderTier {
  std::string name;  // "narrow" or "light"
  std::filesystem::path cuda_dir, cxx_dir;
};
using HeaderFiles = std::vector<std::pair<std::string, std::string>>;  // name under torch/, text

// Writes a tier into <headers_root>/<hash of its files>/{cuda,cxx}/torch/, unless a build did before.
HeaderTier header_tier(const std::string& name, const std::filesystem::path& headers_root, const HeaderFiles& cuda,
                       const HeaderFiles& cxx) {
  std::string all;
  for (const auto* files : {&cuda, &cxx})
    for (const auto& [file, text] : *files) all += file + "\n" + text;
  const auto dir = headers_root / content_hash(all).substr(0, 16);
  HeaderTier tier{name, dir / "cuda", dir / "cxx"};
  for (const auto& [include_dir, files] : {std::pair{tier.cuda_dir, &cuda}, std::pair{tier.cxx_dir, &cxx}})
    for (const auto& [file, text] : *files) {
      const auto header = include_dir / "torch" / file;
      if (std::filesystem::exists(header)) continue;
      std::filesystem::create_directories(header.parent_path());
      // Never replaced once there: a compile includes it more than once, and nvcc's #pragma once
      // knows a file by its identity, so another build's rename under it broke that compile
      // ("already defined"; seen in CI with two builds into a fresh cache).
      write_file_atomically(header, text, /*replace=*/false);
    }
  return tier;
}

// The tiers a build tries, narrowest first. The narrow torch/extension.h holds its torch/types.h's
// text rather than including it: its precompiled header is made without the tier's directory on the
// include path.
std::vector<HeaderTier> header_tiers(const std::filesystem::path& headers_root, const nlohmann::json& plan) {
  const auto narrow = narrow_types_header(plan.at("torch_include").get<std::string>());
  return {header_tier("narrow", headers_root, {{"types.h", narrow}, {"extension.h", narrow}},
                      {{"types.h", narrow}, {"extension.h", narrow + kBindingHeaders}}),
          header_tier("light", headers_root, {{"extension.h", kLightCudaHeader}}, {{"extension.h", kLightCxxHeader}})};
}

// A precompiled torch/extension.h (PyTorch's or one of kbench's tiers) for the binding file's flags, in
// <pch_root>/<key>/torch/ beside a link to the header itself (g++ opens the header where it found the
// .gch when a file includes it again, and then #pragma once skips it). Its key is the compiler (and
// its version), the flags but the module's name (which the header never reads), the header's path
// and content, and the path and time of PyTorch's own (its version). One build at a time makes it. A
// build that finds it being made waits for it when its CUDA compile runs meanwhile (`can_wait`): the
// header (about 15 CPU s) is then ready before nvcc is done, and the binding file costs a third of its
// CPU s without it; a build that would wait alone compiles without it. A failed one is kept, with its
// log, and not retried.
struct PrecompiledHeader {
  std::filesystem::path include_dir;  // empty: none to use
  std::string note;
  nlohmann::json build_times;  // when this build made it
  double waited_s = 0;         // for another build making it
};

// Longer than making a header takes (15-30 s on the GPU machines under load): past it, a maker is stuck.
constexpr auto kLongestWaitForHeader = std::chrono::seconds(90);

PrecompiledHeader precompiled_header(const nlohmann::json& plan, const std::filesystem::path& header,
                                     const std::filesystem::path& pch_root, bool can_wait) {
  const std::string cxx = plan.at("cxx");
  const auto flags = joined(plan.at("cflags"), "-DTORCH_EXTENSION_NAME=");
  const auto torch_header = torch_extension_header(plan);
  std::error_code no_time;
  const auto torch_time = std::filesystem::last_write_time(torch_header, no_time).time_since_epoch().count();
  std::filesystem::create_directories(pch_root);
  const auto version = run_shell(cxx + " --version", pch_root);
  const auto key = content_hash(cxx + "\n" + version.output + "\n" + flags + "\n" + header.string() + "\n" +
                                file_bytes(header) + "\n" + torch_header.string() + "\n" + std::to_string(torch_time));
  const auto dir = pch_root / key, made_here = pch_root / (key + ".tmp." + std::to_string(::getpid()));
  const auto failed = dir / "failed.log";
  const auto present = [&] {
    return std::filesystem::exists(dir / "torch" / "extension.h.gch") && std::filesystem::exists(dir / "torch" / "extension.h");
  };
  if (present()) return {dir, "used", nullptr};
  if (std::filesystem::exists(failed)) return {{}, "not used: its build failed before (" + failed.string() + ")", nullptr};

  const auto lock_path = pch_root / (key + ".lock");
  const auto asked = Clock::now();
  std::unique_ptr<FileLock> locked;
  try {
    locked = FileLock::try_exclusive(lock_path);
    while (!locked && can_wait && Clock::now() - asked < kLongestWaitForHeader) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      locked = FileLock::try_exclusive(lock_path);
    }
  } catch (const std::runtime_error& e) {
    return {{}, std::string("not used: ") + e.what(), nullptr};
  }
  const double waited_s = std::chrono::duration<double>(Clock::now() - asked).count();
  if (!locked) {
    return {{}, can_wait ? "not used: another build was still making it after " + std::to_string(kLongestWaitForHeader.count()) + " s"
                         : "not used: another build is making it",
            nullptr, waited_s};
  }
  PrecompiledHeader result{dir, "used", nullptr, waited_s};  // made by another build since the look above
  if (std::filesystem::exists(failed)) {
    result = {{}, "not used: its build failed (" + failed.string() + ")", nullptr, waited_s};
  } else if (!present()) {
    // What a build killed while making it left (any other maker would hold the lock).
    for (const auto& entry : std::filesystem::directory_iterator(pch_root))
      if (entry.path().filename().string().rfind(key + ".tmp.", 0) == 0) remove_tree(entry.path());
    std::filesystem::create_directories(made_here / "torch");
    const auto made = run_shell(cxx + " " + flags + " -x c++-header " + quoted(header.string()) + " -o " +
                                    quoted((made_here / "torch" / "extension.h.gch").string()),
                                pch_root);
    std::error_code not_moved;
    if (made.ok) std::filesystem::create_symlink(header, made_here / "torch" / "extension.h", not_moved);
    if (made.ok && !not_moved) std::filesystem::rename(made_here, dir, not_moved);
    if (made.ok && !not_moved) {
      result = {dir, "built", made.times(), waited_s};
    } else {
      remove_tree(made_here);
      std::filesystem::create_directories(dir);
      std::ofstream(failed) << made.command << "\n"
                            << (made.ok ? "could not move it into place: " + not_moved.message() : made.output);
      result = {{}, "not used: its build failed (" + failed.string() + ")", made.times(), waited_s};
    }
  }
  return result;
}

struct Step {
  Ran compiled;
  PrecompiledHeader pch;                           // the binding file's: its note says what became of it
  std::string headers;                             // "narrow", "light" (and why not narrow), or "full: " and why
  nlohmann::json times = nlohmann::json::object();  // of what else it ran: headers made, failed tries
};

// One compile against one torch/extension.h: the one in `include_dir`, searched after the user's -I
// directories and before torch's -isystem ones, or torch's own (`include_dir` empty). The binding
// file's from its precompiled header where there is one; a header g++ cannot use is a warning (never
// an error, whatever -Werror the flags hold) that says why.
Step compile_against(const std::string& command, const std::filesystem::path& directory,
                     const std::filesystem::path& include_dir, bool binding, const nlohmann::json& plan,
                     const std::filesystem::path& pch_root, bool can_wait_for_pch, const std::string& tier = "") {
  Step step;
  auto search = include_dir;
  std::string pch_flags;
  if (binding) {
    const auto header = include_dir.empty() ? torch_extension_header(plan) : include_dir / "torch" / "extension.h";
    step.pch = precompiled_header(plan, header, pch_root, can_wait_for_pch);
    const auto tier_named = tier.empty() ? std::string() : " (" + tier + " headers)";
    if (!step.pch.build_times.is_null()) step.times["pch" + tier_named] = step.pch.build_times;
    if (step.pch.waited_s > 0.1)
      step.times["waited for another build's pch" + tier_named] = {{"wall_s", step.pch.waited_s}, {"cpu_s", 0.0}};
    if (!step.pch.include_dir.empty()) search = step.pch.include_dir, pch_flags = " -Winvalid-pch -Wno-error=invalid-pch";
  }
  step.compiled = run_shell(command + (search.empty() ? "" : " -I" + quoted(search.string())) + pch_flags, directory);
  if (const auto rejected = line_with(step.compiled.output, "extension.h.gch: not used because"); !rejected.empty())
    step.pch.note = "rejected by the compiler: " + rejected;
  return step;
}

// The compiler's first error line (what the lighter headers lacked, most often).
std::string first_error(const std::string& output) {
  const auto line = line_with(output, "error:");
  return line.empty() ? "the compiler failed without an error line" : line.substr(0, 300);
}

// Compiles one source as ninja's compile or cuda_compile rule would (without a dependency file):
// against each of `tiers` in turn (the narrowest first), then PyTorch's own, each after a
// compiler error in the one before. The compiler decides which a source needs; kbench reads no C++.
// `can_wait_for_pch`: a CUDA compile of the same build runs meanwhile (precompiled_header).
Step compile_step(const nlohmann::json& plan, const nlohmann::json& step, const std::filesystem::path& directory,
                  const BuildCaches& caches, const std::vector<HeaderTier>& tiers, bool can_wait_for_pch) {
  const std::string source = step.at("source"), object = step.at("object");
  const auto io = " -c " + quoted(source) + " -o " + quoted(object);
  const bool nvcc = step.at("nvcc").get<bool>();
  const auto command = nvcc ? plan.at("nvcc").get<std::string>() + " " + joined(plan.at("cuda_cflags")) + io
                            : plan.at("cxx").get<std::string>() + " " + joined(plan.at("cflags")) + io;
  const bool binding = !nvcc && begins_with_binding_include(source);
  if (!plan.at("own_includes").empty()) {
    const auto why = "the submission's own include flags (" + joined(plan.at("own_includes")) +
                     ") could bring headers that torch/extension.h includes";
    return {run_shell(command, directory), {{}, "not used: " + why, nullptr}, "full: " + why};
  }
  Step compiled;
  if (!caches.try_light_headers) {
    compiled = compile_against(command, directory, {}, binding, plan, caches.pch_root, can_wait_for_pch);
    compiled.headers = "full: asked for (KBENCH_EXTENSION_HEADERS=full)";
  } else {
    nlohmann::json failed = nlohmann::json::object();  // the tries before, and what they made
    std::string narrow_error;
    for (const auto& tier : tiers) {
      compiled = compile_against(command, directory, nvcc ? tier.cuda_dir : tier.cxx_dir, binding, plan, caches.pch_root,
                                 can_wait_for_pch, tier.name);
      compiled.times.update(failed);
      if (compiled.compiled.ok) {
        compiled.headers = tier.name + (narrow_error.empty() ? "" : ": the narrowest headers failed: " + narrow_error);
        break;
      }
      failed = compiled.times;
      failed[object + " (" + tier.name + " headers, failed)"] = compiled.compiled.times();
      compiled.headers = "full: the lighter headers failed: " + first_error(compiled.compiled.output);
      if (tier.name == "narrow") narrow_error = first_error(compiled.compiled.output);
    }
    if (!compiled.compiled.ok) {
      auto full = compile_against(command, directory, {}, binding, plan, caches.pch_root, can_wait_for_pch);
      full.headers = compiled.headers;
      full.times.update(failed);
      compiled = std::move(full);
    }
  }
  if (!nvcc && !binding) compiled.pch.note = "not used: " + source + " does not begin with " + kBindingInclude;
  return compiled;
}

// How wide a step's headers were: the narrowest (0), the lighter (1), PyTorch's own (2).
int width(const std::string& headers) {
  return headers.rfind("narrow", 0) == 0 ? 0 : headers.rfind("light", 0) == 0 ? 1 : 2;
}

std::string failure(const std::string& target, const Ran& ran) {
  return "FAILED: " + target + "\n" + ran.command + "\n" + ran.output;
}

}  // namespace

void remove_tree(const std::filesystem::path& dir) {
  ::nftw(
      dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return std::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

PlannedBuildResult run_planned_build(const nlohmann::json& plan, const std::filesystem::path& directory,
                                     const BuildCaches& caches) {
  PlannedBuildResult result;
  result.steps = nlohmann::json::object();
  // As ninja -j: one compiler at a time only when MAX_JOBS says 1 (kbench batch's build pass does).
  const char* jobs = std::getenv("MAX_JOBS");
  const auto launch = jobs && std::string(jobs) == "1" ? std::launch::deferred : std::launch::async;
  const auto tiers = caches.try_light_headers ? header_tiers(caches.headers_root, plan) : std::vector<HeaderTier>{};
  const auto& steps = plan.at("steps");
  const bool cuda_beside = launch == std::launch::async &&
                           std::any_of(steps.begin(), steps.end(), [](const nlohmann::json& step) { return step.at("nvcc").get<bool>(); });
  std::vector<std::future<Step>> compiles;
  for (const auto& step : steps)
    compiles.push_back(std::async(launch, [&, step] { return compile_step(plan, step, directory, caches, tiers, cuda_beside); }));
  std::string objects;
  result.pch = "not used: no C++ file";
  result.headers = "narrow";
  for (size_t i = 0; i < compiles.size(); ++i) {
    const auto step = compiles[i].get();
    const std::string object = plan.at("steps")[i].at("object");
    result.steps[object] = step.compiled.times();
    result.commands.push_back(step.compiled.command);
    if (!step.pch.note.empty()) result.pch = step.pch.note;
    result.steps.update(step.times);
    if (width(step.headers) > width(result.headers)) result.headers = step.headers;
    objects += " " + quoted(object);
    if (!step.compiled.ok && result.log.empty()) result.log = failure(object, step.compiled);
  }
  if (!result.log.empty()) return result;
  const std::string library = plan.at("library");
  const auto linked = run_shell(plan.at("cxx").get<std::string>() + objects + " " + joined(plan.at("ldflags")) +
                                    " -o " + quoted(library),
                                directory);
  result.steps["link"] = linked.times();
  result.commands.push_back(linked.command);
  if (!linked.ok) result.log = failure(library, linked);
  result.ok = linked.ok;
  return result;
}

}  // namespace kbench::compile
