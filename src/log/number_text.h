// Numbers in text meant for people (log lines, summaries, reports, prompts): a fixed number of
// digits after the point. Here, on the lowest floor, so that profile/ and report/ share one.
#pragma once

#include <cstdio>
#include <string>

namespace kbench::log {

inline std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace kbench::log
