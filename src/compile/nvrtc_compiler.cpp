#include "compile/nvrtc_compiler.h"

#include <chrono>
#include <memory>
#include <stdexcept>

#include <nvrtc.h>

#include "compile/host_headers.h"

namespace kbench::compile {
namespace {

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using ProgramHandle = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

void check(nvrtcResult result, const char* what) {
  if (result != NVRTC_SUCCESS) throw std::runtime_error(std::string(what) + ": " + nvrtcGetErrorString(result));
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> cuda_include_dirs() {
  const std::string include = KBENCH_CUDA_INCLUDE_DIR;
  // CUDA 13 keeps the CCCL headers (cuda/, cub/, thrust/) in their own folder.
  return {include, include + "/cccl"};
}

std::vector<std::string> nvrtc_options(const CompileOptions& options) {
  std::vector<std::string> opts = {"--gpu-architecture=" + options.arch, "--std=c++17", "--generate-line-info",
                                   "-default-device",
                                   std::string("--pre-include=") + kPreludeHeader};
  for (const auto& dir : cuda_include_dirs()) opts.push_back("--include-path=" + dir);
  opts.insert(opts.end(), options.extra.begin(), options.extra.end());
  return opts;
}

CompiledDevice nvrtc_compile(const std::string& source, const std::string& file_name,
                             const CompileOptions& options) {
  CompiledDevice out;
  out.arch = options.arch;
  out.options = nvrtc_options(options);
  const auto start = std::chrono::steady_clock::now();

  out.log = check_includes(source, cuda_include_dirs());
  if (!out.log.empty()) {
    out.log = file_name + ": " + out.log;
    return out;
  }
  std::vector<const char*> header_texts, header_names;
  for (const auto& h : host_compatibility_headers()) header_texts.push_back(h.text.c_str()), header_names.push_back(h.name.c_str());
  nvrtcProgram raw = nullptr;
  check(nvrtcCreateProgram(&raw, source.c_str(), file_name.c_str(), static_cast<int>(header_texts.size()),
                           header_texts.data(), header_names.data()),
        "nvrtcCreateProgram");
  ProgramHandle program(raw);
  std::vector<const char*> argv;
  for (const auto& o : out.options) argv.push_back(o.c_str());
  const nvrtcResult result = nvrtcCompileProgram(raw, static_cast<int>(argv.size()), argv.data());

  size_t log_size = 0;
  check(nvrtcGetProgramLogSize(raw, &log_size), "nvrtcGetProgramLogSize");
  out.log.resize(log_size);
  check(nvrtcGetProgramLog(raw, out.log.data()), "nvrtcGetProgramLog");
  while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();

  if (result == NVRTC_SUCCESS) {
    size_t ptx_size = 0, cubin_size = 0;
    check(nvrtcGetPTXSize(raw, &ptx_size), "nvrtcGetPTXSize");
    out.ptx.resize(ptx_size);
    check(nvrtcGetPTX(raw, out.ptx.data()), "nvrtcGetPTX");
    check(nvrtcGetCUBINSize(raw, &cubin_size), "nvrtcGetCUBINSize");
    out.cubin.resize(cubin_size);
    check(nvrtcGetCUBIN(raw, out.cubin.data()), "nvrtcGetCUBIN");
    out.kernels = read_kernel_signatures(out.ptx);
    out.ok = true;
  } else if (out.log.empty()) {
    out.log = nvrtcGetErrorString(result);
  }
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace kbench::compile
