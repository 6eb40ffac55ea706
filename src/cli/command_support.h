// What the command files of cli/ share: the global options, small text helpers, and the options
// that several commands take with one meaning (--level, --problem, --device).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "launch/cuda_driver.h"
#include "problems/catalog.h"

namespace kbench::cli {

void apply_logging(const GlobalOptions& g);
std::string env_or_empty(const char* name);
std::string read_text(const std::filesystem::path& path);
// The catalog of the checkout the global --root names.
problems::Catalog load_catalog(const GlobalOptions& g);
// The GPU a command that needs one runs on; throws, naming the command, where there is none.
launch::DeviceInfo gpu_for(const std::string& command, int device);

// --level and --problem: required (the problem a command is about) or not (a filter: all by default).
void add_problem_options(CLI::App* cmd, int& level, int& problem, bool required);
void add_device_option(CLI::App* cmd, int& device);

// The command registrations, one file per group.
void add_problem_commands(CLI::App& app, GlobalOptions& g, int& exit_code);     // list, show, prompt, doctor
void add_evaluation_commands(CLI::App& app, GlobalOptions& g, int& exit_code);  // eval, batch, report
void add_service_commands(CLI::App& app, GlobalOptions& g, int& exit_code);     // ci, serve, the hidden workers
void add_sweep_commands(CLI::App& app, GlobalOptions& g, int& exit_code);       // baseline, degenerate, footprint
void add_baseline_command(CLI::App& app, GlobalOptions& g, int& exit_code);     // baseline (of the sweeps)

}  // namespace kbench::cli
