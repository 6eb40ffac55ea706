// ModelNew build passes forked from one process (`kbench __build-pass-server`) that started Python and
// imported torch once, before any submission code ran. A file's build pass (sandbox/compile_ahead.h)
// then starts as a fork of it instead of a fresh `kbench __prebuild-modelnew` process, which would
// start Python and import torch again for every file: about 5 CPU s a file, 250 of the 1725 CPU s
// that 50 files took on the H200 machine. The server only forks: each pass runs in a fork of its own,
// with the environment the fresh process would have had, in a process group of its own, and ends
// after its file. Passes run side by side, as fresh processes would.
//
// The server is a child of the process that started it and dies with it (as each pass dies with the
// server); it reaps its passes, so that their CPU time counts in its own children's, and ending it
// (the destructor) adds it to its parent's.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "compile/child_process.h"

namespace kbench::compile {

class BuildPassForks {
 public:
  // Starts `executable __build-pass-server` with `environment` (that of every pass, less what a
  // pass sets itself). Where it cannot start, run() says so and the caller starts fresh processes.
  BuildPassForks(const std::string& executable, const std::vector<std::string>& environment);
  ~BuildPassForks();  // ends the server once its passes have ended, and waits for it
  BuildPassForks(const BuildPassForks&) = delete;
  BuildPassForks& operator=(const BuildPassForks&) = delete;

  // Runs a build pass with `arguments` (as `kbench __prebuild-modelnew` takes them) and
  // `environment` (its whole environment) in a fork of the server; killed, with what it started,
  // after `timeout_s` (> 0). Thread-safe. nullopt where no pass was started (the server did not
  // start, or has gone): a fresh process runs it instead.
  std::optional<ChildResult> run(const std::vector<std::string>& arguments, const std::vector<std::string>& environment,
                                 double timeout_s);

 private:
  std::mutex mutex_;  // guards socket_
  int socket_ = -1;
  pid_t pid_ = -1;
};

// The server's side, in `kbench __build-pass-server`: Python started, serves the requests that
// arrive on `socket` until it is closed, each in a fork that calls `run_pass` with the pass's
// arguments and exits with what it returns. Returns the process's exit code.
int serve_build_passes(int socket, const std::function<int(const std::vector<std::string>&)>& run_pass);

}  // namespace kbench::compile
