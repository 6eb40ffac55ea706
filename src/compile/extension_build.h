// The C++/CUDA extension of a ModelNew submission: what its load_inline call asked for, built once
// per content into $KBENCH_CACHE/extensions/<key>/ in a child process (this executable's hidden
// `__build-extension` command), and linked so that kbench sees the extension's kernel launches
// (launch/extension_launches.cpp). A failed build is cached too, with the compiler's log.
//
// Two routes. The fast one (the default): PyTorch's own torch.utils.cpp_extension plans the build
// (sources, compilers, flags) and kbench runs it (extension_compile.h). The pytorch one: PyTorch's
// load_inline builds, ninja and all; it runs where the fast one cannot take the build (the record
// says why) or when $KBENCH_EXTENSION_BUILD=pytorch asks for it.
#pragma once

#include <filesystem>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::compile {

// load_inline's arguments that decide the library.
struct ExtensionSpec {
  std::string name;  // the submission's name for it (the cache builds it under a name of its own)
  std::vector<std::string> cpp_sources, cuda_sources, functions;
  std::vector<std::string> extra_cflags, extra_cuda_cflags, extra_ldflags, extra_include_paths;
  std::optional<bool> with_cuda;  // unset: when there are CUDA sources
  bool with_pytorch_error_handling = true;
  bool no_implicit_headers = false;  // PyTorch 2's: no #include <torch/extension.h> or <torch/types.h> added

  nlohmann::json to_json() const;
  static ExtensionSpec from_json(const nlohmann::json& j);  // throws on a malformed spec
};

enum class BuildRoute { fast, pytorch };
const char* route_name(BuildRoute route);
// $KBENCH_EXTENSION_BUILD: "fast" (the default when unset) or "pytorch"; throws std::runtime_error
// on anything else.
BuildRoute requested_build_route();
// $KBENCH_EXTENSION_HEADERS: "light" (the default when unset: the fast route compiles against the
// narrowest headers, then the lighter ones, before PyTorch's own) or "full" (PyTorch's own alone,
// e.g. to compare); throws std::runtime_error on anything else. Part of the cache key when "full".
bool light_headers_requested();

struct ExtensionBuild {
  std::string name;  // the submission's
  std::string key;   // the cache's
  bool ok = false;
  bool from_cache = false;
  double seconds = 0;             // the build's wall time (when it was built)
  double cpu_seconds = 0;         // its CPU time: the build process and the compilers it ran
  double waited_seconds = 0;      // how long it waited for another process building it into the cache
  std::string log;                // the compiler's output, when the build failed
  std::string module;             // the Python module it was built as
  std::filesystem::path library;  // the .so, when it built
  std::string route;              // "fast" or "pytorch": which built it
  std::string why;                // why the pytorch route built it
  std::vector<std::string> adaptations;  // what kbench changed in PyTorch's plan to build here, and why
  std::string pch;                // the fast route's precompiled torch/extension.h: "used", "built", or why not
  std::string headers;            // the fast route's: "narrow", "light" (and why), or "full: " and why (extension_compile.h)
  nlohmann::json steps;           // wall and CPU seconds per step ("plan", headers made, each object, "link")
  // Where it ran: "fork" (of the build pass's process, torch already imported: build_forks.h) or
  // "fresh: " and why (a `kbench __build-extension` process of its own).
  std::string process;

  nlohmann::json to_json() const;
};

// The CUDA runtime and driver entry points that launch kernels (the CUDA 13 `<<<...>>>` launch calls
// __cudaLaunchKernel). An extension's calls of them go to kbench's wrappers, which the kbench
// executable exports (launch/extension_launches.cpp), through these linker flags.
const std::vector<std::string>& wrapped_launch_functions();

// The compute functions of cuBLAS, cuBLASLt and cuDNN whose calls go to kbench's wrappers
// (launch/library_calls.h), through the same kind of linker flags: their results are the library's.
const std::vector<std::string>& wrapped_library_functions();
std::vector<std::string> extension_link_flags();

// A GPU architecture as TORCH_CUDA_ARCH_LIST writes it: "sm_90a" -> "9.0a", "sm_120" -> "12.0".
std::string torch_arch_list(const std::string& sm_arch);

class ExtensionCache {
 public:
  explicit ExtensionCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // The spec, the GPU architecture, the route asked for and the toolchain (PyTorch, CUDA and Python
  // versions, kbench's link flags) decide the library; the submission's name for it does not.
  static std::string key(const ExtensionSpec& spec, const std::string& arch, BuildRoute route);
  std::optional<ExtensionBuild> lookup(const std::string& key) const;  // a build that ended, either way
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// The extension from the cache, or built now in a child process. Of processes that want the same
// extension at once (sharing the cache on one machine or over a network file system that supports
// flock), one builds it and the others wait for its result.
ExtensionBuild build_extension(const ExtensionSpec& spec, const std::string& arch, const ExtensionCache& cache,
                               BuildRoute route);

// The child's side: reads the request that build_extension writes, builds, stores the result in the
// request's directory. Returns the process's exit code.
int run_extension_build(std::istream& request);

// The executable whose `__build-extension` command builds (default: this process's own; tests,
// which run in another executable, name kbench's).
void set_build_executable(const std::string& path);

}  // namespace kbench::compile
