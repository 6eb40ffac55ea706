// `kbench ci`: re-evaluates a collection of kernels (the project's reference kernels by default) as a
// batch, and compares each verdict and speedup with the record of this GPU (results/ci/<gpu>.json).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/regression.h"
#include "sandbox/eval_options.h"

namespace kbench::sandbox {

struct CiOptions {
  EvalSettings settings;           // every kernel's evaluation; compile_only: as if there were no GPU
  std::string root;                // the kbench checkout ("" = default)
  std::filesystem::path dir;       // the kernels ("" = the checkout's levelN/<id>_<Name>.cu)
  std::filesystem::path recorded;  // the record to compare with ("" = results/ci/<gpu>.json)
  std::filesystem::path out;       // where this run's records are kept ("" = a scratch file, removed)
  bool record = false;             // write this run's results as the new record (needs a GPU)
  bool progress = true;
  std::string worker_exe;
};

struct CiOutcome {
  std::vector<report::RegressionRow> rows;
  int regressed = 0, skipped = 0, refused = 0;
  bool gpu_present = false;
  std::filesystem::path recorded;  // the record compared with, and written with `record`
  nlohmann::json to_json() const;
};

// Throws std::runtime_error for what cannot be done: --record without a GPU, or under --torch-ops forbid.
CiOutcome run_ci(const CiOptions& options);

}  // namespace kbench::sandbox
