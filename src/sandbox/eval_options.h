// Evaluation options by name, as a request to `kbench serve` carries them ({"trials": 3,
// "no_timing": true, ...}): the flags of `kbench eval`, in one table that maps each name to its
// field of EvalRequest or Budgets, in both directions. Adding an option is one line of that table.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

namespace kbench::sandbox {

struct EvalSettings {
  EvalRequest request;
  Budgets budgets;
};

// What `kbench eval` starts from: tolerances from the problem's manifest entry, the robustness seed
// drawn per evaluation, the default budgets.
EvalSettings default_eval_settings();

// A bad options object; the message names every unknown option and every bad value.
struct OptionsError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Sets `options` (a JSON object) on `settings`. A budget may only be lowered: the budgets already
// in `settings` are the caller's ceilings (kbench serve's own --check-budget and so on).
void apply_options(const nlohmann::json& options, EvalSettings& settings);

// The options whose values differ from `defaults`: what `kbench eval --server` sends.
nlohmann::json options_of(const EvalSettings& settings, const EvalSettings& defaults = default_eval_settings());

// Every option: {"name", "type", "meaning"}, in the table's order.
nlohmann::json option_list();

}  // namespace kbench::sandbox
