#include "compile/extension_compile.h"

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <ftw.h>
#include <future>
#include <sys/file.h>
#include <unistd.h>

#include "compile/child_process.h"
#include "compile/submission.h"

extern char** environ;

namespace kbench::compile {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kBindingInclude = "#include <torch/extension.h>";

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
  for (char** entry = environ; entry && *entry; ++entry) options.environment.emplace_back(*entry);
  options.working_directory = directory.string();
  const auto t0 = Clock::now();
  const auto child = run_child("/bin/sh", {"-c", command}, options);
  return {child.exited_cleanly(), command, child.output,
          std::chrono::duration<double>(Clock::now() - t0).count(), child.cpu_seconds};
}

bool begins_with_binding_include(const std::filesystem::path& source) {
  std::ifstream in(source);
  std::string first;
  std::getline(in, first);
  return first == kBindingInclude;
}

// The precompiled torch/extension.h for the binding file's flags, in <pch_root>/<key>/torch/ beside
// a link to the header itself (g++ opens the header where it found the .gch when a file includes it
// again, and then #pragma once skips it). Its key is the compiler (and its version), the flags but
// the module's name (which the header never reads) and the header's path and time. One build at a
// time makes it; a build that finds it being made compiles without it rather than wait. A failed one
// is kept, with its log, and not retried.
struct PrecompiledHeader {
  std::filesystem::path include_dir;  // empty: none to use
  std::string note;
  nlohmann::json build_times;  // when this build made it
};

PrecompiledHeader precompiled_header(const nlohmann::json& plan, const std::filesystem::path& pch_root) {
  const std::string cxx = plan.at("cxx");
  const auto flags = joined(plan.at("cflags"), "-DTORCH_EXTENSION_NAME=");
  const auto header = std::filesystem::path(plan.at("torch_include").get<std::string>()) / "torch" / "extension.h";
  std::error_code no_time;
  const auto header_time = std::filesystem::last_write_time(header, no_time).time_since_epoch().count();
  std::filesystem::create_directories(pch_root);
  const auto version = run_shell(cxx + " --version", pch_root);
  const auto key = content_hash(cxx + "\n" + version.output + "\n" + flags + "\n" + header.string() + "\n" +
                                std::to_string(header_time));
  const auto dir = pch_root / key, made_here = pch_root / (key + ".tmp." + std::to_string(::getpid()));
  const auto failed = dir / "failed.log";
  const auto present = [&] {
    return std::filesystem::exists(dir / "torch" / "extension.h.gch") && std::filesystem::exists(dir / "torch" / "extension.h");
  };
  if (present()) return {dir, "used", nullptr};
  if (std::filesystem::exists(failed)) return {{}, "not used: its build failed before (" + failed.string() + ")", nullptr};

  const int lock = ::open((pch_root / (key + ".lock")).c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) != 0) {
    if (lock >= 0) ::close(lock);
    return {{}, "not used: another build is making it", nullptr};
  }
  PrecompiledHeader result{dir, "used", nullptr};  // made by another build since the look above
  if (!present()) {
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
      result = {dir, "built", made.times()};
    } else {
      remove_tree(made_here);
      std::filesystem::create_directories(dir);
      std::ofstream(failed) << made.command << "\n"
                            << (made.ok ? "could not move it into place: " + not_moved.message() : made.output);
      result = {{}, "not used: its build failed (" + failed.string() + ")", made.times()};
    }
  }
  ::flock(lock, LOCK_UN);
  ::close(lock);
  return result;
}

struct Step {
  Ran compiled;
  PrecompiledHeader pch;  // the binding file's: its note says what became of it
};

// Compiles one source as ninja's compile or cuda_compile rule would (without a dependency file).
Step compile_step(const nlohmann::json& plan, const nlohmann::json& step, const std::filesystem::path& directory,
                  const std::filesystem::path& pch_root) {
  const std::string source = step.at("source"), object = step.at("object");
  const auto io = " -c " + quoted(source) + " -o " + quoted(object);
  if (step.at("nvcc").get<bool>())
    return {run_shell(plan.at("nvcc").get<std::string>() + " " + joined(plan.at("cuda_cflags")) + io, directory), {}};
  const auto command = plan.at("cxx").get<std::string>() + " " + joined(plan.at("cflags")) + io;
  if (!begins_with_binding_include(source))
    return {run_shell(command, directory),
            {{}, "not used: " + source + " does not begin with " + kBindingInclude, nullptr}};
  if (!plan.at("own_includes").empty())
    return {run_shell(command, directory),
            {{}, "not used: the submission's own include flags (" + joined(plan.at("own_includes")) +
                     ") could bring headers that torch/extension.h includes",
             nullptr}};
  auto pch = precompiled_header(plan, pch_root);
  if (pch.include_dir.empty()) return {run_shell(command, directory), pch};
  // Searched after the user's -I directories and before torch's -isystem ones. A header g++
  // cannot use is a warning (never an error, whatever -Werror the flags hold) that says why.
  auto ran = run_shell(command + " -I" + quoted(pch.include_dir.string()) + " -Winvalid-pch -Wno-error=invalid-pch",
                       directory);
  if (const auto at = ran.output.find("extension.h.gch: not used because"); at != std::string::npos) {
    const auto start = ran.output.rfind('\n', at) + 1;
    pch.note = "rejected by the compiler: " + ran.output.substr(start, ran.output.find('\n', at) - start);
  }
  return {ran, pch};
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
                                     const std::filesystem::path& pch_root) {
  PlannedBuildResult result;
  result.steps = nlohmann::json::object();
  // As ninja -j: one compiler at a time only when MAX_JOBS says 1 (kbench batch's build pass does).
  const char* jobs = std::getenv("MAX_JOBS");
  const auto launch = jobs && std::string(jobs) == "1" ? std::launch::deferred : std::launch::async;
  std::vector<std::future<Step>> compiles;
  for (const auto& step : plan.at("steps"))
    compiles.push_back(std::async(launch, [&, step] { return compile_step(plan, step, directory, pch_root); }));
  std::string objects;
  result.pch = "not used: no C++ file";
  for (size_t i = 0; i < compiles.size(); ++i) {
    const auto step = compiles[i].get();
    const std::string object = plan.at("steps")[i].at("object");
    result.steps[object] = step.compiled.times();
    result.commands.push_back(step.compiled.command);
    if (!step.pch.note.empty()) result.pch = step.pch.note;
    if (!step.pch.build_times.is_null()) result.steps["pch"] = step.pch.build_times;
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
