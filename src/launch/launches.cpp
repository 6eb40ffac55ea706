#include "launch/launches.h"

#include <atomic>
#include <algorithm>
#include <iterator>
#include <mutex>
#include <set>

namespace kbench::launch {
namespace {

std::atomic<int64_t> g_launches{0};
std::atomic<bool> g_skip_launches{false};
// An extension may launch from threads of its own: the addresses are guarded.
std::mutex g_mutex;
std::set<uintptr_t> g_addresses;

}  // namespace

int64_t launch_count() { return g_launches.load(); }

void reset_launch_count() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_launches = 0;
  g_addresses.clear();
}

bool storage_was_launched(const void* base, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(base);
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto first = g_addresses.lower_bound(begin);
  return first != g_addresses.end() && *first < begin + std::max<size_t>(bytes, 1);
}

void set_skip_launches(bool skip) { g_skip_launches = skip; }
bool launches_skipped() { return g_skip_launches.load(); }

void record_launch(const std::vector<uintptr_t>& addresses) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_addresses.insert(addresses.begin(), addresses.end());
  }
  ++g_launches;
}

}  // namespace kbench::launch
