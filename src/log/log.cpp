#include "log/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace kbench::log {
namespace {

// Logs go to stderr so that stdout stays clean for --json output.
spdlog::logger& logger() {
  static auto instance = [] {
    auto l = spdlog::stderr_color_mt("kbench");
    l->set_pattern("[%H:%M:%S.%e] %^%l%$ %v");
    return l;
  }();
  return *instance;
}

}  // namespace

void set_verbosity(int v) {
  logger().set_level(v > 0 ? spdlog::level::debug : v < 0 ? spdlog::level::err : spdlog::level::info);
}
void debug(const std::string& m) { logger().debug(m); }
void info(const std::string& m) { logger().info(m); }
void warn(const std::string& m) { logger().warn(m); }
void error(const std::string& m) { logger().error(m); }

}  // namespace kbench::log
