#include "profile/breakdown.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "log/number_text.h"

namespace kbench::profile {
namespace {

constexpr size_t kKernelsPerOp = 5;    // the record keeps an operator's slowest kernels
constexpr size_t kTopKernels = 10;
constexpr size_t kKernelNameChars = 300;

double ms(uint64_t ns) { return static_cast<double>(ns) * 1e-6; }

// Operators are RecordFunction events (aten::addmm, prim::..., kbench::launch); the profiler also
// lists driver and runtime calls (cudaLaunchKernel), whose names have no namespace.
bool is_operator(const ProfiledEvent& e) { return !e.on_gpu && e.name.find("::") != std::string::npos; }

// A FLOP count that stands for the problem needs the heavy operators: a matrix product or a convolution.
bool counts_heavy_flops(const std::string& op) {
  return op.find("mm") != std::string::npos || op.find("conv") != std::string::npos;
}

void sort_by_time(nlohmann::json& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.value("gpu_ms", 0.0) > b.value("gpu_ms", 0.0);
  });
}

using kbench::log::fixed;

// The operators' events in call order per thread (the enclosing one first).
std::vector<size_t> operators_in_order(const std::vector<ProfiledEvent>& events) {
  std::vector<size_t> ops;
  for (size_t i = 0; i < events.size(); ++i)
    if (is_operator(events[i])) ops.push_back(i);
  std::sort(ops.begin(), ops.end(), [&](size_t a, size_t b) {
    const auto &x = events[a], &y = events[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return x.duration_ns > y.duration_ns;
  });
  return ops;
}

// Each operator's top-level ancestor by interval nesting: operator id -> that ancestor's event.
std::unordered_map<uint64_t, size_t> top_level_operators(const std::vector<ProfiledEvent>& events,
                                                         const std::vector<size_t>& ops) {
  std::unordered_map<uint64_t, size_t> top_of;
  std::vector<size_t> open;  // the enclosing operators of the current one
  uint64_t thread = 0;
  for (size_t i : ops) {
    const auto& e = events[i];
    if (!open.empty() && e.thread != thread) open.clear();
    thread = e.thread;
    while (!open.empty() && events[open.back()].start_ns + events[open.back()].duration_ns <= e.start_ns) open.pop_back();
    top_of[e.correlation] = open.empty() ? i : open.front();
    open.push_back(i);
  }
  return top_of;
}

// FLOPs: PyTorch's formulas, per innermost operator that has one (they never nest). Null where no
// operator with the heavy FLOPs (products, convolutions) reported any: not known.
nlohmann::json flops_of(const std::vector<ProfiledEvent>& events, const std::vector<size_t>& ops) {
  double flops = 0;
  std::vector<std::string> counted;
  bool heavy = false;
  for (size_t i : ops) {
    const auto& e = events[i];
    if (e.flops == 0) continue;
    flops += static_cast<double>(e.flops);
    heavy = heavy || counts_heavy_flops(e.name);
    if (std::find(counted.begin(), counted.end(), e.name) == counted.end()) counted.push_back(e.name);
  }
  nlohmann::json flops_entry;
  if (heavy) flops_entry = {{"count", flops}, {"from", counted}};
  return flops_entry;
}

}  // namespace

nlohmann::json summarize_reference(const std::vector<ProfiledEvent>& events) {
  const auto ops = operators_in_order(events);
  const auto top_of = top_level_operators(events, ops);

  struct OpTotal {
    uint64_t ns = 0;
    std::map<std::string, std::pair<int, uint64_t>> kernels;  // name -> launches, ns
  };
  std::map<std::string, OpTotal> per_op;
  uint64_t total_ns = 0;
  std::vector<std::pair<std::string, const ProfiledEvent*>> kernels;  // (its op, kernel)
  for (const auto& e : events) {
    if (!e.on_gpu) continue;
    const auto top = top_of.find(e.linked_correlation);
    const std::string op = top == top_of.end() ? "(no operator)" : events[top->second].name;
    auto& t = per_op[op];
    t.ns += e.duration_ns;
    auto& k = t.kernels[e.name.substr(0, kKernelNameChars)];
    ++k.first;
    k.second += e.duration_ns;
    total_ns += e.duration_ns;
    kernels.emplace_back(op, &e);
  }
  if (total_ns == 0 && kernels.empty())
    return {{"unavailable", "libtorch's profiler recorded no GPU kernels: this libtorch has no CUDA activity "
                            "(Kineto with CUPTI), or the reference ran on the CPU"},
            {"operators_seen", ops.size()}};

  const double total_ms = ms(total_ns);
  auto share = [&](uint64_t ns) { return total_ns > 0 ? static_cast<double>(ns) / static_cast<double>(total_ns) : 0.0; };
  nlohmann::json op_rows = nlohmann::json::array();
  for (const auto& [op, t] : per_op) {
    nlohmann::json ks = nlohmann::json::array();
    for (const auto& [name, k] : t.kernels) ks.push_back({{"name", name}, {"launches", k.first}, {"gpu_ms", ms(k.second)}});
    sort_by_time(ks);
    if (ks.size() > kKernelsPerOp) ks.erase(ks.begin() + kKernelsPerOp, ks.end());
    op_rows.push_back({{"op", op}, {"gpu_ms", ms(t.ns)}, {"share", share(t.ns)}, {"kernels", ks}});
  }
  sort_by_time(op_rows);
  nlohmann::json top_kernels = nlohmann::json::array();
  for (const auto& [op, e] : kernels)
    top_kernels.push_back({{"name", e->name.substr(0, kKernelNameChars)}, {"op", op}, {"gpu_ms", ms(e->duration_ns)},
                           {"share", share(e->duration_ns)}});
  sort_by_time(top_kernels);
  if (top_kernels.size() > kTopKernels) top_kernels.erase(top_kernels.begin() + kTopKernels, top_kernels.end());
  return {{"gpu_ms", total_ms}, {"device_events", kernels.size()}, {"ops", op_rows}, {"kernels", top_kernels},
          {"flops", flops_of(events, ops)}};
}

void summarize_candidate(nlohmann::json& candidate) {
  const double forward_ms = candidate.value("forward_ms", 0.0);
  auto share = [&](double v) { return forward_ms > 0 ? v / forward_ms : 0.0; };
  std::map<std::string, nlohmann::json> per_kernel;
  std::vector<std::string> order;
  double kernels_ms = 0;
  for (const auto& l : candidate.value("launches", nlohmann::json::array())) {
    const std::string name = l.value("kernel", "?");
    const double t = l.value("gpu_ms", 0.0);
    kernels_ms += t;
    auto it = per_kernel.find(name);
    if (it == per_kernel.end()) {
      order.push_back(name);
      it = per_kernel.emplace(name, nlohmann::json{{"kernel", name}, {"launches", 0}, {"gpu_ms", 0.0}}).first;
    }
    auto& k = it->second;
    // The slowest launch's shape and occupancy stand for the kernel.
    if (k["launches"].get<int>() == 0 || t > k.value("slowest_launch_ms", 0.0)) {
      for (const char* key : {"grid_blocks", "block_threads", "registers_per_thread", "shared_bytes_per_block",
                              "occupancy", "limited_by", "waves"})
        if (l.contains(key)) k[key] = l[key];
      k["slowest_launch_ms"] = t;
    }
    k["launches"] = k["launches"].get<int>() + 1;
    k["gpu_ms"] = k["gpu_ms"].get<double>() + t;
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& name : order) {
    auto k = per_kernel[name];
    k["share"] = share(k["gpu_ms"].get<double>());
    kernels.push_back(k);
  }
  sort_by_time(kernels);

  std::map<std::string, std::pair<int, double>> per_op;
  double ops_ms = 0;
  for (const auto& o : candidate.value("torch_ops", nlohmann::json::array())) {
    auto& [calls, t] = per_op[o.value("op", "?")];
    ++calls;
    t += o.value("gpu_ms", 0.0);
    ops_ms += o.value("gpu_ms", 0.0);
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& [op, v] : per_op)
    ops.push_back({{"op", op}, {"calls", v.first}, {"gpu_ms", v.second}, {"share", share(v.second)}});
  sort_by_time(ops);

  candidate["kernels"] = kernels;
  candidate["torch_ops_summary"] = ops;
  candidate["kernels_ms"] = kernels_ms;
  candidate["torch_ops_ms"] = ops_ms;
  // Between the first and last event but in neither: event overhead and work the host program
  // enqueued outside both (a stream wait, a copy made by a launch's argument conversion).
  candidate["other_ms"] = std::max(0.0, forward_ms - kernels_ms - ops_ms);
}

void annotate_bounds(nlohmann::json& candidate, int multiprocessors) {
  if (!candidate.contains("kernels")) return;
  for (auto& k : candidate["kernels"]) {
    std::string bound;
    if (k.contains("ncu") && k["ncu"].contains("sm_throughput_pct") && k["ncu"].contains("dram_throughput_pct")) {
      const auto& n = k["ncu"];
      const double sm = n.value("sm_throughput_pct", 0.0), dram = n.value("dram_throughput_pct", 0.0);
      if (dram >= kBusyPercent && dram >= sm) bound = "memory: DRAM throughput at " + fixed(dram, 0) + "% of peak";
      else if (sm >= kBusyPercent) bound = "compute: SM throughput at " + fixed(sm, 0) + "% of peak";
      else
        bound = "latency: neither SM (" + fixed(sm, 0) + "%) nor DRAM (" + fixed(dram, 0) +
                "%) throughput is near peak" + (n.contains("top_stall") ? "; warps mostly stall on " + n.value("top_stall", "") : "");
    } else if (k.contains("grid_blocks") && multiprocessors > 0 && k.value("grid_blocks", 0) < multiprocessors) {
      bound = "parallelism: " + std::to_string(k.value("grid_blocks", 0)) + " blocks for " + std::to_string(multiprocessors) +
              " SMs, most SMs idle";
    } else if (k.contains("occupancy") && k.value("occupancy", 1.0) < 0.25) {
      bound = "occupancy: " + fixed(100 * k.value("occupancy", 0.0), 0) + "% theoretical, limited by " +
              k.value("limited_by", "?") + " (" + std::to_string(k.value("registers_per_thread", 0)) + " registers per thread, " +
              std::to_string(k.value("shared_bytes_per_block", 0)) + " B shared per block)";
    } else {
      bound = "not measured: its shape and occupancy show no limit (--ncu gives throughput figures)";
    }
    k["bound"] = bound;
  }
}

}  // namespace kbench::profile
