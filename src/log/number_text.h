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

// Bytes in MiB: one digit after the point below 10 GiB, none above.
inline std::string mib(long long bytes) {
  return fixed(static_cast<double>(bytes) / (1 << 20), bytes >= (10LL << 30) ? 0 : 1) + " MiB";
}

}  // namespace kbench::log
