// The kbench subcommands. Each parses its options into a request and calls the parts; exit codes:
// 0 success (eval: correct), 1 a negative result (eval: not correct; ci: regression; doctor: missing
// pieces), 2 usage or environment error.
#pragma once

#include <CLI/CLI.hpp>

namespace kbench::cli {

struct GlobalOptions {
  bool json = false;
  std::string root;
  int verbosity = 0;  // -v: +1, -q: -1
};

// Registers every subcommand on `app`; the chosen one stores its exit code in `exit_code`.
void add_commands(CLI::App& app, GlobalOptions& global, int& exit_code);

std::string version_text();

}  // namespace kbench::cli
