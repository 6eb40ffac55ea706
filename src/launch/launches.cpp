#include "launch/launches.h"

#include <atomic>

namespace kbench::launch {
namespace {

// An extension may launch from threads of its own.
std::atomic<int64_t> g_launches{0};
std::atomic<bool> g_skip_launches{false};
std::atomic<int64_t> g_module_loads{0};

}  // namespace

int64_t launch_count() { return g_launches.load(); }
void reset_launch_count() { g_launches = 0; }

void set_skip_launches(bool skip) { g_skip_launches = skip; }
bool launches_skipped() { return g_skip_launches.load(); }

void record_launch() { ++g_launches; }

int64_t module_load_count() { return g_module_loads.load(); }
void record_module_load() { ++g_module_loads; }

}  // namespace kbench::launch
