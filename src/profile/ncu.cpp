#include "profile/ncu.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#ifdef KBENCH_WITH_LIBCSV
#include <csv.h>
#endif

#include "profile/breakdown.h"
#include "profile/candidate_profile.h"

namespace kbench::profile {
namespace {

// Record field -> ncu metric. Throughputs are shares of the peak sustained rate over the kernel's
// elapsed cycles (Nsight Compute's "Speed Of Light"); occupancy is over active cycles.
const std::vector<std::pair<std::string, std::string>> kMetrics = {
    {"duration_ms", "gpu__time_duration.sum"},
    {"sm_throughput_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
    {"dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed"},
    {"achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active"},
    {"l2_hit_rate_pct", "lts__t_sector_hit_rate.pct"},
};
// Cycles per issued instruction that warps spend stalled, one metric per reason.
const std::string kStallPrefix = "smsp__average_warps_issue_stalled_";
const std::string kStallSuffix = "_per_issue_active.ratio";

bool executable(const std::filesystem::path& p) { return ::access(p.c_str(), X_OK) == 0 && !std::filesystem::is_directory(p); }

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A figure as ncu prints it with base units ("1,234.5"): the digit groups' commas are not part of it.
bool to_number(std::string text, double& value) {
  std::string digits;
  for (char c : text)
    if (c != ',') digits += c;
  if (digits.empty()) return false;
  char* end = nullptr;
  value = std::strtod(digits.c_str(), &end);
  return end && *end == '\0';
}

double to_ms(double value, const std::string& unit) {
  if (unit == "nsecond" || unit == "ns") return value * 1e-6;
  if (unit == "usecond" || unit == "us") return value * 1e-3;
  if (unit == "second" || unit == "s") return value * 1e3;
  return value;  // msecond
}

#ifdef KBENCH_WITH_LIBCSV
struct Rows {
  std::vector<std::vector<std::string>> rows{{}};
};
void on_field(void* field, size_t length, void* data) {
  static_cast<Rows*>(data)->rows.back().emplace_back(static_cast<const char*>(field), length);
}
void on_row_end(int, void* data) { static_cast<Rows*>(data)->rows.emplace_back(); }

std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  csv_parser parser;
  if (csv_init(&parser, CSV_APPEND_NULL) != 0) throw std::runtime_error("libcsv: cannot initialise its parser");
  Rows out;
  const size_t done = csv_parse(&parser, text.data(), text.size(), on_field, on_row_end, &out);
  const int error = csv_error(&parser);
  csv_fini(&parser, on_field, on_row_end, &out);
  csv_free(&parser);
  if (done != text.size()) throw std::runtime_error(std::string("ncu's CSV export does not parse: ") + csv_strerror(error));
  while (!out.rows.empty() && out.rows.back().empty()) out.rows.pop_back();
  return out.rows;
}
#else
std::vector<std::vector<std::string>> read_csv(const std::string&) {
  throw std::runtime_error("this kbench was built without libcsv, which reads Nsight Compute's CSV export: install "
                           "libcsv-dev (scripts/setup.sh does) and rebuild");
}
#endif

}  // namespace

NcuLocation find_ncu(const std::string& cuda_bin) {
  if (const char* env = std::getenv("KBENCH_NCU"); env && *env) {
    if (executable(env)) return {env, ""};
    return {"", std::string("KBENCH_NCU=") + env + " is not an executable"};
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty() && executable(std::filesystem::path(dir) / "ncu")) return {(std::filesystem::path(dir) / "ncu").string(), ""};
  }
  const auto in_cuda = std::filesystem::path(cuda_bin) / "ncu";
  if (executable(in_cuda)) return {in_cuda.string(), ""};
  return {"", "Nsight Compute (ncu) is not installed here: not on PATH nor in " + cuda_bin +
              " (set KBENCH_NCU to its path); the profile has no ncu figures"};
}

std::vector<std::string> ncu_command(const std::string& ncu, const std::string& report,
                                     const std::vector<std::string>& kernel_names, int launch_count) {
  std::string names;  // extern "C" names are identifiers: nothing to escape
  for (const auto& n : kernel_names) names += (names.empty() ? "" : "|") + n;
  std::string metrics;
  for (const auto& [field, metric] : kMetrics) metrics += metric + ",";
  metrics += "regex:" + kStallPrefix + ".*" + "_per_issue_active\\.ratio";
  return {ncu, "--nvtx", "--nvtx-include", std::string(kNvtxRange) + "/", "--kernel-name", "regex:^(" + names + ")$",
          "--launch-count", std::to_string(launch_count), "--metrics", metrics, "--export", report, "--force-overwrite"};
}

namespace {

// One kernel's rows of the export: its launches, and each field's sum and count.
struct KernelSums {
  int launches = 0;
  std::map<std::string, std::pair<double, int>> fields;  // record field -> sum, count
};

// The record's entry of one kernel: each field's mean, and the stall reason it waited on most.
nlohmann::json kernel_entry(const std::string& name, const KernelSums& k) {
  nlohmann::json entry = {{"kernel", name}, {"launches", k.launches}};
  std::string top;
  double top_value = -1;
  for (const auto& [field, sum] : k.fields) {
    const double mean = sum.first / sum.second;
    if (field.rfind("stall:", 0) != 0) {
      entry[field] = mean;
      continue;
    }
    // Being picked to issue, or eligible and not picked, is not waiting on anything.
    const auto reason = field.substr(6);
    if (reason != "selected" && reason != "not_selected" && mean > top_value) top = reason, top_value = mean;
  }
  if (!top.empty()) entry["top_stall"] = top, entry["top_stall_cycles_per_issue"] = top_value;
  return entry;
}

}  // namespace

nlohmann::json parse_ncu_raw_csv(const std::string& csv) {
  const auto rows = read_csv(csv);
  if (rows.empty()) throw std::runtime_error("Nsight Compute's export is empty: it profiled no kernel");
  const auto& head = rows[0];
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < head.size(); ++i) column.emplace(head[i], i);
  const auto name_column = column.find("Kernel Name");
  if (name_column == column.end()) throw std::runtime_error("Nsight Compute's export has no \"Kernel Name\" column");
  size_t first = 1;
  std::vector<std::string> units(head.size());
  if (rows.size() > 1 && rows[1].size() > name_column->second && rows[1][name_column->second].empty()) {
    units = rows[1];  // the units row under the metric names
    units.resize(head.size());
    first = 2;
  }

  std::map<std::string, KernelSums> per_kernel;
  std::vector<std::string> order;
  for (size_t r = first; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.size() <= name_column->second) continue;
    const auto& name = row[name_column->second];
    if (!per_kernel.count(name)) order.push_back(name);
    auto& k = per_kernel[name];
    ++k.launches;
    auto add = [&](const std::string& field, double v) {
      auto& [sum, n] = k.fields[field];
      sum += v;
      ++n;
    };
    for (const auto& [field, metric] : kMetrics) {
      const auto c = column.find(metric);
      double v = 0;
      if (c != column.end() && c->second < row.size() && to_number(row[c->second], v))
        add(field, field == "duration_ms" ? to_ms(v, units[c->second]) : v);
    }
    for (const auto& [metric, c] : column) {
      if (metric.rfind(kStallPrefix, 0) != 0 || metric.size() <= kStallPrefix.size() + kStallSuffix.size() ||
          metric.compare(metric.size() - kStallSuffix.size(), kStallSuffix.size(), kStallSuffix) != 0)
        continue;
      double v = 0;
      if (c < row.size() && to_number(row[c], v))
        add("stall:" + metric.substr(kStallPrefix.size(), metric.size() - kStallPrefix.size() - kStallSuffix.size()), v);
    }
  }

  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& name : order) kernels.push_back(kernel_entry(name, per_kernel[name]));
  return {{"kernels", kernels}};
}

nlohmann::json read_ncu_report(const std::string& ncu, const std::string& report) {
  const auto errors = report + ".export-errors";
  const std::string command = shell_quote(ncu) + " --import " + shell_quote(report) +
                              " --csv --page raw --print-units base 2>" + shell_quote(errors);
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + ncu);
  std::string csv;
  std::array<char, 65536> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) csv.append(buf.data(), n);
  const int status = ::pclose(pipe);
  std::ifstream err_in(errors);
  std::string err((std::istreambuf_iterator<char>(err_in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(errors);
  if (status != 0 || csv.empty())
    throw std::runtime_error("ncu --import failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                             "): " + err.substr(0, 500));
  return parse_ncu_raw_csv(csv);
}

void merge_ncu(nlohmann::json& candidate, const nlohmann::json& ncu_kernels) {
  if (!candidate.contains("kernels")) return;
  for (auto& k : candidate["kernels"])
    for (const auto& n : ncu_kernels)
      if (n.value("kernel", "") == k.value("kernel", "")) {
        auto figures = n;
        figures.erase("kernel");
        k["ncu"] = figures;
      }
  annotate_bounds(candidate, candidate.value("multiprocessors", 0));
}

}  // namespace kbench::profile
