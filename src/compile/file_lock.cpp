#include "compile/file_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>

namespace kbench::compile {

FileLock::FileLock(const std::filesystem::path& path) : FileLock(path, LOCK_EX) {}

FileLock::FileLock(const std::filesystem::path& path, int operation) {
  const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
  if (fd < 0) throw std::runtime_error("cannot open the lock file " + path.string() + ": " + std::strerror(errno));
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK && (operation & LOCK_NB)) return;
    throw std::runtime_error("cannot lock " + path.string() + ": " + std::strerror(error));
  }
  fd_ = fd;
}

std::unique_ptr<FileLock> FileLock::try_lock(const std::filesystem::path& path, int operation) {
  std::unique_ptr<FileLock> lock(new FileLock(path, operation | LOCK_NB));
  if (lock->fd_ < 0) lock.reset();
  return lock;
}

std::unique_ptr<FileLock> FileLock::shared(const std::filesystem::path& path) {
  return std::unique_ptr<FileLock>(new FileLock(path, LOCK_SH));
}

std::unique_ptr<FileLock> FileLock::try_shared(const std::filesystem::path& path) { return try_lock(path, LOCK_SH); }

std::unique_ptr<FileLock> FileLock::try_exclusive(const std::filesystem::path& path) { return try_lock(path, LOCK_EX); }

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing lets go of the lock
}

}  // namespace kbench::compile
