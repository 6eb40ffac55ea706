// A child process run to completion: its arguments, environment and standard input given, its
// standard output and error captured together. For the builds of ModelNew extensions and the build
// pass of `kbench batch`, whose children run compilers.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <sys/resource.h>

namespace kbench::compile {

struct ChildOptions {
  std::vector<std::string> environment;  // "NAME=value" entries: the child's whole environment
  std::string input;                     // written to its standard input, which is then closed
  double timeout_s = 0;                  // > 0: killed after this long
  // A process group of its own, so that a timeout kills what it started too (compilers). Without
  // one it stays in the caller's group, and dies with it when the caller's group is killed.
  bool own_process_group = false;
  std::string working_directory;  // empty: the caller's
  // Called with each line of output as it comes (without its newline), for progress; the output is
  // kept whole in the result all the same.
  std::function<void(const std::string& line)> on_line;
};

struct ChildResult {
  int status = -1;         // as waitpid reports it
  bool timed_out = false;
  std::string output;      // standard output and error, interleaved
  double cpu_seconds = 0;  // user and system time of the child and of the processes it waited for
  bool exited_cleanly() const;  // exit code 0
};

// Throws std::runtime_error only when the process cannot be started.
ChildResult run_child(const std::string& executable, const std::vector<std::string>& arguments,
                      const ChildOptions& options);

// User and system time of a getrusage or wait4 report, in seconds.
double cpu_seconds(const struct rusage& usage);

// Waits until process `pid` (any process, not only a child) has ended, at most `timeout_s`: true
// once it has (a zombie has ended), or when there is no such process.
bool wait_for_end(int pid, double timeout_s);

// This process's environment, as "NAME=value" entries (what ChildOptions::environment takes).
std::vector<std::string> current_environment();

// This process's executable (/proc/self/exe).
std::string this_executable();

}  // namespace kbench::compile
