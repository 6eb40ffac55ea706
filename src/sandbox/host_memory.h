// The host memory a worker may hold during one request. A host program that hoards CPU tensors is
// stopped there: the lower the line, the less time a hoarder costs (on the H100 machine, filling 48
// GiB and giving it back took 4 to 14.5 s of the GPU's time, the largest single cost in the 200-mix),
// but an honest request must never reach it. The line is what the worker held when the request
// came, plus what the request may add: headroom for what any request adds (CUDA's context and
// libraries, a ModelNew's Python and extension, the kept reference outputs), the reference's
// weights twice (the archive read and the module it becomes) and the next problem's read ahead,
// and under --gpu-memory the candidate's output set aside; at most Budgets::host_memory_gib.
#pragma once

#include <nlohmann/json.hpp>

#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

namespace kbench::sandbox {

struct HostMemoryBudget {
  double start_gib = 0;      // resident when the request came (0: unknown)
  double allowance_gib = 0;  // what the request may add (0: none computed, the cap alone applies)
  double budget_gib = 0;     // the line: start + allowance, at most the cap
};

// `start_gib`: the worker's resident memory as the request is sent. The cap alone applies where
// the problem is not in the catalog, the start is unknown, or the worker runs under a profiler.
HostMemoryBudget host_memory_budget(const EvalRequest& request, const Budgets& budgets, double start_gib);

nlohmann::json to_json(const HostMemoryBudget& budget, double peak_gib);

}  // namespace kbench::sandbox
