// KernelBench's submission format: a Python file defining `class ModelNew(nn.Module)` whose forward
// calls CUDA that the file builds with torch.utils.cpp_extension.load_inline (KernelBench's runs name
// them level_<L>_problem_<P>_sample_<S>_kernel.py). kbench runs it in the worker's embedded Python
// (python_runtime.h): the file is imported with kbench's load_inline in torch's place, which builds
// each extension once per content in a child process (extension_build.h); ModelNew is constructed as
// KernelBench constructs it; and the checks call it through the HostProgram interface, as they call
// kbench's own format.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "compile/extension_build.h"
#include "compile/host_program.h"

namespace kbench::compile {

bool is_modelnew_file(const std::filesystem::path& path);  // a .py file

struct ModelNewOptions {
  std::filesystem::path problem_source;  // the reference problem's file: its get_init_inputs()
  std::string arch = "sm_90a";           // what the extensions are built for
  bool with_cuda = false;                // a GPU will run it: torch.cuda is set up first
  int device = 0;                        // where setup() moves ModelNew
  std::filesystem::path cache_dir;       // extensions are kept in <cache_dir>/extensions
  BuildRoute extension_build = BuildRoute::fast;  // which route builds them (extension_build.h)
  // Hears "build" when an extension starts building and "compile" when it is done: a build has a
  // time budget of its own (sandbox/worker.h).
  std::function<void(const std::string&)> on_stage;
  // kbench's count of the submission's launches (launch/launches.h): Triton's set-up launches a
  // kernel of kbench's and refuses Triton unless it was counted. Triton runs only where it is given.
  std::function<int64_t()> count_launches;
};

// What the submission did wrong: its Python failed (verdict host_error), an extension did not build
// (compile_error), or it uses a backend kbench does not run (unsupported_backend).
struct ModelNewError : std::runtime_error {
  enum class Kind { python, build, unsupported };
  ModelNewError(Kind kind, const std::string& message, std::string details)
      : std::runtime_error(message), kind(kind), details(std::move(details)) {}
  Kind kind;
  std::string details;  // the traceback, or the compiler's log
};

// Starts kbench's Python (once per process; load_modelnew does it too): import torch, and with
// `with_cuda` torch.cuda's set-up. Apart, so that its time can be told from the submission's.
// Returns where it went, in ms: {"interpreter", "torch", "support", "cuda"}.
nlohmann::json start_python(bool with_cuda);

// Imports the file and constructs ModelNew on the CPU (KernelBench's order: construct, then move to
// the GPU in setup()), seeded as the reference was. Every extension build it asked for is appended
// to `builds`, also when it throws. Throws ModelNewError for what the submission did, and
// std::runtime_error when kbench's Python cannot start. One submission per process: Python state a
// submission changes is not undone.
std::unique_ptr<HostProgram> load_modelnew(const std::filesystem::path& file, const ModelNewOptions& options,
                                           std::vector<ExtensionBuild>& builds);

// The backend a ModelNew file's imports name, from its text: "triton" where it imports Triton, else "cuda".
std::string imported_backend(const std::string& source);

// In a spare worker, before its file is known: Triton imported and its seams taken
// (triton_runtime.h), so that a Triton file's set-up is shorter. Returns "" or why Triton cannot run.
std::string start_triton_ahead(const std::filesystem::path& cache_dir);

// In a spare whose GPU is prepared ahead, before its file is known: Triton's first use of the GPU
// and kbench's own Triton kernel, launched and counted by `count_launches` (triton_runtime.h).
// Returns "" or why Triton cannot run.
std::string prepare_triton_gpu_ahead(const std::filesystem::path& cache_dir, const std::function<int64_t()>& count_launches);

// For the record, once the submission ran: Triton's set-up, compiles and their time
// (triton_runtime.h), or null where Triton was not set up in this process.
nlohmann::json triton_report();

// For kbench doctor: the Python, PyTorch and toolchain a ModelNew runs and builds with, as
// {"python", "executable", "torch", "torch_cuda", "ninja", "cuda_home"} (empty: missing). Throws
// std::runtime_error when kbench's Python cannot start.
nlohmann::json modelnew_environment();

// A batch's build pass, in a process of its own (`kbench __prebuild-modelnew`): loads the file
// without a GPU, so that its extensions are in the cache before a GPU needs them. Returns the builds
// it asked for; what fails is left for the evaluation, which reports it.
std::vector<ExtensionBuild> prebuild_modelnew(const std::filesystem::path& file, const ModelNewOptions& options);

}  // namespace kbench::compile
