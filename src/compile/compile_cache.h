// On-disk cache of NVRTC results, keyed by source, architecture, NVRTC version and options, so a
// resubmitted kernel (or the same kernel in a batch and then in `kbench eval`) compiles once.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "compile/nvrtc_compiler.h"

namespace kbench::compile {

class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  static std::string key(const std::string& source, const CompileOptions& options);
  std::optional<CompiledDevice> lookup(const std::string& key) const;
  void store(const std::string& key, const CompiledDevice& result) const;  // atomic rename

 private:
  std::filesystem::path dir_;
};

// nvrtc_compile through the cache (cache may be null: always compile).
CompiledDevice compile_device_source(const std::string& source, const std::string& file_name,
                                     const CompileOptions& options, const CompileCache* cache);

}  // namespace kbench::compile
