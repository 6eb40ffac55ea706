#include "serve/source_store.h"

#include <fstream>
#include <thread>

#include "compile/submission.h"

namespace kbench::serve {

SourceStore::SourceStore(std::filesystem::path dir) : dir_(std::move(dir)) { std::filesystem::create_directories(dir_); }

std::filesystem::path SourceStore::put(const std::string& source, bool modelnew) const {
  const auto path = dir_ / (compile::content_hash(source) + (modelnew ? ".py" : ".cu"));
  if (std::filesystem::exists(path)) return path;
  // A temporary name per thread: two requests with the same source may write at once.
  auto tmp = path;
  tmp += ".tmp" + std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(tmp, std::ios::binary);
    out << source;
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
  return path;
}

}  // namespace kbench::serve
