// An exclusive lock on a file, held from construction (waiting for it) to destruction: flock(2)'s,
// so processes that share a file agree, and the kernel lets go when a holder exits, however it ends.
#pragma once

#include <filesystem>
#include <memory>

namespace kbench::compile {

class FileLock {
 public:
  // Creates the file if needed; throws std::runtime_error where it cannot be opened or locked.
  explicit FileLock(const std::filesystem::path& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // A shared hold of the lock, waiting while someone holds it exclusively.
  static std::unique_ptr<FileLock> shared(const std::filesystem::path& path);
  // A shared hold of the lock, taken only where nobody holds it exclusively now (null then): for
  // work that may run beside others' like it, never beside the exclusive holder's.
  static std::unique_ptr<FileLock> try_shared(const std::filesystem::path& path);
  // The exclusive hold, taken only where nobody holds the lock now (null then): for a caller that
  // decides for itself how long to wait, and whether to.
  static std::unique_ptr<FileLock> try_exclusive(const std::filesystem::path& path);

 private:
  FileLock(const std::filesystem::path& path, int operation);  // flock(2)'s; fd_ stays -1 where LOCK_NB found it held
  static std::unique_ptr<FileLock> try_lock(const std::filesystem::path& path, int operation);  // null where held
  int fd_ = -1;
};

}  // namespace kbench::compile
