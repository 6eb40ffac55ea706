#include "report/printers.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "log/number_text.h"
#include "report/records.h"
#include "report/profile_text.h"

namespace kbench::report {
namespace {

using kbench::log::fixed;

}  // namespace

namespace {

std::string percent(double v) { return fixed(100.0 * v, 1) + "%"; }

using Table = std::vector<std::vector<std::string>>;

std::vector<std::string> fast_cells(const std::map<double, double>& fast) {
  std::vector<std::string> cells;
  for (double t : kThresholds) cells.push_back(percent(fast.at(t)));
  return cells;
}

std::vector<std::string> threshold_heads() {
  std::vector<std::string> heads;
  for (double t : kThresholds) heads.push_back("fast_" + fixed(t, 1));
  return heads;
}

std::string problems_cell(const LevelScore& s) {
  return std::to_string(s.problems_sampled) + "/" + std::to_string(s.problems_in_level);
}

// fast_p against eager under kbench's verdicts: the main table.
Table eager_table(const std::vector<LevelScore>& levels) {
  Table rows;
  std::vector<std::string> head = {"level", "problems", "submissions", "pass@1"};
  for (const auto& h : threshold_heads()) head.push_back(h);
  head.push_back("geomean");
  rows.push_back(head);
  for (const auto& s : levels) {
    std::vector<std::string> row = {std::to_string(s.level), problems_cell(s), std::to_string(s.submissions),
                                    percent(s.pass_at_1)};
    for (const auto& c : fast_cells(s.fast_eager)) row.push_back(c);
    row.push_back(s.geomean_speedup_eager > 0 ? fixed(s.geomean_speedup_eager, 2) + "x" : "-");
    rows.push_back(row);
  }
  return rows;
}

// fast_p against torch.compile: every level, every threshold ("n/a" where no correct candidate of
// the level had a compiled figure to compare with).
Table compiled_table(const std::vector<LevelScore>& levels) {
  Table rows;
  std::vector<std::string> head = {"level"};
  for (const auto& h : threshold_heads()) head.push_back(h);
  head.push_back("geomean");
  rows.push_back(head);
  for (const auto& s : levels) {
    std::vector<std::string> row = {std::to_string(s.level)};
    for (const auto& c : fast_cells(s.fast_compiled)) row.push_back(s.has_compiled ? c : "n/a");
    row.push_back(s.has_compiled ? fixed(s.geomean_speedup_compiled, 2) + "x" : "n/a");
    rows.push_back(row);
  }
  return rows;
}

// The same run under KernelBench's verdicts, to compare with papers that used them.
Table kernelbench_table(const std::vector<LevelScore>& levels) {
  Table rows;
  std::vector<std::string> head = {"level", "pass@1"};
  for (const auto& h : threshold_heads()) head.push_back(h);
  head.push_back("compiled: fast_1.0");
  rows.push_back(head);
  for (const auto& s : levels) {
    std::vector<std::string> row = {std::to_string(s.level), percent(s.pass_at_1)};
    for (const auto& c : fast_cells(s.fast_eager)) row.push_back(c);
    row.push_back(s.has_compiled ? percent(s.fast_compiled.at(1.0)) : "n/a");
    rows.push_back(row);
  }
  return rows;
}

// How far correct candidates are from the time their memory traffic needs at peak bandwidth.
Table floor_table(const std::vector<LevelScore>& levels) {
  Table rows = {{"level", "correct, timed", "median x floor", "best x floor", "within 2x floor"}};
  for (const auto& s : levels)
    if (s.floor_candidates)
      rows.push_back({std::to_string(s.level), std::to_string(s.floor_candidates), fixed(s.floor_median, 2) + "x",
                      fixed(s.floor_best, 2) + "x", percent(s.floor_within_2x)});
  return rows;
}

const char* kFloorHeading =
    "Distance from the bandwidth floor (correct candidates' mean time / the time to read their inputs and write their "
    "outputs once at peak memory bandwidth; 1x is memory-bound peak):\n";

std::string verdict_lines(const ScoredRun& run, const std::string& bullet) {
  std::string out;
  for (const auto& s : run.levels) {
    out += bullet + "level " + std::to_string(s.level) + ":";
    for (const auto& [v, n] : s.verdicts) out += " " + v + " " + std::to_string(n);
    for (const auto& [k, v] : s.pass_at_k) out += "; pass@" + std::to_string(k) + " " + percent(v);
    for (const auto& [k, v] : s.fast1_at_k) out += "; fast_1@" + std::to_string(k) + " " + percent(v);
    const auto correct_name = check::to_string(check::Verdict::correct);
    const auto correct = s.verdicts.count(correct_name) ? s.verdicts.at(correct_name) : 0;
    if (correct > 0)
      out += "; PyTorch compute ops in forward: " + std::to_string(s.correct_using_torch_ops) + " of " +
             std::to_string(correct) + " correct (" + percent(static_cast<double>(s.correct_using_torch_ops) / correct) + ")";
    out += "\n";
  }
  return out;
}

std::vector<const nlohmann::json*> flagged_records(const ScoredRun& run) {
  std::vector<const nlohmann::json*> out;
  for (const auto& r : run.records)
    if (speedup_flagged(r)) out.push_back(&r);
  return out;
}

std::string flagged_lines(const ScoredRun& run, const std::string& bullet) {
  const auto flagged = flagged_records(run);
  if (flagged.empty()) return "";
  std::string out = std::to_string(flagged.size()) + " speedup(s) flagged by the audit, " +
                    (run.include_flagged ? "counted (--include-flagged)" : "not counted in fast_p") + ":\n";
  for (const auto* r : flagged) {
    const auto& p = (*r)["problem"];
    const std::string file = r->contains("batch") ? (*r)["batch"].value("file", "") : (*r)["submission"].value("path", "");
    out += bullet + "L" + std::to_string(p.value("level", 0)) + "#" + std::to_string(p.value("id", 0)) + " " + file +
           ": " + (*r)["timing"]["audit"].value("reason", "") + "\n";
  }
  return out;
}

std::string heading(const ScoredRun& run) {
  return "fast_p: share of the level's problems solved correctly (kbench's verdicts) with speedup > p over "
         "PyTorch eager" + std::string(run.include_flagged ? " (flagged speedups counted)" : "") + "\n";
}

const char* kCompiledHeading = "fast_p against torch.compile (the compiled baseline):\n";

// Which of KernelBench's rules its verdicts used: a fast_p is comparable only with one of the same rule.
std::string kernelbench_heading(const ScoredRun& run) {
  const auto rules = kernelbench_rules(run.records);
  std::string names;
  for (const auto& [rule, use] : rules) {
    std::ostringstream tolerance;
    tolerance << use.tolerance;
    names += names.empty() ? "" : ", ";
    names += rule.empty() ? "atol as given (" + tolerance.str() + "), by records made before the rules were named"
                          : rule + " (atol = rtol = " + tolerance.str() + ")";
    if (rules.size() > 1) names += " in " + std::to_string(use.records) + " records";
  }
  return "The same under KernelBench's verdicts (" + (names.empty() ? std::string("no record was checked") : "rule " + names) +
         "; the problem's own inputs only: fragile counts as correct):\n";
}

std::string terminal_table(const Table& rows) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  std::string out;
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) out += r[i] + std::string(width[i] - r[i].size() + 2, ' ');
    out += "\n";
  }
  return out;
}

std::string markdown_table(const Table& rows) {
  std::string out = "| ";
  for (const auto& h : rows[0]) out += h + " | ";
  out += "\n|";
  for (size_t i = 0; i < rows[0].size(); ++i) out += "---|";
  out += "\n";
  for (size_t r = 1; r < rows.size(); ++r) {
    out += "| ";
    for (const auto& c : rows[r]) out += c + " | ";
    out += "\n";
  }
  return out;
}

std::string floor_section(const ScoredRun& run, bool markdown) {
  const auto rows = floor_table(run.levels);
  if (rows.size() == 1) return "";
  return std::string(kFloorHeading) + (markdown ? "\n" + markdown_table(rows) : terminal_table(rows)) + "\n";
}

class TerminalPrinter : public Printer {
 public:
  std::string render(const ScoredRun& run) const override {
    return heading(run) + terminal_table(eager_table(run.levels)) + "\n" + kCompiledHeading +
           terminal_table(compiled_table(run.levels)) + "\n" + kernelbench_heading(run) +
           terminal_table(kernelbench_table(run.kernelbench_levels)) + "\n" + floor_section(run, false) +
           verdict_lines(run, "") + flagged_lines(run, "  ");
  }
};

class MarkdownPrinter : public Printer {
 public:
  std::string render(const ScoredRun& run) const override {
    return heading(run) + "\n" + markdown_table(eager_table(run.levels)) + "\n" + kCompiledHeading + "\n" +
           markdown_table(compiled_table(run.levels)) + "\n" + kernelbench_heading(run) + "\n" +
           markdown_table(kernelbench_table(run.kernelbench_levels)) + "\n" + floor_section(run, true) +
           verdict_lines(run, "- ") + "\n" + flagged_lines(run, "- ");
  }
};

class JsonPrinter : public Printer {
 public:
  std::string render(const ScoredRun& run) const override {
    nlohmann::json levels = nlohmann::json::array(), kernelbench = nlohmann::json::array(), flagged = nlohmann::json::array();
    for (const auto& s : run.levels) levels.push_back(to_json(s));
    for (const auto& s : run.kernelbench_levels) kernelbench.push_back(to_json(s));
    for (const auto* r : flagged_records(run))
      flagged.push_back({{"problem", (*r)["problem"]}, {"file", r->contains("batch") ? (*r)["batch"].value("file", "") : ""},
                         {"audit", (*r)["timing"]["audit"]}});
    nlohmann::json rules = nlohmann::json::object();
    for (const auto& [rule, use] : kernelbench_rules(run.records))
      rules[rule.empty() ? "as given" : rule] = {{"tolerance", use.tolerance}, {"records", use.records}};
    return nlohmann::json{{"levels", levels}, {"kernelbench_levels", kernelbench}, {"kernelbench_rules", rules},
                          {"flagged", flagged}, {"include_flagged", run.include_flagged}}.dump(2) + "\n";
  }
};

// fast_p against p, one line per level, drawn as plain SVG so any browser shows it.
class SvgPrinter : public Printer {
 public:
  std::string render(const ScoredRun& run) const override {
    const double w = 640, h = 400, left = 60, right = 150, top = 30, bottom = 50, p_max = 3.0;
    const double pw = w - left - right, ph = h - top - bottom;
    auto x = [&](double p) { return left + pw * p / p_max; };
    auto y = [&](double v) { return top + ph * (1 - v); };
    const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c"};
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"18\" font-size=\"14\">fast_p against p (speedup over PyTorch eager)</text>\n";
    for (int i = 0; i <= 6; ++i) {  // grid and axis labels
      const double p = p_max * i / 6, v = i / 6.0;
      s << "<line x1=\"" << x(p) << "\" y1=\"" << y(0) << "\" x2=\"" << x(p) << "\" y2=\"" << y(1) << "\" stroke=\"#eee\"/>"
        << "<text x=\"" << x(p) << "\" y=\"" << y(0) + 16 << "\" text-anchor=\"middle\">" << fixed(p, 1) << "</text>\n"
        << "<line x1=\"" << x(0) << "\" y1=\"" << y(v) << "\" x2=\"" << x(p_max) << "\" y2=\"" << y(v) << "\" stroke=\"#eee\"/>"
        << "<text x=\"" << x(0) - 6 << "\" y=\"" << y(v) + 4 << "\" text-anchor=\"end\">" << fixed(100 * v, 0) << "%</text>\n";
    }
    s << "<line x1=\"" << x(0) << "\" y1=\"" << y(0) << "\" x2=\"" << x(p_max) << "\" y2=\"" << y(0) << "\" stroke=\"black\"/>"
      << "<line x1=\"" << x(0) << "\" y1=\"" << y(0) << "\" x2=\"" << x(0) << "\" y2=\"" << y(1) << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << x(p_max / 2) << "\" y=\"" << h - 12 << "\" text-anchor=\"middle\">p (speedup threshold)</text>\n";
    for (size_t i = 0; i < run.levels.size(); ++i) {
      const auto& lvl = run.levels[i];
      const auto curve =
          fast_curve(run.records, lvl.level, lvl.problems_in_level, "eager", p_max, {false, run.include_flagged});
      s << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << colours[i % 3] << "\" points=\"";
      for (const auto& [p, v] : curve) s << fixed(x(p), 1) << "," << fixed(y(v), 1) << " ";
      s << "\"/>\n<text x=\"" << x(p_max) + 10 << "\" y=\"" << top + 20 + 18 * i << "\" fill=\"" << colours[i % 3]
        << "\">level " << lvl.level << " (" << lvl.problems_in_level << ")</text>\n";
    }
    s << "</svg>\n";
    return s.str();
  }
};

}  // namespace

ScoredRun score_run(std::vector<nlohmann::json> records, const std::map<int, int>& level_sizes, bool include_flagged) {
  ScoredRun run;
  run.records = std::move(records);
  run.include_flagged = include_flagged;
  run.levels = score(run.records, level_sizes, {false, include_flagged});
  run.kernelbench_levels = score(run.records, level_sizes, {true, include_flagged});
  return run;
}

std::unique_ptr<Printer> make_printer(const std::string& format) {
  if (format == "terminal") return std::make_unique<TerminalPrinter>();
  if (format == "markdown") return std::make_unique<MarkdownPrinter>();
  if (format == "json") return std::make_unique<JsonPrinter>();
  if (format == "svg") return std::make_unique<SvgPrinter>();
  throw std::runtime_error("unknown report format '" + format + "' (terminal, markdown, json, svg)");
}

namespace {

// The record's verdict, and the other rule's where it differs (see check/correctness.h).
void record_verdict_lines(std::ostream& out, const nlohmann::json& r) {
  out << "verdict: " << r.value("verdict", "?") << " — " << r.value("message", "") << "\n";
  const bool compat = r.contains("compat");  // "kernelbench" or "kernelbench-v0.1": KernelBench's verdict is the record's
  const auto other = verdict_of(r, compat ? VerdictOf::kbench : VerdictOf::kernelbench);
  if (r.contains("verdicts") && other != verdict_of(r)) {
    const auto rule = r["verdicts"]["kernelbench"].value("rule", "");
    out << (compat ? "kbench's verdict: " : "KernelBench's verdict" + (rule.empty() ? "" : " (rule " + rule + ")") + ": ")
        << verdict_text(other) << " — " << r["verdicts"][compat ? "kbench" : "kernelbench"].value("message", "") << "\n";
  }
}

// A ModelNew's load_inline builds, or a .cu's NVRTC compile.
void compile_lines(std::ostream& out, const nlohmann::json& c) {
  if (c.contains("extensions")) {
    out << "extensions (" << c.value("arch", "") << "):";
    for (const auto& e : c["extensions"])
      out << " " << e.value("name", "?") << " ("
          << (!e.value("ok", false) ? "FAILED" : e.value("from_cache", false) ? "cached" : "built in " + fixed(e.value("seconds", 0.0), 1) + " s")
          << (e.value("route", "") == "pytorch" ? ", by PyTorch's build" : "") << ")";
    out << (c["extensions"].empty() ? " none\n" : "\n");
    for (const auto& e : c["extensions"]) {
      if (e.contains("why")) out << e.value("name", "?") << ": PyTorch's build ran: " << e.value("why", "") << "\n";
      for (const auto& a : e.value("adaptations", std::vector<std::string>{}))
        out << e.value("name", "?") << ": " << a << "\n";
      if (!e.value("ok", false)) out << e.value("log", "") << "\n";
    }
    return;
  }
  out << "compile: " << (c.value("ok", false) ? "ok" : "failed") << ", " << fixed(c.value("nvrtc_ms", 0.0), 1) << " ms"
      << (c.value("from_cache", false) ? " (cached)" : "") << ", " << c.value("arch", "") << ", kernels:";
  for (const auto& k : c.value("kernels", nlohmann::json::array())) out << " " << k.get<std::string>();
  out << "\n";
  if (!c.value("ok", false)) out << c.value("log", "") << "\n";
}

void timing_lines(std::ostream& out, const nlohmann::json& r) {
  const auto& t = r["timing"];
  if (t.contains("candidate"))
    out << "timing: candidate " << fixed(t["candidate"].value("mean_ms", 0.0), 4) << " ms (std "
        << fixed(t["candidate"].value("std_ms", 0.0), 4) << ")";
  if (t.contains("eager"))
    out << ", eager " << fixed(t["eager"].value("mean_ms", 0.0), 4) << " ms → speedup " << fixed(t.value("speedup_eager", 0.0), 2)
        << "x";
  if (t.contains("speedup_compiled")) out << ", vs compiled " << fixed(t.value("speedup_compiled", 0.0), 2) << "x";
  else if (t.contains("compiled")) out << ", no compiled figure (" << t["compiled"].value("source", "") << ")";
  out << "\n";
  if (verdict_of(r) != check::Verdict::correct && verdict_of(r, VerdictOf::kernelbench) == check::Verdict::correct &&
      t.contains("speedup_eager"))
    out << "(timed because KernelBench's verdict is correct; these speedups count only in its score)\n";
  if (t.contains("audit") && t["audit"].value("flagged", false))
    out << "FLAGGED: " << t["audit"].value("reason", "") << "; not counted in fast_p\n";
  for (const auto* who : {"candidate", "eager"})
    if (t.contains(who))
      for (const auto& w : t[who].value("warnings", nlohmann::json::array()))
        out << "warning (" << who << "): " << w.get<std::string>() << "\n";
}

}  // namespace

std::string eval_summary(const nlohmann::json& r) {
  std::ostringstream out;
  const auto& p = r.value("problem", nlohmann::json::object());
  out << "level " << p.value("level", 0) << " problem " << p.value("id", 0) << " (" << p.value("name", "?") << ")  "
      << r["submission"].value("path", "") << "\n";
  record_verdict_lines(out, r);
  if (r.contains("compile")) compile_lines(out, r["compile"]);
  if (r.contains("correctness")) {
    out << "correctness:";
    for (const auto& t : r["correctness"]["trials"]) {
      out << " [" << t.value("trial", 0) << " ";
      if (t.value("inputs", "own") != "own") out << t.value("inputs", "") << " ";
      out << (t.contains("skipped") ? "skipped" : t.value("verdict", "")) << " max_abs=" << t.value("max_abs_error", 0.0) << "]";
    }
    out << "\n";
  }
  if (r.contains("ablation"))
    out << "without its kernels: " << r["ablation"].value("message", r["ablation"].value("skipped", "")) << "\n";
  if (r.contains("timing")) timing_lines(out, r);
  if (r.contains("profile")) out << profile_text(r["profile"], 4);
  return out.str();
}

}  // namespace kbench::report
