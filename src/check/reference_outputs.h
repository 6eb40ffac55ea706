// Reference outputs kept between the samples of one problem: `kbench batch` checks many
// submissions of a problem in one worker, on the same seeds, so the reference's answer for a seed
// is the same every time. Kept in host memory, never on the GPU while a candidate runs (a kernel
// that reads device memory it was not given must not find the answer there), and only where
// copying one back costs less than computing it again: a multi-GB elementwise output recomputes
// faster than it crosses PCIe; a deep model's small output does not.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include <torch/script.h>

namespace kbench::check {

// Applies `fn` to every tensor of a (nested tuple/list) value, keeping its structure.
c10::IValue map_tensors(const c10::IValue& value, const std::function<at::Tensor(const at::Tensor&)>& fn);

// Every tensor of a (nested tuple/list) value, in order.
void collect_tensors(const c10::IValue& value, std::vector<at::Tensor>& out);

// Whether every floating-point tensor of a value is finite; the bytes of all its tensors.
bool all_finite(const c10::IValue& value);
int64_t bytes_of(const c10::IValue& value);

// Runs `compute` (the reference's forward) with the candidate's `output` waiting in host memory when
// `offload` is set: on a GPU too small for it beside the reference's inputs, temporaries and output
// (--gpu-memory). It is back on its GPU when this returns, also when `compute` throws; `compute`
// drops the inputs when it is done with them, so that the two outputs need no more room than the
// inputs and the candidate's output did.
void with_output_in_host_memory(c10::IValue& output, bool offload, const std::function<void()>& compute);

class ReferenceOutputCache {
 public:
  // `max_bytes`: host memory the kept outputs may hold (it counts against the worker's host memory
  // budget). `copy_bytes_per_ms`: the host-to-device copy rate a kept output is assumed to come back at.
  explicit ReferenceOutputCache(int64_t max_bytes = int64_t{2} << 30, double copy_bytes_per_ms = 10e6);

  // The reference's output for the inputs made from `input_seed` and `distribution`, run with
  // `forward_seed`, on the GPU: a kept one copied back, or `compute()` (which must synchronise the
  // device, so that its time is the GPU's) run, and its result kept when that pays.
  c10::IValue get(uint64_t input_seed, const std::string& distribution, uint64_t forward_seed,
                  const std::function<c10::IValue()>& compute);

  void clear();  // the problem changed, or its reference was damaged
  int64_t reused() const { return reused_; }
  int64_t computed() const { return computed_; }

 private:
  struct Kept {
    c10::IValue host;  // CPU copy
    c10::Device device;
  };
  int64_t max_bytes_;
  double copy_bytes_per_ms_;
  int64_t kept_bytes_ = 0;
  int64_t reused_ = 0, computed_ = 0;
  std::map<std::tuple<uint64_t, std::string, uint64_t>, Kept> kept_;
};

}  // namespace kbench::check
