// An exclusive lock on a file, held from construction (waiting for it) to destruction: flock(2)'s,
// so processes that share a file agree, and the kernel lets go when a holder exits, however it ends.
#pragma once

#include <filesystem>

namespace kbench::compile {

class FileLock {
 public:
  // Creates the file if needed; throws std::runtime_error where it cannot be opened or locked.
  explicit FileLock(const std::filesystem::path& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace kbench::compile
