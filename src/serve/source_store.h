// Submissions that arrive as text, kept by content under <cache>/serve/<sha1>.cu (a ModelNew:
// .py): the worker reads a file as `kbench eval` does, and a resubmitted source is the same file with
// the same compile-cache entry.
#pragma once

#include <filesystem>
#include <string>

namespace kbench::serve {

class SourceStore {
 public:
  explicit SourceStore(std::filesystem::path dir);  // created if missing
  // The file that holds `source` (written once, atomically); throws std::runtime_error when it
  // cannot be written.
  std::filesystem::path put(const std::string& source, bool modelnew) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kbench::serve
