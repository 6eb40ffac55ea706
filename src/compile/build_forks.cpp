#include "compile/build_forks.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "compile/extension_build.h"
#include "compile/python_runtime.h"

namespace kbench::compile {
namespace {

// The parent's ends of the pipes to the copy: requests go down one, replies come up the other.
struct Copy {
  std::mutex mutex;  // one build at a time through the copy
  FILE* requests = nullptr;
  FILE* replies = nullptr;
  pid_t pid = -1;
};

Copy& the_copy() {
  static Copy copy;
  return copy;
}

std::string& refusal() {
  static std::string why = "no copy was made in this process";
  return why;
}

// One build in a fork of the copy: the environment replaced, output to a file, then the work of
// `kbench __build-extension`. Python's os.environ stays the copy's: read when the interpreter
// started, from the environment the fresh process's is made of (extension_build.cpp).
[[noreturn]] void build_in_this_fork(const nlohmann::json& message) {
  ::clearenv();
  for (const auto& entry : message.at("environment")) ::putenv(::strdup(entry.get<std::string>().c_str()));
  const int output = ::open(message.at("output").get<std::string>().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (output < 0) _exit(127);
  ::dup2(output, STDOUT_FILENO);
  ::dup2(output, STDERR_FILENO);
  ::close(output);
  std::istringstream request(message.at("request").get<std::string>());
  const int code = run_extension_build(request);
  std::fflush(nullptr);
  _exit(code);  // no teardown: as `kbench __build-extension` ends
}

// The copy: a fork per request, waited for, its status and CPU time sent back. Ends when the
// parent closes its end (or dies).
[[noreturn]] void serve_builds(FILE* requests, FILE* replies) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  char* line = nullptr;
  size_t capacity = 0;
  while (::getline(&line, &capacity, requests) > 0) {
    nlohmann::json reply;
    const auto message = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    const pid_t pid = message.is_discarded() ? -1 : python::fork();
    if (pid == 0) {
      std::fclose(requests);
      std::fclose(replies);
      build_in_this_fork(message);
    }
    if (pid < 0) {
      reply["error"] = message.is_discarded() ? "a malformed request" : std::string("fork: ") + std::strerror(errno);
    } else {
      int status = 0;
      struct rusage usage {};
      while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
      }
      reply = {{"status", status}, {"cpu_seconds", cpu_seconds(usage)}};
    }
    std::fprintf(replies, "%s\n", reply.dump().c_str());
    std::fflush(replies);
  }
  _exit(0);
}

std::string start_copy() {
  int down[2], up[2];
  if (::pipe2(down, O_CLOEXEC) != 0) return std::string("pipe2: ") + std::strerror(errno);
  if (::pipe2(up, O_CLOEXEC) != 0) {
    ::close(down[0]), ::close(down[1]);
    return std::string("pipe2: ") + std::strerror(errno);
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = python::fork();
  if (pid == 0) {
    ::close(down[1]), ::close(up[0]);
    serve_builds(::fdopen(down[0], "r"), ::fdopen(up[1], "w"));
  }
  ::close(down[0]), ::close(up[1]);
  if (pid < 0) {
    ::close(down[1]), ::close(up[0]);
    return std::string("fork: ") + std::strerror(errno);
  }
  auto& copy = the_copy();
  copy.requests = ::fdopen(down[1], "w");
  copy.replies = ::fdopen(up[0], "r");
  copy.pid = pid;
  return "";
}

}  // namespace

std::string start_build_forks() {
  refusal() = start_copy();
  return refusal();
}

const std::string& why_builds_start_fresh() { return refusal(); }

void stop_build_forks() {
  auto& copy = the_copy();
  const std::lock_guard<std::mutex> lock(copy.mutex);
  if (copy.requests) std::fclose(copy.requests), std::fclose(copy.replies);
  copy.requests = copy.replies = nullptr;
  if (copy.pid > 0) {
    int status = 0;
    while (::waitpid(copy.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  copy.pid = -1;
  refusal() = "the copy that forked builds was stopped";
}

std::optional<ChildResult> run_forked_build(const nlohmann::json& request, const std::vector<std::string>& environment) {
  auto& copy = the_copy();
  const std::lock_guard<std::mutex> one_at_a_time(copy.mutex);
  if (!copy.requests) return std::nullopt;
  const auto output = std::filesystem::path(request.at("directory").get<std::string>()).concat(".output");
  std::string text;
  try {
    text = nlohmann::json{{"request", request.dump()}, {"environment", environment}, {"output", output.string()}}.dump();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // an environment entry that is not UTF-8: a fresh process takes it as it is
  }
  ::signal(SIGPIPE, SIG_IGN);  // a copy that has gone is a failed write, not the end of this process
  char* line = nullptr;
  size_t capacity = 0;
  const bool sent = std::fprintf(copy.requests, "%s\n", text.c_str()) > 0 && std::fflush(copy.requests) == 0;
  const auto reply = sent && ::getline(&line, &capacity, copy.replies) > 0
                         ? nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false)
                         : nlohmann::json();
  std::free(line);
  ChildResult result;
  if (!reply.is_object() || !reply.contains("status")) {
    std::fclose(copy.requests), std::fclose(copy.replies);  // gone or failing: fresh processes from now on
    copy.requests = copy.replies = nullptr;
    refusal() = "the copy that forked builds has gone";  // stop_build_forks reaps it
    std::error_code ignored;
    std::filesystem::remove(output, ignored);
    if (!sent || reply.contains("error")) return std::nullopt;  // no build started: a fresh process builds it
    // A build may have started and may still run: this one fails, uncached, and a later evaluation
    // builds again.
    result.output = "the copy of the build pass that forks builds ended without a reply";
    return result;
  }
  result.status = reply.at("status");
  result.cpu_seconds = reply.at("cpu_seconds");
  std::ifstream captured(output);
  result.output.assign(std::istreambuf_iterator<char>(captured), {});
  std::error_code ignored;
  std::filesystem::remove(output, ignored);
  return result;
}

}  // namespace kbench::compile
