// One more call of the candidate's forward, taken apart: every kbench.launch with its kernel's
// attributes (registers, shared memory, theoretical occupancy) and GPU time, and the PyTorch ops
// the host program ran between launches with theirs.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>
#include <torch/script.h>

#include "compile/host_program.h"
#include "launch/cuda_driver.h"

namespace kbench::profile {

// The L2 is flushed first, as before a timed trial. The stream is held while forward enqueues its
// work and released when forward returns, so the events around each launch and op time the GPU's
// work back to back, not the host's launch gaps (which the timed mean includes; the record gives
// both). A forward that waits for the GPU while it is held is released after a second, and the
// record says its gaps are in the times. The record's "candidate" part of `profile`; GPU builds only.
nlohmann::json profile_candidate(const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params,
                                 const std::vector<c10::IValue>& inputs, const launch::DeviceInfo& gpu);

// Fills the L2 with other data (a write of twice its size on the current stream), as the timed
// trials do before each call.
void flush_l2(const launch::DeviceInfo& gpu);

// For a worker running under Nsight Compute: one forward inside the NVTX range kNvtxRange, so that
// ncu (--nvtx-include) profiles the candidate's kernels of that call and nothing else.
inline constexpr const char* kNvtxRange = "kbench_candidate";
void run_for_ncu(const compile::HostProgram& host, const c10::Dict<std::string, at::Tensor>& params,
                 const std::vector<c10::IValue>& inputs);

}  // namespace kbench::profile
