// kbench list, show, prompt and doctor: the problems, and what this machine can do with them.
#include <iostream>
#include <memory>

#include "cli/command_support.h"
#include "log/number_text.h"
#include "report/doctor.h"
#include "report/prompt.h"

namespace kbench::cli {
namespace {

void add_list(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("list", "the problems with input sizes and parameter counts, and which are degenerate");
  auto level = std::make_shared<int>(0);
  auto id = std::make_shared<int>(0);  // list takes the filter options of the sweeps; --problem narrows to one line
  add_problem_options(cmd, *level, *id, /*required=*/false);
  cmd->callback([&g, &exit_code, level, id] {
    apply_logging(g);
    const auto catalog = load_catalog(g);
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& p : catalog.all()) {
      if ((*level && p.level != *level) || (*id && p.id != *id)) continue;
      if (g.json) {
        rows.push_back(problems::to_json(p));
        continue;
      }
      std::string kinds;
      for (const auto& k : p.degenerate_kinds) kinds += (kinds.empty() ? "  degenerate: " : ",") + k;
      std::printf("L%d %3d  %-58s %12s  %11lld params%s%s%s\n", p.level, p.id, p.name.c_str(), log::mib(p.input_bytes).c_str(),
                  static_cast<long long>(p.parameter_count), p.stochastic ? "  stochastic" : "",
                  p.min_torch.empty() ? "" : ("  needs torch>=" + p.min_torch).c_str(), kinds.c_str());
    }
    if (g.json) std::cout << rows.dump(2) << "\n";
    exit_code = 0;
  });
}

void print_problem(const problems::Problem& p, const std::string& source) {
  std::cout << "# " << p.key() << "  (" << p.file << ")\n# inputs:";
  for (const auto& in_spec : p.inputs) {
    std::cout << " " << in_spec.dtype;
    if (!in_spec.is_scalar) std::cout << nlohmann::json(in_spec.shape).dump();
  }
  std::cout << "  (" << log::mib(p.input_bytes) << ")  params: " << p.parameter_count << "  tolerance: atol=" << p.atol
            << " rtol=" << p.rtol << (p.stochastic ? "  stochastic" : "") << "\n";
  if (!p.degeneracy_note.empty()) std::cout << "# degenerate: " << p.degeneracy_note << "\n";
  std::cout << "\n" << source;
}

void add_show(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("show", "one problem's facts (degeneracy included) and its reference source");
  auto level = std::make_shared<int>(0), id = std::make_shared<int>(0);
  add_problem_options(cmd, *level, *id, /*required=*/true);
  cmd->callback([&g, &exit_code, level, id] {
    apply_logging(g);
    const auto catalog = load_catalog(g);
    const auto& p = catalog.get(*level, *id);
    const auto source = read_text(catalog.source_path(p));
    if (g.json) {
      auto j = problems::to_json(p);
      j["source"] = source;
      j["input_generator"] = p.input_generator;
      std::cout << j.dump(2) << "\n";
    } else {
      print_problem(p, source);
    }
    exit_code = 0;
  });
}

void add_prompt(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("prompt", "a one-shot prompt for a language model, KernelBench-style; with --feedback, "
                                           "the next refinement turn");
  auto level = std::make_shared<int>(0), id = std::make_shared<int>(0);
  auto with_gpu = std::make_shared<bool>(false);
  auto feedback = std::make_shared<std::string>(), previous = std::make_shared<std::string>();
  auto backend = std::make_shared<std::string>("cuda");
  add_problem_options(cmd, *level, *id, /*required=*/true);
  cmd->add_flag("--gpu", *with_gpu, "add this GPU's specifications");
  cmd->add_option("--backend", *backend, "cuda: kbench's .cu format; triton: a Triton ModelNew, as upstream's Triton "
                                         "backend asks")
      ->check(CLI::IsMember({"cuda", "triton"}))->capture_default_str();
  cmd->add_option("--feedback", *feedback, "an evaluation record (kbench eval --out): the next refinement turn")
      ->check(CLI::ExistingFile)->type_name("FILE");
  cmd->add_option("--previous", *previous, "the submission that record is about")
      ->type_name("FILE")->default_str("the record's submission path");
  cmd->callback([&g, &exit_code, level, id, with_gpu, feedback, previous, backend] {
    apply_logging(g);
    const auto catalog = load_catalog(g);
    const auto& p = catalog.get(*level, *id);
    report::PromptInput in;
    in.problem_name = p.name;
    in.degeneracy_note = p.degeneracy_note;
    in.reference_source = read_text(catalog.source_path(p));
    in.example_reference = read_text(catalog.source_path(catalog.get(1, 19)));
    in.backend = *backend;
    in.example_solution = read_text(catalog.root() / "level1" / (*backend == "triton" ? "19/triton.py" : "19_ReLU.cu"));
    if (*with_gpu) in.gpu = gpu_for("prompt --gpu", 0);
    if (!feedback->empty()) {
      in.feedback = nlohmann::json::parse(read_text(*feedback));
      const std::string path = !previous->empty() ? *previous : (*in.feedback)["submission"].value("path", "");
      in.previous_submission = path.empty() ? "" : read_text(path);
    }
    const auto text = report::build_prompt(in);
    if (g.json) std::cout << nlohmann::json{{"prompt", text}}.dump(2) << "\n";
    else std::cout << text;
    exit_code = 0;
  });
}

void add_doctor(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* cmd = app.add_subcommand("doctor", "checks GPU, driver, NVRTC, libtorch, ModelNew's toolchain, problems, archives "
                                           "and cache; says how to fix what is missing");
  cmd->callback([&g, &exit_code] {
    apply_logging(g);
    const auto checks = report::doctor_checks(g.root);
    std::cout << (g.json ? checks.dump(2) + "\n" : report::doctor_text(checks));
    exit_code = checks["ok"].get<bool>() ? 0 : 1;
  });
}

}  // namespace

void add_problem_commands(CLI::App& app, GlobalOptions& g, int& exit_code) {
  add_list(app, g, exit_code);
  add_show(app, g, exit_code);
  add_prompt(app, g, exit_code);
  add_doctor(app, g, exit_code);
}

}  // namespace kbench::cli
