// The compiled baseline where none is recorded for this GPU (--compiled on-demand): made on this
// machine by scripts/tools/compile_baselines.py (torch.compile, inductor's default mode, as
// KernelBench compiles; timed with kbench's protocol), in processes that load no submission's code,
// under the GPUs' locks (sandbox/gpu_lock.h). The figures are kept in a record per machine, its GPU
// model, PyTorch and kbench version (machine_compiled_record), and inductor's artefacts in the cache
// beside it, so that a problem's compile is paid once per machine.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "problems/catalog.h"

namespace kbench::sandbox {

// The command line of scripts/tools/compile_baselines.py (after the Python) that makes compiled
// figures into `record` on `devices`, under their GPU locks; callers add what they choose.
std::vector<std::string> compile_baselines_arguments(const std::filesystem::path& root, const std::filesystem::path& record,
                                                     const std::vector<int>& devices);

// <cache>/compiled/<gpu>/torch-<version>/kbench-<version>/compiled.json, in baselines/' layout.
std::filesystem::path machine_compiled_record(const std::string& gpu_name);

// The figures of one GPU model on this machine: recorded in baselines/, else made on demand.
class CompiledOnDemand {
 public:
  // `devices`: the GPUs (all of model `gpu_name`) that its sittings may time on.
  CompiledOnDemand(const problems::Catalog& catalog, std::string gpu_name, std::vector<int> devices);
  ~CompiledOnDemand();  // waits for a sitting under way: its figures are recorded for the next run
  CompiledOnDemand(const CompiledOnDemand&) = delete;
  CompiledOnDemand& operator=(const CompiledOnDemand&) = delete;

  // Starts making, in the background and in this order, the figures that `problems` ("level/id")
  // lack: a batch asks ahead for every problem it will evaluate.
  void make_ahead(const std::vector<std::pair<int, int>>& problems);

  // Whether the problem's figure (or the reason there is none) is recorded already.
  bool known(int level, int id);

  // The problem's figure as a timing entry (report::compiled_timing_entry), waiting for it to be made
  // where needed: recorded in baselines/, else in the machine's record; else made now. Where none can
  // be made, an entry without "mean_ms" says why. Never throws for a problem of the catalog.
  nlohmann::json figure(int level, int id);

 private:
  // Read from the files once found, then kept: a request's figure costs no file reads, and a
  // file written while this process evaluates (by a submission's native code, say) changes nothing.
  std::optional<nlohmann::json> known(const problems::Problem& problem);  // with mutex_ held
  void run_sittings();

  const problems::Catalog& catalog_;
  const std::string gpu_name_;
  const std::vector<int> devices_;
  const std::filesystem::path record_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<const problems::Problem*> queued_;  // not yet in a sitting
  std::set<const problems::Problem*> sitting_;    // in the sitting under way
  std::set<std::string> asked_;                   // problems queued or made (or failed) in this run
  std::map<std::string, nlohmann::json> found_;   // by problem key: the entries known() found
  std::string last_words_;                        // the last sitting's last line of output
  std::thread sittings_;
  bool running_ = false;
};

// Per GPU of `gpus`, the maker of its model's figures: GPUs of one model share one, whose sittings
// time on all of them. Empty where no GPU is visible.
std::vector<std::shared_ptr<CompiledOnDemand>> compiled_makers(const problems::Catalog& catalog, const std::vector<int>& gpus);

}  // namespace kbench::sandbox
