#include <cstdio>
#include <iostream>
#include <unistd.h>

#include "cli/commands.h"
#include "compile/extension_build.h"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"kbench: KernelBench as a native tool. Checks CUDA kernels against PyTorch references and times them."};
  app.require_subcommand(1);
  app.fallthrough();  // global flags (--json, --root, -v) may follow the subcommand too
  kbench::cli::GlobalOptions global;
  int exit_code = 0;
  app.set_help_flag("-h,--help", "print the help: the commands, or with a command, its options");
  app.set_version_flag("--version", [] { return kbench::cli::version_text(); },
                       "print the versions of kbench, libtorch, NVRTC, the CUDA runtime and driver, and the GPU");
  app.add_flag("--json", global.json, "machine-readable JSON on stdout");
  app.add_option("--root", global.root, "the kbench checkout holding problems/ and level*/")
      ->type_name("DIR")->default_str("$KBENCH_ROOT, or the source tree kbench was built from");
  app.add_flag_function("-v,--verbose", [&](int64_t n) { global.verbosity += static_cast<int>(n); }, "more log output");
  app.add_flag_function("-q,--quiet", [&](int64_t n) { global.verbosity -= static_cast<int>(n); }, "only errors");
  kbench::cli::add_commands(app, global, exit_code);
  try {
    kbench::compile::requested_build_route();  // a mistyped $KBENCH_EXTENSION_BUILD stops every command at once
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kbench: " << e.what() << " (see kbench --help)\n";
    return 2;
  } catch (const std::exception& e) {
    // Anything a command could not handle: one line, no stack trace.
    std::string what = e.what();
    std::cerr << "kbench: error: " << what.substr(0, what.find('\n')) << "\n";
    return 2;
  }
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const int code = run(argc, argv);
  // Every command has closed its files by now. Skipping static destructors saves libtorch's
  // deregistration of every operator at exit, about 0.1 s of each command's wall time.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  _exit(code);
}
