#include "compile/submission_threads.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <sys/stat.h>

#include "compile/python_runtime.h"

namespace kbench::compile {
namespace {

using FileId = std::pair<dev_t, ino_t>;

std::mutex& libraries_mutex() {
  static std::mutex m;
  return m;
}
std::set<FileId>& libraries() {
  static std::set<FileId> files;
  return files;
}

bool file_id(const char* path, FileId& id) {
  struct stat st {};
  if (!path || ::stat(path, &st) != 0) return false;
  id = {st.st_dev, st.st_ino};
  return true;
}

std::atomic<int> g_running{0};
constexpr int kEndingMs = 100;  // how long a thread still running after a call may take to end
thread_local bool t_submission_thread = false;

// The C and C++ runtimes (and kbench's executable, where this code is): the frames that start a
// thread for whoever called them.
bool is_runtime(const std::string& file) {
  const auto name = file.substr(file.rfind('/') + 1);
  for (const char* runtime : {"libc.so", "libstdc++.so", "libpthread.so", "libgcc_s.so"})
    if (name.rfind(runtime, 0) == 0) return true;
  return false;
}

bool created_by_submission() {
  if (t_submission_thread) return true;
  {
    std::lock_guard<std::mutex> lock(libraries_mutex());
    if (libraries().empty()) return false;
  }
  void* frames[64];
  const int n = ::backtrace(frames, 64);
  Dl_info self{};
  ::dladdr(reinterpret_cast<void*>(&created_by_submission), &self);
  for (int i = 0; i < n; ++i) {
    Dl_info info{};
    if (!::dladdr(frames[i], &info) || !info.dli_fname) continue;
    if (info.dli_fbase == self.dli_fbase || is_runtime(info.dli_fname)) continue;
    FileId id;
    if (!file_id(info.dli_fname, id)) return false;
    std::lock_guard<std::mutex> lock(libraries_mutex());
    return libraries().count(id) > 0;
  }
  return false;
}

struct Start {
  void* (*routine)(void*);
  void* argument;
};

// Counts the thread as running until it ends (returning, pthread_exit and cancellation unwind
// through it alike).
struct Running {
  Running() { t_submission_thread = true; }
  ~Running() { --g_running; }
};

void* submission_thread_main(void* p) {
  const std::unique_ptr<Start> start(static_cast<Start*>(p));
  Running running;
  return start->routine(start->argument);
}

using CreateThread = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

CreateThread c_library_create() {
  static const CreateThread real = [] {
    // The version glibc 2.34 and later define it with; older ones have only the default.
    auto f = reinterpret_cast<CreateThread>(::dlvsym(RTLD_NEXT, "pthread_create", "GLIBC_2.34"));
    return f ? f : reinterpret_cast<CreateThread>(::dlsym(RTLD_NEXT, "pthread_create"));
  }();
  return real;
}

}  // namespace

void add_submission_library(const std::string& path) {
  FileId id;
  if (!file_id(path.c_str(), id)) return;
  std::lock_guard<std::mutex> lock(libraries_mutex());
  libraries().insert(id);
}

bool on_submission_thread() { return t_submission_thread; }

int submission_threads_running() { return g_running.load(); }

std::string submission_threads_left(const std::string& after) {
  // A thread that handed its result over (a promise, a condition variable) ends a moment later.
  for (int waited_ms = 0; submission_threads_running() > 0 && waited_ms < kEndingMs; ++waited_ms)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const int running = submission_threads_running();
  if (running == 0) return "";
  return std::string(python::kRefusedTag) + "a submission's native thread outlives " + after + " (" +
         std::to_string(running) + " still running): work it goes on queueing would run into kbench's own calls "
         "and timing";
}

}  // namespace kbench::compile

// Every thread the process starts comes here (see the header); only the submission's are marked.
extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attributes, void* (*routine)(void*),
                              void* argument) {
  using namespace kbench::compile;
  const auto create = c_library_create();
  if (!created_by_submission()) return create(thread, attributes, routine, argument);
  auto* start = new Start{routine, argument};
  ++g_running;
  const int result = create(thread, attributes, submission_thread_main, start);
  if (result != 0) {
    --g_running;
    delete start;
  }
  return result;
}
