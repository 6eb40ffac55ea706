// Shared test fixtures: the submission table and GPU presence.
#pragma once

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "launch/cuda_driver.h"

namespace kbench::testing {

inline std::filesystem::path test_dir() { return KBENCH_TEST_DIR; }

inline nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// GPU tests call this first; the printed marker makes ctest report the test as skipped.
inline bool gpu_or_skip() {
  if (launch::device_count() > 0) return true;
  std::cout << "kbench-skip: no GPU (" << launch::query_device(0).why_absent << ")\n";
  return false;
}

}  // namespace kbench::testing
