#include "serve/source_store.h"

#include "compile/submission.h"

namespace kbench::serve {

SourceStore::SourceStore(std::filesystem::path dir) : dir_(std::move(dir)) { std::filesystem::create_directories(dir_); }

std::filesystem::path SourceStore::put(const std::string& source, bool modelnew) const {
  const auto path = dir_ / (compile::content_hash(source) + (modelnew ? ".py" : ".cu"));
  if (std::filesystem::exists(path)) return path;
  compile::write_file_atomically(path, source);  // two requests with the same source may write at once
  return path;
}

}  // namespace kbench::serve
