// Extension builds forked from a copy of a build pass's process (`kbench __prebuild-modelnew`),
// made once its Python had started, torch imported, and before any submission code ran. A build
// then starts as a fork of that copy instead of a fresh `kbench __build-extension` process, which
// would start Python and import torch again, a second time for the same file. The copy only forks:
// it runs no submission code, and each build runs in a fork of its own, as in a fresh process, with
// the environment the fresh process would have had.
//
// A fork carries only the thread that made it. By then `import torch` has started OpenMP's pool (one
// thread per core, PyTorch 2.11) and torch.utils.cpp_extension the CUDA driver's thread, all idle;
// a build runs neither OpenMP nor CUDA work (it plans, runs compilers, and imports the library it
// built), so it needs none of them: PyTorch's DataLoader forks its workers past the same threads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/child_process.h"

namespace kbench::compile {

// Makes the copy. Call with this process's Python started (python::start) and no submission code
// run yet, on the thread that started Python. Returns "" or why no copy was made (builds then
// start fresh processes).
std::string start_build_forks();

// Ends the copy and waits for it, so that this process's children's CPU time includes the builds'.
void stop_build_forks();

// Why builds of this process start fresh processes ("" while a copy forks them), for the record.
const std::string& why_builds_start_fresh();

// Runs `kbench __build-extension`'s work on `request` (what it reads) in a fork of the copy,
// with `environment` ("NAME=value" entries) as its whole environment; its output is captured as
// run_child captures a child's. nullopt where no build was started (no copy was made, it has gone,
// it could not fork): a fresh process builds instead. A copy that dies with a build in flight fails
// that build (status -1), which is then not cached.
std::optional<ChildResult> run_forked_build(const nlohmann::json& request, const std::vector<std::string>& environment);

}  // namespace kbench::compile
