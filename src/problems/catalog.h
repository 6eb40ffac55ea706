// The problem catalog: problems/manifest.json, the reference sources beside it, and where each
// problem's TorchScript archive lives in the cache.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kbench::problems {

struct InputSpec {
  std::vector<int64_t> shape;  // empty for a scalar
  std::string dtype;           // "float32", "int64", "bool", or "float" for a Python scalar
  bool is_scalar = false;
};

// GPU memory a problem's evaluation was measured to need: `bytes` at its peak or, with `more_than`,
// the limit it ran out of memory under. 0 bytes: not measured.
struct MemoryNeed {
  int64_t bytes = 0;
  bool more_than = false;
  bool known_to_exceed(int64_t limit) const { return bytes > 0 && (more_than ? limit <= bytes : limit < bytes); }
};

struct Problem {
  int level = 0;
  int id = 0;
  std::string name;        // e.g. "19_ReLU"
  std::string file;        // relative to the project root, e.g. "level1/19_ReLU.py"
  std::string sha256;      // of the source file, keys the archive
  std::string min_torch;   // empty when any supported PyTorch works
  std::string skip_reason; // why older PyTorch cannot script it
  std::vector<InputSpec> inputs;
  int64_t input_bytes = 0;
  int64_t parameter_count = 0;
  int64_t weight_bytes = 0;
  double atol = 1e-2;      // KernelBench's fp32 tolerance unless the manifest overrides it
  double rtol = 1e-2;
  bool stochastic = false;
  std::string input_generator;  // TorchScript source of make_inputs(device, dist)
  // From problems/degenerate.json (kbench degenerate): how a comparison at KernelBench's tolerance
  // fails to tell answers apart on this problem ("constant", "below_tolerance", ...), and a line
  // that says so; empty for most problems.
  std::vector<std::string> degenerate_kinds;
  std::string degeneracy_note;
  // From problems/footprint.json (kbench footprint --write): the GPU memory an evaluation holds at
  // its peak as it usually holds its tensors, and (measured where that did not fit) with the
  // candidate's output waiting in host memory while the reference runs.
  MemoryNeed footprint, footprint_offloaded;

  std::string key() const;   // "level1/19_ReLU"
  std::string spec() const;  // "1:19", as kbench's scripts take problems (--problems, --only)
};

class Catalog {
 public:
  // Reads <root>/problems/manifest.json (and degenerate.json beside it, where present); throws
  // std::runtime_error with a one-line reason.
  static Catalog load(const std::filesystem::path& root);

  const Problem* find(int level, int id) const;
  const Problem& get(int level, int id) const;  // throws "unknown problem"
  const std::vector<Problem>& all() const { return problems_; }
  const std::filesystem::path& root() const { return root_; }

  std::filesystem::path source_path(const Problem& problem) const { return root_ / problem.file; }

 private:
  std::filesystem::path root_;
  std::vector<Problem> problems_;
};

Problem problem_from_json(const nlohmann::json& entry);

// A problem's facts as `kbench list --json` and serve's GET /v1/problems give them.
nlohmann::json to_json(const Problem& problem);

// Where `kbench degenerate --write` records its measurements.
std::filesystem::path degeneracy_file(const std::filesystem::path& root);
// Where `kbench footprint --write` records its measurements.
std::filesystem::path footprint_file(const std::filesystem::path& root);

// The project root: --root, else $KBENCH_ROOT, else the source tree kbench was built from.
std::filesystem::path project_root(const std::string& override_root = "");

// The archive cache: $KBENCH_CACHE, else $XDG_CACHE_HOME/kbench, else ~/.cache/kbench.
std::filesystem::path cache_dir();

// Where scripts/tools/export_problems.py puts a problem's model for this libtorch version; the name
// carries the source hash, so an edited problem never loads a stale archive.
std::filesystem::path archive_path(const Problem& problem, const std::string& torch_version);

}  // namespace kbench::problems
