// Shared test fixtures: the submission table and GPU presence.
#pragma once

#include <ftw.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "launch/cuda_driver.h"

namespace kbench::testing {

// This source tree's tests/ and the kbench executable built with the tests (tests/test_paths.cpp).
std::filesystem::path test_dir();
std::string kbench_exe();

// Sets (or, with nullopt, unsets) an environment variable for a scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : ScopedEnv(std::move(name)) {
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  // Leaves the variable as it is: what the scope sets it to is undone at its end.
  explicit ScopedEnv(std::string name) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

inline nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Removes a directory tree (no error if it is absent). Not std::filesystem::remove_all: PyTorch
// 2.11's libtorch.so exports a copy of it that the dynamic linker binds in its place, and that copy
// calls a null pointer on a directory with entries (the GPU tests crashed there on the H100 machine
// whenever a test directory was left from an earlier run).
inline void remove_tree(const std::filesystem::path& dir) {
  ::nftw(
      dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return std::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

// This test process's own directory under the temporary one, removed when the tests end (main.cpp):
// two test runs on one machine (CI beside a developer's) never share or remove each other's files.
inline std::filesystem::path scratch_root() {
  return std::filesystem::temp_directory_path() / ("kbench-tests-" + std::to_string(::getpid()));
}

// A fresh, empty directory `name` under scratch_root().
inline std::filesystem::path scratch_dir(const std::string& name) {
  const auto dir = scratch_root() / name;
  remove_tree(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs the kbench executable with `args` and returns what it printed on stdout.
inline std::string run_kbench(const std::string& args) {
  std::string out;
  std::FILE* pipe = ::popen((kbench_exe() + " " + args).c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + kbench_exe());
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  ::pclose(pipe);
  return out;
}

// A shell script standing in for `kbench __worker` (requests on stdin, stages and records on fd 3).
// `next_request` reads a request into $line and its reply token into $token; `reply JSON` writes a
// line on fd 3 with the token added, as the real worker does (sandbox/worker.h). It answers a
// ModelNew spare's GPU preparation itself, with $prepare_reply (default: skipped, as without a GPU)
// after $prepare_delay seconds where the body sets them, and appends that request to the file
// $prepare_log where the body sets one.
inline std::string fake_worker(const std::string& name, const std::string& body) {
  const auto path = std::filesystem::temp_directory_path() / ("kbench-fake-" + name + ".sh");
  std::ofstream(path) << "#!/bin/sh\n"
                      << R"sh(prepare_reply='{"gpu_prepared":{"skipped":"a fake worker"}}'
next_request() {
  while IFS= read -r line; do
    case "$line" in
      *'"prepare_gpu_ahead"'*) [ -z "$prepare_log" ] || printf '%s\n' "$line" >>"$prepare_log"
                               [ -z "$prepare_delay" ] || sleep "$prepare_delay"
                               printf '%s\n' "$prepare_reply" >&3 ;;
      *) token=$(printf '%s' "$line" | sed -n 's/.*"reply_token":"\([0-9a-f]*\)".*/\1/p'); return 0 ;;
    esac
  done
  return 1
}
)sh"
                      << "reply() { printf '%s\\n' \"$1\" | sed \"s/}\\$/,\\\"token\\\":\\\"$token\\\"}/\" >&3; }\n"
                      << body << "\n";
  using std::filesystem::perms;
  std::filesystem::permissions(path, perms::owner_all | perms::group_read | perms::group_exec | perms::others_read |
                                         perms::others_exec);
  return path.string();
}

// A fixture table's expected verdict: one name, or a list of which any will do.
inline bool verdict_expected(const nlohmann::json& expected, const std::string& got) {
  if (!expected.is_array()) return expected == got;
  for (const auto& e : expected)
    if (e == got) return true;
  return false;
}

// GPU tests call this first; the printed marker makes ctest report the test as skipped.
inline bool gpu_or_skip() {
  if (launch::device_count() > 0) return true;
  std::cout << "kbench-skip: no GPU (" << launch::query_device(0).why_absent << ")\n";
  return false;
}

}  // namespace kbench::testing
