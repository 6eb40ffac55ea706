#include "report/printers.h"

#include <cstdio>
#include <sstream>

namespace kbench::report {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

std::string eval_summary(const nlohmann::json& r) {
  std::ostringstream out;
  const auto& p = r.value("problem", nlohmann::json::object());
  out << "level " << p.value("level", 0) << " problem " << p.value("id", 0) << " (" << p.value("name", "?")
      << ")  " << r["submission"].value("path", "") << "\n";
  out << "verdict: " << r.value("verdict", "?") << " — " << r.value("message", "") << "\n";
  if (r.contains("compile")) {
    const auto& c = r["compile"];
    out << "compile: " << (c.value("ok", false) ? "ok" : "failed") << ", " << fixed(c.value("nvrtc_ms", 0.0), 1)
        << " ms" << (c.value("from_cache", false) ? " (cached)" : "") << ", " << c.value("arch", "")
        << ", kernels:";
    for (const auto& k : c.value("kernels", nlohmann::json::array())) out << " " << k.get<std::string>();
    out << "\n";
    if (!c.value("ok", false)) out << c.value("log", "") << "\n";
  }
  if (r.contains("correctness")) {
    out << "correctness:";
    for (const auto& t : r["correctness"]["trials"])
      out << " [" << t.value("trial", 0) << " " << t.value("verdict", "") << " max_abs=" << t.value("max_abs_error", 0.0)
          << "]";
    out << "\n";
  }
  if (r.contains("timing")) {
    const auto& t = r["timing"];
    if (t.contains("candidate"))
      out << "timing: candidate " << fixed(t["candidate"].value("mean_ms", 0.0), 4) << " ms (std "
          << fixed(t["candidate"].value("std_ms", 0.0), 4) << ")";
    if (t.contains("eager"))
      out << ", eager " << fixed(t["eager"].value("mean_ms", 0.0), 4) << " ms → speedup "
          << fixed(t.value("speedup_eager", 0.0), 2) << "x";
    if (t.contains("speedup_compiled"))
      out << ", vs compiled " << fixed(t.value("speedup_compiled", 0.0), 2) << "x";
    out << "\n";
    for (const auto* who : {"candidate", "eager"})
      if (t.contains(who))
        for (const auto& w : t[who].value("warnings", nlohmann::json::array())) out << "warning (" << who << "): " << w.get<std::string>() << "\n";
  }
  return out.str();
}

}  // namespace kbench::report
