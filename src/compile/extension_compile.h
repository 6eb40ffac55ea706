// kbench's own run of an extension build that PyTorch planned (the fast path of extension_build.h).
// torch.utils.cpp_extension.load_inline decides the sources, the compilers and every flag, and writes
// main.cpp, cuda.cu and build.ninja as it always does (modelnew_support.py's build_plan stops it
// there); kbench then runs the same compile and link commands ninja would run, with three
// differences that leave the kernels as they are:
//  - each file compiles first against the narrowest headers (torch/types.h and torch/extension.h
//    made of ATen's Tensor, its operators and the per-operator headers load_inline sources call
//    most), then against a lighter torch/extension.h made of PyTorch's own narrower headers
//    (torch/types.h; for C++ files also pybind11's casters), both in $KBENCH_CACHE/extension-headers,
//    and last against PyTorch's own, each after a compiler error in the one before. Not where the
//    submission names include directories of its own.
//  - the binding file's `#include <torch/extension.h>` comes from a precompiled header, built once
//    per compiler, flags and header into $KBENCH_CACHE/extension-pch (g++ looks for
//    torch/extension.h.gch in an include directory before torch/extension.h; a header it cannot use,
//    it says so and parses the header as usual).
//  - the C++ and CUDA files compile side by side (one after the other with MAX_JOBS=1, as ninja's
//    -j1), with no dependency files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::compile {

struct PlannedBuildResult {
  bool ok = false;
  std::string log;       // the failed command and the compiler's output, as ninja prints them
  nlohmann::json steps;  // per step (each object, "link", headers made, failed tries): {"wall_s", "cpu_s"}
  std::string pch;       // what became of the precompiled header: "used", "built", or why not
  // The widest headers a file needed: "narrow" (every file compiled against the narrowest), "light"
  // (and why the narrowest failed), or "full: " and why.
  std::string headers;
  std::vector<std::string> commands;  // the compile and link commands run, in order (shell, in `directory`)
};

// The caches a build shares with others (precompiled headers, the narrow and lighter headers'
// directories), and whether it tries those before PyTorch's own.
struct BuildCaches {
  std::filesystem::path pch_root, headers_root;
  bool try_light_headers = true;
};

// Runs `plan` (build_plan's answer) in `directory`, where torch wrote the sources.
PlannedBuildResult run_planned_build(const nlohmann::json& plan, const std::filesystem::path& directory,
                                     const BuildCaches& caches);

// Removes a directory tree. Not std::filesystem::remove_all: PyTorch 2.11's libtorch.so exports a
// copy of it that the dynamic linker binds in its place, and that copy crashes on a directory with
// entries.
void remove_tree(const std::filesystem::path& dir);

}  // namespace kbench::compile
