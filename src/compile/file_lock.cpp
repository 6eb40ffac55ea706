#include "compile/file_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>

namespace kbench::compile {

FileLock::FileLock(const std::filesystem::path& path) {
  fd_ = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
  if (fd_ < 0) throw std::runtime_error("cannot open the lock file " + path.string() + ": " + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd_);
    throw std::runtime_error("cannot lock " + path.string() + ": " + std::strerror(error));
  }
}

FileLock::~FileLock() { ::close(fd_); }  // closing lets go of the lock

}  // namespace kbench::compile
