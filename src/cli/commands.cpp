#include "cli/commands.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/command_support.h"
#include "cli/option_flags.h"
#include "compile/submission.h"
#include "log/log.h"
#include "report/environment.h"

namespace kbench::cli {

void apply_logging(const GlobalOptions& g) { log::set_verbosity(g.verbosity); }

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string read_text(const std::filesystem::path& path) {
  if (!std::ifstream(path)) throw std::runtime_error("cannot read " + path.string());
  return compile::file_bytes(path);
}

problems::Catalog load_catalog(const GlobalOptions& g) { return problems::Catalog::load(problems::project_root(g.root)); }

launch::DeviceInfo gpu_for(const std::string& command, int device) {
  const auto gpu = launch::query_device(device);
  if (!gpu.present) throw std::runtime_error("kbench " + command + " needs a GPU: " + gpu.why_absent);
  return gpu;
}

void add_problem_options(CLI::App* cmd, int& level, int& problem, bool required) {
  auto* l = cmd->add_option("--level", level, "the problem's level: 1, 2 or 3 (where not required, only this level)");
  auto* p = cmd->add_option("--problem", problem, "the problem's id within its level (where not required, only this "
                                                  "problem, with --level)");
  l->check(CLI::Range(1, 3))->type_name("N");
  p->type_name("ID");
  if (required) l->required(), p->required();
  else l->default_str("all"), p->default_str("all");
}

void add_device_option(CLI::App* cmd, int& device) {
  cmd->add_option("--device", device, "the GPU's ordinal")->type_name("N")->capture_default_str();
}

std::string version_text() {
  const auto env = report::environment(0);
  std::ostringstream s;
  s << "kbench " << KBENCH_VERSION << "\nlibtorch " << env["libtorch"].get<std::string>()
    << (launch::built_with_cuda() ? " (CUDA)" : " (CPU only)") << "\nNVRTC " << env["nvrtc"].get<std::string>() << "\n";
  if (env["gpu"].is_null()) {
    s << "GPU: no GPU (" << env["gpu_absent"].get<std::string>() << ")";
  } else {
    s << "CUDA runtime " << env["cuda_runtime"].get<std::string>() << ", driver " << env["driver"].get<std::string>()
      << "\nGPU: " << env["gpu"].get<std::string>() << " (" << env["arch"].get<std::string>() << ")";
  }
  return s.str();
}

void add_commands(CLI::App& app, GlobalOptions& global, int& exit_code) {
  add_problem_commands(app, global, exit_code);
  add_evaluation_commands(app, global, exit_code);
  add_sweep_commands(app, global, exit_code);
  add_service_commands(app, global, exit_code);

  auto* reference = app.add_subcommand("__options-reference", "");
  reference->group("");  // hidden: the README's reference, which tests/readme checks against it
  reference->callback([&app, &exit_code] {
    std::cout << options_reference(app);
    exit_code = 0;
  });
}

}  // namespace kbench::cli
