// The options of an evaluation, defined once: one table maps each name to its field of EvalRequest
// or Budgets, with its type, its default, its meaning and the commands that take it. From it come
// the flags of eval, batch, ci and serve (cli/option_flags.h), the options of a request to `kbench
// serve` ({"trials": 3, "no_timing": true, ...}), the request a worker receives, and the README's
// options reference (`kbench __options-reference`). Adding an option is one line of that table.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

namespace kbench::sandbox {

struct EvalSettings {
  EvalRequest request;
  Budgets budgets;
};

// What every command starts from: tolerances from the problem's manifest entry, the robustness seed
// drawn per evaluation, fixed timing, the default budgets.
EvalSettings default_eval_settings();

// The commands whose command line takes an option, and serve's request (`request`).
enum class Command : unsigned { eval = 1, batch = 2, ci = 4, serve = 8, request = 16 };

// A bad options object; the message names every unknown option and every bad value.
struct OptionsError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// One option of the table, as the command line sees it.
struct OptionSpec {
  std::string name;        // serve's name, e.g. "timing_trials"; the flag is "--timing-trials"
  std::string type;        // "integer", "number", "boolean" (a flag) or "string"
  std::string value_name;  // what the help shows after the flag, e.g. "N" ("" for a flag)
  std::string meaning;     // the help text
  unsigned commands = 0;   // Command bits
  std::string flag() const;
  bool taken_by(Command command) const;
  // The value under `settings`, as help and README show it ("off", "5", "the problem's").
  std::string value_text(const EvalSettings& settings) const;
  // Sets the option from its command-line text; throws std::invalid_argument with what was expected.
  void set_from_text(const std::string& text, EvalSettings& settings) const;
};

// Every option, in the table's order.
const std::vector<OptionSpec>& option_specs();

// Sets `options` (a JSON object, a request's) on `settings`. A budget may only be lowered: the
// budgets already in `settings` are the caller's ceilings (kbench serve's own --check-budget and so
// on). Options a request cannot carry are unknown.
void apply_options(const nlohmann::json& options, EvalSettings& settings);

// The request options whose values differ from `defaults`: what `kbench eval --server` sends.
nlohmann::json options_of(const EvalSettings& settings, const EvalSettings& defaults = default_eval_settings());

// Every request option of `request`, budgets left out, and back: the worker's request carries them.
nlohmann::json request_options(const EvalRequest& request);
void set_request_options(const nlohmann::json& options, EvalRequest& request);

}  // namespace kbench::sandbox
