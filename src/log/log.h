// Logging for every part, through spdlog. Kept behind this small interface in its own library
// because libtorch ships its own fmt headers, which clash with the fmt that spdlog was built with:
// no file that sees torch's include paths may include spdlog.
#pragma once

#include <string>

namespace kbench::log {

void set_verbosity(int verbosity);  // -1 errors only, 0 info, 1 debug
void debug(const std::string& message);
void info(const std::string& message);
void warn(const std::string& message);
void error(const std::string& message);

}  // namespace kbench::log
