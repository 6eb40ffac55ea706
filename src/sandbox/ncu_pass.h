// --ncu: after an evaluation whose candidate was profiled, its kernels run once more in a worker of
// their own started under Nsight Compute (one forward inside an NVTX range, kernels filtered by
// name), so that whatever happens under the profiler ends only that worker; the report is read
// back into the record's profile (profile/ncu.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sandbox/worker.h"

namespace kbench::sandbox {

// Kernel launches ncu profiles per evaluation: each is replayed once per metric pass.
inline constexpr int kNcuLaunchCount = 32;

// Adds record["profile"]["ncu"] when `request.ncu`: the figures per kernel (also merged into
// profile.candidate.kernels, with their bounds named again), or why there are none (no ncu, no
// profile of the candidate, ncu failed). `worker_exe` as for Worker (kForkWithoutExec: this
// executable). A worker of the caller's holding the same GPU must have finished first.
void add_ncu_figures(nlohmann::json& record, const EvalRequest& request, const Budgets& budgets,
                     const std::string& worker_exe);

}  // namespace kbench::sandbox
