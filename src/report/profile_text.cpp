#include "report/profile_text.h"

#include <cstdio>
#include <sstream>

#include "log/number_text.h"

namespace kbench::report {
namespace {

using kbench::log::fixed;

std::string percent(double share) { return fixed(100 * share, 1) + "%"; }

std::string bytes(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4) b /= 1000, ++u;
  return fixed(b, 1) + " " + units[u];
}

std::string rate(double per_s, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  while (per_s >= 1000 && p < 5) per_s /= 1000, ++p;
  return fixed(per_s, 1) + " " + prefixes[p] + unit;
}

std::string plural(int n, const char* one) { return std::to_string(n) + " " + one + (n == 1 ? "" : "s"); }

void candidate_lines(std::ostringstream& s, const nlohmann::json& c, size_t max_rows) {
  const double forward = c.value("forward_ms", 0.0);
  s << "- your forward: " << fixed(forward, 4) << " ms of GPU work (timed mean " << fixed(c.value("timed_mean_ms", 0.0), 4)
    << " ms";
  if (c.value("launch_overhead_ms", 0.0) > 0.05 * c.value("timed_mean_ms", 0.0))
    s << ": " << fixed(c.value("launch_overhead_ms", 0.0), 4) << " ms of it is the host's launch gaps";
  s << "); in your kernels " << fixed(c.value("kernels_ms", 0.0), 4) << " ms, in PyTorch ops "
    << fixed(c.value("torch_ops_ms", 0.0), 4) << " ms\n";
  const auto kernels = c.value("kernels", nlohmann::json::array());
  if (!kernels.empty()) s << "- your kernels, slowest first:\n";
  for (size_t i = 0; i < kernels.size() && i < max_rows; ++i) {
    const auto& k = kernels[i];
    s << "  - " << k.value("kernel", "?") << ": " << plural(k.value("launches", 0), "launch") << ", "
      << fixed(k.value("gpu_ms", 0.0), 4) << " ms (" << percent(k.value("share", 0.0)) << "); "
      << k.value("grid_blocks", 0) << " blocks of " << k.value("block_threads", 0) << " threads, "
      << k.value("registers_per_thread", 0) << " registers/thread, " << k.value("shared_bytes_per_block", 0)
      << " B shared/block, theoretical occupancy " << fixed(100 * k.value("occupancy", 0.0), 0) << "% (limited by "
      << k.value("limited_by", "?") << ")";
    if (k.contains("ncu")) {
      const auto& n = k["ncu"];
      s << "; ncu: SM " << fixed(n.value("sm_throughput_pct", 0.0), 0) << "%, DRAM " << fixed(n.value("dram_throughput_pct", 0.0), 0)
        << "%, achieved occupancy " << fixed(n.value("achieved_occupancy_pct", 0.0), 0) << "%, L2 hits "
        << fixed(n.value("l2_hit_rate_pct", 0.0), 0) << "%";
    }
    s << "\n    bound: " << k.value("bound", "?") << "\n";
  }
  if (kernels.size() > max_rows) s << "  - (" << kernels.size() - max_rows << " more)\n";
  const auto ops = c.value("torch_ops_summary", nlohmann::json::array());
  size_t shown = 0;
  for (const auto& o : ops) {
    if (o.value("gpu_ms", 0.0) < 0.001 * forward || shown == max_rows) continue;  // allocation and views take no GPU time
    s << (shown++ == 0 ? "- PyTorch ops in your forward:" : ",") << " " << o.value("op", "?") << " x" << o.value("calls", 0)
      << " " << fixed(o.value("gpu_ms", 0.0), 4) << " ms (" << percent(o.value("share", 0.0)) << ")";
  }
  if (shown) s << "\n";
}

void reference_lines(std::ostringstream& s, const nlohmann::json& r, size_t max_rows) {
  if (r.contains("unavailable") || r.contains("error")) {
    s << "- the reference's breakdown: unavailable (" << r.value("unavailable", r.value("error", "")) << ")\n";
    return;
  }
  s << "- the reference (PyTorch eager), " << fixed(r.value("gpu_ms", 0.0), 4) << " ms of GPU work, by operator:\n";
  const auto ops = r.value("ops", nlohmann::json::array());
  for (size_t i = 0; i < ops.size() && i < max_rows; ++i) {
    const auto& o = ops[i];
    s << "  - " << o.value("op", "?") << ": " << fixed(o.value("gpu_ms", 0.0), 4) << " ms (" << percent(o.value("share", 0.0)) << ")";
    const auto ks = o.value("kernels", nlohmann::json::array());
    if (!ks.empty()) s << ", mostly " << short_kernel_name(ks[0].value("name", "")) << " x" << ks[0].value("launches", 0);
    s << "\n";
  }
  if (ops.size() > max_rows) s << "  - (" << ops.size() - max_rows << " more operators)\n";
}

void roofline_lines(std::ostringstream& s, const nlohmann::json& r) {
  if (!r.value("floor_ms", nlohmann::json()).is_null()) {
    s << "- memory: the problem's inputs and outputs are " << bytes(r.value("bytes", 0.0)) << ", "
      << fixed(r.value("floor_ms", 0.0), 4) << " ms at peak bandwidth (" << rate(r.value("peak_bytes_per_s", 0.0), "B/s") << ")";
    if (r.contains("candidate"))
      s << "; you take " << fixed(r["candidate"].value("times_floor", 0.0), 2) << "x that ("
        << percent(r["candidate"].value("bandwidth_fraction", 0.0)) << " of peak)";
    if (r.contains("reference")) s << ", the reference " << fixed(r["reference"].value("times_floor", 0.0), 2) << "x";
    s << "\n";
  }
  if (!r.value("flops", nlohmann::json()).is_null()) {
    s << "- compute: " << rate(r.value("flops", 0.0), "FLOP") << " per call";
    if (r.contains("candidate"))
      s << "; you reach " << rate(r["candidate"].value("flops_per_s", 0.0), "FLOP/s");
    if (r.contains("candidate") && r["candidate"].contains("flops_fraction"))
      s << " (" << percent(r["candidate"].value("flops_fraction", 0.0)) << " of the FP32 peak, "
        << rate(r.value("peak_flops_per_s", 0.0), "FLOP/s") << ")";
    if (r.contains("reference")) s << ", the reference " << rate(r["reference"].value("flops_per_s", 0.0), "FLOP/s");
    s << "\n";
  }
}

}  // namespace

std::string short_kernel_name(const std::string& name, size_t chars) {
  std::string n = name.rfind("void ", 0) == 0 ? name.substr(5) : name;
  // The parameter list is the last top-level parenthesis; templates may hold parentheses too.
  int depth = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    if (n[i] == '<') ++depth;
    else if (n[i] == '>') --depth;
    else if (n[i] == '(' && depth == 0 && i > 0) {
      n = n.substr(0, i);
      break;
    }
  }
  return n.size() > chars ? n.substr(0, chars) + "..." : n;
}

std::string profile_text(const nlohmann::json& profile, size_t max_rows) {
  std::ostringstream s;
  if (profile.contains("error")) return "Profile: failed (" + profile.value("error", "") + ")\n";
  if (profile.contains("skipped")) s << "Profile: skipped (" << profile.value("skipped", "") << ")\n";
  if (profile.contains("candidate")) {
    s << "Where the time goes (one more call of each, GPU times; " << profile["candidate"].value("stream", "") << "):\n";
  }
  if (profile.contains("candidate")) candidate_lines(s, profile["candidate"], max_rows);
  if (profile.contains("reference")) reference_lines(s, profile["reference"], max_rows);
  if (profile.contains("roofline")) roofline_lines(s, profile["roofline"]);
  if (profile.contains("ncu")) {
    const auto& n = profile["ncu"];
    if (n.contains("unavailable")) s << "- Nsight Compute: unavailable: " << n.value("unavailable", "") << "\n";
    else if (n.contains("skipped")) s << "- Nsight Compute: skipped: " << n.value("skipped", "") << "\n";
    else if (n.contains("error")) s << "- Nsight Compute: failed: " << n.value("error", "").substr(0, 300) << "\n";
  }
  return s.str();
}

}  // namespace kbench::report
