// Triton ModelNew files (internal to compile/: modelnew.cpp uses it). A file that imports Triton
// gets Triton set up by kbench, in kbench's phase of the worker's Python (python_runtime.h), before
// any of the file's code runs:
// - Triton's environment is pinned: its kernel cache is a directory of this file's alone (keyed by
//   the file's hash), so nothing one submission writes there reaches another's kernels; the
//   variables that load kernels from elsewhere (TRITON_KERNEL_OVERRIDE, a cache manager or a remote
//   cache, the interpreter) are removed.
// - kbench takes Triton's three seams that would start processes or write files: the C stubs
//   (launcher and cuda_utils) are built by kbench, into a cache only kbench writes, linked so that
//   their launches and module loads reach kbench's counters (launch/extension_launches.cpp); ptxas
//   is run by kbench with the arguments Triton asks for, checked; cache entries are written by
//   kbench, into the file's directory only. The audit hook goes on refusing processes and writes.
// - Triton's first use (its utilities, the ptxas version, its own key) happens now, and a kernel of
//   kbench's is launched: Triton is refused (unsupported_backend) unless kbench counted its launch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

namespace kbench::compile::triton {

// Whether a ModelNew file imports Triton (an `import triton...` or `from triton... import` line).
bool imports_triton(const std::string& source);

// What needs neither a GPU nor the file: Triton's environment pinned, Triton imported and its seams
// taken. Once per process; a spare worker does it ahead (sandbox/worker.h). Returns "" or why not.
std::string start(const std::filesystem::path& cache_dir);

// Triton's first use of the GPU and kbench's own kernel launched and counted (see above; start()
// first where it has not run): what needs the GPU but not the file, once per process. A spare whose
// GPU is prepared ahead of its request (sandbox/gpu_runner.h) does it then, and the record says so;
// prepare() does it otherwise. Returns "" or why Triton cannot run here.
std::string prepare_gpu_ahead(const std::filesystem::path& cache_dir, const std::function<int64_t()>& count_launches);

// Sets Triton up for `file` (see above; its GPU's part first where that has not run), once per process.
// Returns "" when Triton is ready, else why kbench cannot run it here (not installed, no GPU, its
// launches not seen): the file's import of triton is then refused with that reason.
// `count_launches` reads kbench's launch counter.
std::string prepare(const std::filesystem::path& file, const std::filesystem::path& cache_dir,
                    const std::function<int64_t()>& count_launches);

// Whether prepare() succeeded in this process.
bool ready();

// Whether Triton was started in this process and the submission's module holds it (the package, or
// something of it): its backend is then "triton".
bool uses_triton(const pybind11::handle& module);

// For the record: Triton's version, its set-up, its compiles and cache hits, and where their time
// went (Triton's lowering, ptxas, the stubs' C builds), in ms; null where Triton was not set up.
nlohmann::json report();

}  // namespace kbench::compile::triton
