#include "report/records.h"

#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

namespace kbench::report {

std::optional<check::Verdict> verdict_of(const nlohmann::json& record, VerdictOf which) {
  const auto verdicts = record.find("verdicts");
  if (which != VerdictOf::record && verdicts != record.end() && verdicts->is_object()) {
    const auto entry = verdicts->find(which == VerdictOf::kernelbench ? "kernelbench" : "kbench");
    if (entry != verdicts->end()) return check::verdict_from_string(entry->value("verdict", ""));
  }
  return check::verdict_from_string(record.value("verdict", ""));
}

std::string verdict_text(std::optional<check::Verdict> verdict) { return verdict ? check::to_string(*verdict) : ""; }

std::vector<nlohmann::json> read_records(const std::vector<std::string>& files) {
  std::map<std::string, nlohmann::json> by_submission;
  for (const auto& f : files) {
    std::ifstream in(f);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<nlohmann::json> parsed;
    const auto whole = nlohmann::json::parse(text, nullptr, false);
    if (!whole.is_discarded() && whole.is_object()) {
      parsed.push_back(whole);  // an eval record (kbench eval --out)
    } else {
      std::istringstream lines(text);
      for (std::string line; std::getline(lines, line);) {
        const auto r = nlohmann::json::parse(line, nullptr, false);
        if (!r.is_discarded() && r.is_object()) parsed.push_back(r);
      }
    }
    for (const auto& r : parsed) {
      if (!r.contains("verdict") || !r.contains("problem")) continue;
      std::string key = f;  // a record names its submission; a bare one is its file's only record
      if (r.contains("batch")) key = r["batch"].value("file", f);
      else if (r.contains("submission")) key = r["submission"].value("path", f);
      by_submission[key] = r;
    }
  }
  std::vector<nlohmann::json> records;
  for (auto& [key, r] : by_submission) records.push_back(std::move(r));
  return records;
}

}  // namespace kbench::report
