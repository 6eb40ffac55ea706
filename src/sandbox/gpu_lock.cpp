#include "sandbox/gpu_lock.h"

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace kbench::sandbox {

namespace {

// A lock file of the GPU that `device` names once CUDA_VISIBLE_DEVICES has mapped it.
std::filesystem::path lock_file(int device, const char* kind) {
  std::string gpu = std::to_string(device);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
    std::vector<std::string> entries;
    std::istringstream list(visible);
    for (std::string entry; std::getline(list, entry, ',');) entries.push_back(entry);
    if (device >= 0 && device < static_cast<int>(entries.size())) gpu = entries[device];
  }
  for (auto& c : gpu)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  return std::filesystem::temp_directory_path() / ("kbench-gpu" + gpu + "-" + kind + ".lock");
}

}  // namespace

std::filesystem::path gpu_lock_path(int device) { return lock_file(device, "timing"); }
std::filesystem::path quiet_gpu_lock_path(int device) { return lock_file(device, "quiet"); }
std::filesystem::path quiet_gate_path(int device) { return lock_file(device, "quiet-gate"); }

QuietLock::QuietLock(int device, For holder) {
  if (holder == For::timing) {
    gate_ = compile::FileLock::shared(quiet_gate_path(device));
    quiet_.emplace(quiet_gpu_lock_path(device));
  } else {
    const compile::FileLock gate(quiet_gate_path(device));
    quiet_.emplace(quiet_gpu_lock_path(device));
  }
}

std::filesystem::path spares_lock_path(int device, long runner_pid) {
  return lock_file(device, ("spares-" + std::to_string(runner_pid)).c_str());
}

}  // namespace kbench::sandbox
