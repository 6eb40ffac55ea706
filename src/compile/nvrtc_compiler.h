// NVRTC: device source → PTX (for signatures) and CUBIN (to load), with the full log.
#pragma once

#include <string>
#include <vector>

#include "compile/kernel_signature.h"

namespace kbench::compile {

struct CompileOptions {
  std::string arch = "sm_90a";           // a real architecture, so NVRTC emits a CUBIN
  std::vector<std::string> extra;        // user options appended after kbench's own
};

struct CompiledDevice {
  bool ok = false;
  std::string log;            // NVRTC's log, complete (warnings too)
  std::string ptx;
  std::string cubin;          // bytes
  std::vector<KernelSignature> kernels;
  std::string arch;
  std::vector<std::string> options;
  double compile_ms = 0;
  bool from_cache = false;
};

std::string nvrtc_version();                            // "13.0"
std::vector<std::string> cuda_include_dirs();          // the toolkit's headers NVRTC compiles with
std::vector<std::string> nvrtc_options(const CompileOptions& options);

// Compiles `source` (named `file_name` in diagnostics). Never throws for bad CUDA: ok=false + log.
CompiledDevice nvrtc_compile(const std::string& source, const std::string& file_name,
                             const CompileOptions& options);

}  // namespace kbench::compile
