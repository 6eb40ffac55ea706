// The command line of the options table (sandbox/eval_options.h): each option a command takes
// becomes its flag, with the table's help text and the command's default; and the README's
// reference of every command and option, made from the flags themselves (`kbench
// __options-reference`), so that README and --help cannot part.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "sandbox/eval_options.h"

namespace kbench::cli {

// Adds the table's options that `command` takes to `cmd`, each setting `settings` when given. Their
// defaults, as --help shows them, are what `settings` holds now.
void add_evaluation_flags(CLI::App* cmd, sandbox::EvalSettings& settings, sandbox::Command command);

// The README's reference in Markdown: a table of the commands, then one of the options, a row per
// option and meaning, naming the commands that take it and their defaults.
std::string options_reference(const CLI::App& app);

}  // namespace kbench::cli
