#include "check/reference_outputs.h"

#include <algorithm>
#include <chrono>

namespace kbench::check {

c10::IValue map_tensors(const c10::IValue& value, const std::function<at::Tensor(const at::Tensor&)>& fn) {
  if (value.isTensor()) return fn(value.toTensor());
  if (value.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& e : value.toTupleRef().elements()) items.push_back(map_tensors(e, fn));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (value.isList()) {
    c10::impl::GenericList items(value.toList().elementType());
    for (const auto& e : value.toList()) items.push_back(map_tensors(e, fn));
    return items;
  }
  return value;
}

void collect_tensors(const c10::IValue& value, std::vector<at::Tensor>& out) {
  if (value.isTensor()) out.push_back(value.toTensor());
  else if (value.isTuple())
    for (const auto& e : value.toTupleRef().elements()) collect_tensors(e, out);
  else if (value.isList())
    for (const auto& e : value.toList().vec()) collect_tensors(e, out);
}

void with_output_in_host_memory(c10::IValue& output, bool offload, const std::function<void()>& compute) {
  if (!offload) return compute();
  std::vector<c10::Device> devices;  // each tensor's, in order: back where it was, a CPU one too
  const auto host = map_tensors(output, [&](const at::Tensor& t) {
    devices.push_back(t.device());
    return t.to(at::kCPU);
  });
  output = c10::IValue();  // its device memory free for the reference
  const auto restore = [&] {
    size_t i = 0;
    output = map_tensors(host, [&](const at::Tensor& t) { return t.to(devices[i++]); });
  };
  try {
    compute();
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

bool all_finite(const c10::IValue& value) {
  // One min/max pass and one wait for the device per tensor: aminmax propagates NaN, and an
  // infinity is an extreme. It holds no temporary the size of its input, which isfinite() does (a
  // multi-GB output's did not fit beside the two outputs under --gpu-memory 22).
  std::vector<at::Tensor> tensors;
  collect_tensors(value, tensors);
  for (const auto& t : tensors) {
    if (!t.is_floating_point() || t.numel() == 0) continue;
    // PyTorch 1.13 has no half-precision aminmax on the CPU; there a float copy costs no GPU memory.
    const auto [lo, hi] = at::aminmax(t.is_cuda() || t.element_size() >= 4 ? t : t.to(at::kFloat));
    if (!at::isfinite(at::stack({lo, hi})).all().item<bool>()) return false;
  }
  return true;
}

int64_t bytes_of(const c10::IValue& value) {
  std::vector<at::Tensor> tensors;
  collect_tensors(value, tensors);
  int64_t bytes = 0;
  for (const auto& t : tensors) bytes += static_cast<int64_t>(t.numel() * t.element_size());
  return bytes;
}

ReferenceOutputCache::ReferenceOutputCache(int64_t max_bytes, double copy_bytes_per_ms)
    : max_bytes_(max_bytes), copy_bytes_per_ms_(copy_bytes_per_ms) {}

c10::IValue ReferenceOutputCache::get(uint64_t input_seed, const std::string& distribution, uint64_t forward_seed,
                                      const std::function<c10::IValue()>& compute) {
  const auto key = std::make_tuple(input_seed, distribution, forward_seed);
  if (const auto it = kept_.find(key); it != kept_.end()) {
    ++reused_;
    const auto device = it->second.device;
    return map_tensors(it->second.host, [&](const at::Tensor& t) { return t.to(device, /*non_blocking=*/false, /*copy=*/true); });
  }
  const auto start = std::chrono::steady_clock::now();
  auto output = compute();
  const double compute_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ++computed_;

  std::vector<at::Tensor> tensors;
  collect_tensors(output, tensors);
  if (tensors.empty()) return output;
  const int64_t bytes = bytes_of(output);
  // Kept only if bringing it back (at the assumed rate, twice over for safety) beats computing it.
  const bool pays = compute_ms > 2 * static_cast<double>(bytes) / copy_bytes_per_ms_;
  if (pays && kept_bytes_ + bytes <= max_bytes_) {
    kept_.emplace(key, Kept{map_tensors(output, [](const at::Tensor& t) { return t.to(at::kCPU, /*non_blocking=*/false, /*copy=*/true); }),
                            tensors.front().device()});
    kept_bytes_ += bytes;
  }
  return output;
}

void ReferenceOutputCache::clear() {
  kept_.clear();
  kept_bytes_ = 0;
}

}  // namespace kbench::check
