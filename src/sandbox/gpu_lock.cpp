#include "sandbox/gpu_lock.h"

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace kbench::sandbox {

std::filesystem::path gpu_lock_path(int device) {
  std::string gpu = std::to_string(device);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible && *visible) {
    std::vector<std::string> entries;
    std::istringstream list(visible);
    for (std::string entry; std::getline(list, entry, ',');) entries.push_back(entry);
    if (device >= 0 && device < static_cast<int>(entries.size())) gpu = entries[device];
  }
  for (auto& c : gpu)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  return std::filesystem::temp_directory_path() / ("kbench-gpu" + gpu + "-timing.lock");
}

}  // namespace kbench::sandbox
