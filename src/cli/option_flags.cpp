#include "cli/option_flags.h"

#include <algorithm>
#include <map>
#include <vector>

namespace kbench::cli {

void add_evaluation_flags(CLI::App* cmd, sandbox::EvalSettings& settings, sandbox::Command command) {
  for (const auto& spec : sandbox::option_specs()) {
    if (!spec.taken_by(command)) continue;
    const auto set = [&settings, spec](const std::string& text) {
      try {
        spec.set_from_text(text, settings);
      } catch (const std::invalid_argument& e) {
        throw CLI::ValidationError(spec.flag(), "must be " + std::string(e.what()) + ", not " + text);
      }
    };
    if (spec.type == "boolean") {
      cmd->add_flag_function(spec.flag(), [set](int64_t) { set("true"); }, spec.meaning);
    } else {
      cmd->add_option_function<std::string>(spec.flag(), set, spec.meaning)
          ->type_name(spec.value_name)
          ->default_str(spec.value_text(settings));
    }
  }
}

namespace {

// `text` in a Markdown table cell.
std::string cell(std::string text) {
  for (size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
  return text;
}

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// One row of the options table: an option with one meaning, and the commands that take it so.
struct Row {
  std::string option, meaning;
  std::vector<std::string> commands;
  std::vector<std::pair<std::string, std::string>> defaults;  // (command, default)

  std::string default_text() const {
    std::map<std::string, std::vector<std::string>> by_value;  // default -> the commands with it
    for (const auto& [command, value] : defaults) by_value[value].push_back(command);
    if (by_value.size() <= 1) return by_value.empty() ? "" : by_value.begin()->first;
    // The most common default first, then the others with their commands.
    auto common = by_value.begin();
    for (auto it = by_value.begin(); it != by_value.end(); ++it)
      if (it->second.size() > common->second.size()) common = it;
    std::string out = common->first;
    for (const auto& [value, commands] : by_value)
      if (value != common->first) out += "; " + joined(commands, ", ") + ": " + value;
    return out;
  }
};

std::string option_text(const CLI::Option* opt) {
  std::string names = opt->get_name(false, true);  // "-v,--verbose"
  for (size_t at = names.find(','); at != std::string::npos; at = names.find(',', at + 2)) names.replace(at, 1, ", ");
  // The value's name, without what validators add to it ("N:INT in [1 - 3]": the meaning says it).
  const auto value = opt->get_type_name().substr(0, opt->get_type_name().find(':'));
  return names + (opt->get_type_size() != 0 && !value.empty() ? " " + value : "");
}

void add_rows(const CLI::App& command, const std::string& name, std::vector<Row>& rows) {
  for (const CLI::Option* opt : command.get_options()) {
    if (!opt->nonpositional() || opt->get_group().empty() || (name != "all" && opt == command.get_help_ptr())) continue;  // hidden
    const auto option = option_text(opt);
    const auto& meaning = opt->get_description();
    auto row = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.option == option && r.meaning == meaning; });
    if (row == rows.end()) row = rows.insert(rows.end(), Row{option, meaning, {}, {}});
    row->commands.push_back(name + (opt->get_required() ? " (required)" : ""));
    if (opt->get_type_size() != 0 && !opt->get_required()) row->defaults.emplace_back(name, opt->get_default_str());
  }
}

}  // namespace

std::string options_reference(const CLI::App& app) {
  std::string out = "| command | what it does |\n|---|---|\n";
  std::vector<Row> rows;
  add_rows(app, "all", rows);  // the global options, and --version and --help
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
    out += "| `" + sub->get_name() + "` | " + cell(sub->get_description()) + " |\n";
    add_rows(*sub, sub->get_name(), rows);
  }
  out += "\n| option | commands | default | meaning |\n|---|---|---|---|\n";
  for (const auto& r : rows)
    out += "| `" + r.option + "` | " + joined(r.commands, ", ") + " | " + cell(r.default_text()) + " | " + cell(r.meaning) + " |\n";
  return out;
}

}  // namespace kbench::cli
