#include "report/regression.h"

#include <algorithm>
#include <cstdio>

#include "report/records.h"

namespace kbench::report {
namespace {

double speedup_of(const nlohmann::json& r) {
  return r.contains("timing") && r["timing"].contains("speedup_eager") ? r["timing"]["speedup_eager"].get<double>() : 0.0;
}

double cv_of(const nlohmann::json& r) {
  return r.contains("timing") && r["timing"].contains("candidate") ? r["timing"]["candidate"].value("cv", 0.0) : 0.0;
}

using check::Verdict;

bool compile_side(std::optional<Verdict> v) { return v == Verdict::compile_error || v == Verdict::host_error; }

}  // namespace

std::string to_string(RegressionStatus status) {
  switch (status) {
    case RegressionStatus::ok: return "ok";
    case RegressionStatus::regressed: return "REGRESSED";
    case RegressionStatus::new_kernel: return "new";
    case RegressionStatus::improved: return "improved";
    case RegressionStatus::skipped: return "skipped";
    case RegressionStatus::refused: return "refused";
  }
  return "?";
}

nlohmann::json RegressionRow::to_json() const {
  return {{"file", file}, {"recorded", verdict_text(recorded_verdict)}, {"verdict", verdict_text(verdict)},
          {"status", to_string(status)}, {"recorded_speedup", recorded_speedup}, {"speedup", speedup}, {"why", why}};
}

nlohmann::json to_recorded(const std::vector<nlohmann::json>& records) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& r : records) {
    const auto file = r["batch"].value("file", "");
    out[file] = {{"verdict", r.value("verdict", "")}, {"speedup_eager", speedup_of(r)}, {"cv", cv_of(r)}};
    if (r.contains("timing") && r["timing"].contains("candidate"))
      out[file]["mean_ms"] = r["timing"]["candidate"].value("mean_ms", 0.0);
  }
  return out;
}

std::vector<RegressionRow> compare_with_recorded(const nlohmann::json& recorded, const std::vector<nlohmann::json>& records,
                                                 bool gpu_run) {
  std::vector<RegressionRow> rows;
  for (const auto& r : records) {
    RegressionRow row;
    row.file = r["batch"].value("file", "");
    row.verdict = verdict_of(r);
    row.speedup = speedup_of(r);
    if (const auto refused = r.find("torch_ops_refused"); refused != r.end()) {
      if (recorded.contains(row.file)) row.recorded_verdict = verdict_of(recorded[row.file]);
      row.status = RegressionStatus::refused;
      row.why = "forward calls " + refused->dump() + " (--torch-ops forbid)";
      rows.push_back(row);
      continue;
    }
    if (!recorded.contains(row.file)) {
      row.status = gpu_run ? RegressionStatus::new_kernel
                           : (compile_side(row.verdict) ? RegressionStatus::regressed : RegressionStatus::skipped);
      row.why = compile_side(row.verdict) ? r.value("message", "") : (gpu_run ? "not recorded yet" : "needs a GPU");
      rows.push_back(row);
      continue;
    }
    const auto& rec = recorded[row.file];
    row.recorded_verdict = verdict_of(rec);
    row.recorded_speedup = rec.value("speedup_eager", 0.0);
    if (!gpu_run) {
      // Without a GPU only compilation can regress: split, NVRTC, signatures, host program.
      const bool broke = compile_side(row.verdict) && !compile_side(row.recorded_verdict);
      row.status = broke ? RegressionStatus::regressed : RegressionStatus::skipped;
      row.why = broke ? r.value("message", "") : "correctness and timing need a GPU";
    } else if (row.verdict != row.recorded_verdict) {
      row.status = row.verdict == Verdict::correct ? RegressionStatus::improved : RegressionStatus::regressed;
      row.why = r.value("message", "");
    } else if (row.verdict == Verdict::correct && row.recorded_speedup > 0) {
      row.allowed_drop = std::max(0.05, 3 * (rec.value("cv", 0.0) + cv_of(r)));
      const bool slower = row.speedup < row.recorded_speedup * (1 - row.allowed_drop);
      row.status = slower ? RegressionStatus::regressed : RegressionStatus::ok;
      if (slower) row.why = "speedup fell beyond the noise allowance";
    } else {
      row.status = RegressionStatus::ok;
    }
    rows.push_back(row);
  }
  return rows;
}

std::string regression_table(const std::vector<RegressionRow>& rows) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-58s %-16s %-16s %9s %9s  %s\n", "kernel", "recorded", "now", "rec. x", "now x", "status");
  out += line;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%-58s %-16s %-16s %9.2f %9.2f  %s%s%s\n", r.file.c_str(),
                  verdict_text(r.recorded_verdict).c_str(), verdict_text(r.verdict).c_str(), r.recorded_speedup, r.speedup,
                  to_string(r.status).c_str(), r.why.empty() ? "" : ": ",
                  r.why.substr(0, 100).c_str());
    out += line;
  }
  return out;
}

}  // namespace kbench::report
