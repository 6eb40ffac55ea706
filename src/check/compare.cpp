#include "check/compare.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "check/compare_kernels.h"

namespace kbench::check {
namespace {

constexpr int64_t kChunk = int64_t{1} << 26;  // elements per pass: bounds temporary memory

std::string shape_str(const at::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

void merge(Comparison& into, const Comparison& part) {
  into.max_abs_error = std::max(into.max_abs_error, part.max_abs_error);
  into.max_rel_error = std::max(into.max_rel_error, part.max_rel_error);
  if (part.smallest_scaled_atol >= 0 &&
      (into.smallest_scaled_atol < 0 || part.smallest_scaled_atol < into.smallest_scaled_atol))
    into.smallest_scaled_atol = part.smallest_scaled_atol;
  into.mismatched += part.mismatched;
  into.upstream_mismatched += part.upstream_mismatched;
  if (into.verdict == Verdict::correct && part.verdict != Verdict::correct) {
    into.verdict = part.verdict;
    into.message = part.message;
  }
  if (into.kernelbench_verdict == Verdict::correct && part.kernelbench_verdict != Verdict::correct) {
    into.kernelbench_verdict = part.kernelbench_verdict;
    into.kernelbench_message = part.kernelbench_message;
  }
}

// A structural mismatch fails both rules alike.
Comparison structural(Verdict v, const std::string& message) {
  Comparison c;
  c.verdict = c.kernelbench_verdict = v;
  c.message = c.kernelbench_message = message;
  return c;
}

// Chunks of the flattened tensor as double (integer outputs) or as they are (floating point).
template <typename Fn>
void for_each_chunk(const at::Tensor& flat, Fn&& fn) {
  const int64_t n = flat.numel();
  for (int64_t start = 0; start < n; start += kChunk) {
    auto part = flat.narrow(0, start, std::min(kChunk, n - start));
    fn(start, part.is_floating_point() ? part : part.to(at::kDouble));
  }
}

// Mean |value|, non-finite values counting as 0: the output's magnitude.
double mean_abs(const at::Tensor& flat) {
  double sum = 0.0;
  for_each_chunk(flat, [&](int64_t, const at::Tensor& r) { sum += r.abs().nan_to_num_(0, 0, 0).sum(at::kDouble).item<double>(); });
  return flat.numel() > 0 ? sum / static_cast<double>(flat.numel()) : 0.0;
}

// The elementwise rules with PyTorch's ops, chunk by chunk: what the fused kernels compute
// (check/compare_kernels.h), for outputs they do not take (other dtypes, CPU tensors).
ElementwiseCounts compare_with_torch(const at::Tensor& r_flat, const at::Tensor& c_flat, double rtol,
                                   const std::function<double(double)>& atol_for, double upstream_tolerance, bool robustness) {
  ElementwiseCounts f;
  f.mean_abs = mean_abs(r_flat);
  f.atol = atol_for(f.mean_abs);
  const double atol_k = f.atol;
  const double inf = std::numeric_limits<double>::infinity();
  // Passes over each chunk are what a comparison costs (outputs reach GBs): KernelBench's rule is
  // not evaluated in robustness trials (KernelBench has none), the NaN count only for a failure's
  // message.
  for_each_chunk(r_flat, [&](int64_t start, const at::Tensor& r) {
    auto x = c_flat.narrow(0, start, r.numel());
    if (x.scalar_type() != r.scalar_type()) x = x.to(r.scalar_type());
    const auto r_abs = r.abs();
    const auto diff = (x - r).abs();
    // Equal values (inf == inf, whose difference is NaN) and NaN where the reference has NaN pass,
    // as in torch.allclose.
    const auto exempt = x.eq(r) | (r.isnan() & x.isnan());
    const auto bad = diff.le(r_abs * rtol + atol_k).logical_or_(exempt).logical_not_();
    const int64_t bad_count = bad.sum().item<int64_t>();
    if (r.numel() > 0) {
      const auto finite_diff = diff.nan_to_num(0.0, inf, -inf);
      f.max_abs_error = std::max(f.max_abs_error, finite_diff.max().item<double>());
      f.max_rel_error = std::max(f.max_rel_error, (finite_diff / r_abs.clamp_min(1e-12)).max().item<double>());
    }
    if (bad_count > 0) {
      if (f.first_bad < 0) f.first_bad = start + bad.nonzero()[0][0].item<int64_t>();
      f.nan_bad += (x.isnan() & r.isnan().logical_not()).sum().item<int64_t>();
    }
    f.bad += bad_count;
    if (!robustness) {
      // torch.allclose(r, x, t, t): the relative part scales x; NaN is close to nothing.
      const auto close = diff.le(x.abs() * upstream_tolerance + upstream_tolerance).logical_and_(diff.isfinite());
      const auto bad_upstream = close.logical_or_(x.eq(r)).logical_not_();
      const int64_t count = bad_upstream.sum().item<int64_t>();
      if (count > 0 && f.first_bad_upstream < 0) f.first_bad_upstream = start + bad_upstream.nonzero()[0][0].item<int64_t>();
      f.bad_upstream += count;
    }
  });
  return f;
}

std::string mismatch_message(const std::string& where, int64_t bad, int64_t n, const std::string& tolerance,
                             double max_abs, int64_t first_bad, int64_t nan_bad) {
  std::ostringstream s;
  s << where << bad << " of " << n << " values outside " << tolerance << " (max abs error " << max_abs
    << ", first at flat index " << first_bad << ")";
  if (nan_bad > 0) s << "; " << nan_bad << " NaN where the reference has none";
  return s.str();
}

Comparison compare_tensors(const at::Tensor& ref, const at::Tensor& cand, const Tolerance& tol, const std::string& where) {
  if (ref.sizes() != cand.sizes())
    return structural(Verdict::shape_mismatch, where + "shape " + shape_str(cand) + ", expected " + shape_str(ref));
  if (ref.scalar_type() != cand.scalar_type())
    return structural(Verdict::dtype_mismatch, where + "dtype " + std::string(c10::toString(cand.scalar_type())) +
                                                   ", expected " + c10::toString(ref.scalar_type()));
  Comparison c;
  const auto r_flat = ref.reshape(-1);
  const auto c_flat = cand.to(ref.device()).reshape(-1);
  const int64_t n = r_flat.numel();
  const double upstream_tolerance = tolerance_of(tol.kernelbench);
  const auto atol_for = [&](double magnitude) { return kbench_atol(tol, magnitude); };
  auto f = fused_compare(r_flat, c_flat, tol.rtol, atol_for, upstream_tolerance);
  if (!f) f = compare_with_torch(r_flat, c_flat, tol.rtol, atol_for, upstream_tolerance, tol.robustness);
  const double magnitude = f->mean_abs, atol_k = f->atol;
  c.smallest_scaled_atol = atol_k;
  // KernelBench's rule is not evaluated in robustness trials: KernelBench has none.
  if (tol.robustness) f->bad_upstream = 0, f->first_bad_upstream = -1;
  c.max_abs_error = f->max_abs_error;
  c.max_rel_error = f->max_rel_error;
  c.mismatched = f->bad;
  c.upstream_mismatched = f->bad_upstream;
  const int64_t first_bad = f->first_bad, first_bad_upstream = f->first_bad_upstream, nan_bad = f->nan_bad;
  std::ostringstream upstream_tol, kbench_tol;
  upstream_tol << to_string(tol.kernelbench) << "'s atol=rtol=" << upstream_tolerance;
  kbench_tol << "atol=" << atol_k;
  if (atol_k != tol.atol) kbench_tol << " (from the output's mean |value| " << magnitude << ")";
  kbench_tol << " rtol=" << tol.rtol;
  if (c.mismatched > 0) {
    c.verdict = Verdict::value_mismatch;
    c.message = mismatch_message(where, c.mismatched, n, kbench_tol.str(), c.max_abs_error, first_bad, nan_bad);
  }
  if (c.upstream_mismatched > 0) {
    c.kernelbench_verdict = Verdict::value_mismatch;
    c.kernelbench_message =
        mismatch_message(where, c.upstream_mismatched, n, upstream_tol.str(), c.max_abs_error, first_bad_upstream, nan_bad);
  }
  return c;
}

Comparison compare_values(const c10::IValue& ref, const c10::IValue& cand, const Tolerance& tol, const std::string& where) {
  if (ref.isTensor()) {
    if (!cand.isTensor() || !cand.toTensor().defined())
      return structural(Verdict::shape_mismatch, where + "expected a tensor, got " + std::string(cand.tagKind()));
    return compare_tensors(ref.toTensor(), cand.toTensor(), tol, where);
  }
  if (ref.isTuple() || ref.isList()) {
    const auto r = ref.isTuple() ? ref.toTupleRef().elements().vec() : ref.toList().vec();
    if (!(cand.isTuple() || cand.isList()))
      return structural(Verdict::shape_mismatch, where + "expected a sequence of " + std::to_string(r.size()) +
                                                     ", got " + std::string(cand.tagKind()));
    const auto x = cand.isTuple() ? cand.toTupleRef().elements().vec() : cand.toList().vec();
    if (x.size() != r.size())
      return structural(Verdict::shape_mismatch,
                        where + "expected " + std::to_string(r.size()) + " outputs, got " + std::to_string(x.size()));
    Comparison c;
    for (size_t i = 0; i < r.size(); ++i) merge(c, compare_values(r[i], x[i], tol, where + "output[" + std::to_string(i) + "]: "));
    return c;
  }
  if (ref.isDouble() || ref.isInt()) {
    if (!(cand.isDouble() || cand.isInt()))
      return structural(Verdict::dtype_mismatch, where + "expected a number, got " + std::string(cand.tagKind()));
    // A number is compared as a one-element tensor would be: its own magnitude scales atol.
    const auto as_tensor = [](const c10::IValue& v) { return at::scalar_tensor(v.toScalar().toDouble(), at::kDouble); };
    return compare_tensors(as_tensor(ref), as_tensor(cand), tol, where);
  }
  return structural(Verdict::shape_mismatch, where + "unsupported reference output type " + std::string(ref.tagKind()));
}

}  // namespace

double scaled_atol(double atol, double mean_abs) { return atol * std::min(1.0, mean_abs); }

double kbench_atol(const Tolerance& tol, double mean_abs) {
  const double scaled = scaled_atol(tol.atol, mean_abs);
  return tol.robustness ? std::max(scaled, tol.rtol * mean_abs) : scaled;
}

Comparison compare_outputs(const c10::IValue& reference, const c10::IValue& candidate, const Tolerance& tol) {
  torch::NoGradGuard no_grad;
  return compare_values(reference, candidate, tol, "");
}

std::pair<int64_t, int64_t> fingerprint(const at::Tensor& t) {
  torch::NoGradGuard no_grad;
  // Sums of the bit patterns as 32-bit words where the size allows (reductions widen to int64 in
  // the kernel: no copy). The second digest sums two strided subsets, so moved words count too.
  auto words = t.contiguous().reshape(-1).view(at::kByte);  // 0-dim tensors cannot be viewed as bytes
  if (words.numel() % 4 == 0) words = words.view(at::kInt);
  auto sums = fused_word_sums(words);
  if (!sums)
    sums = std::array<int64_t, 3>{words.sum(at::kLong).item<int64_t>(),
                                  words.slice(0, 0, c10::nullopt, 3).sum(at::kLong).item<int64_t>(),
                                  words.slice(0, 1, c10::nullopt, 7).sum(at::kLong).item<int64_t>()};
  const auto [total, every_third, every_seventh] = *sums;
  return {total, static_cast<int64_t>(static_cast<uint64_t>(every_third) + 31u * static_cast<uint64_t>(every_seventh))};
}

Fingerprints fingerprints(const std::vector<c10::IValue>& values) {
  Fingerprints out;
  for (const auto& v : values) out.push_back(v.isTensor() ? fingerprint(v.toTensor()) : std::make_pair<int64_t, int64_t>(0, 0));
  return out;
}

bool is_running_statistic(const std::string& name) {
  const auto leaf = name.substr(name.rfind('.') + 1);  // the whole name when it has no '.'
  return leaf == "running_mean" || leaf == "running_var" || leaf == "num_batches_tracked";
}

Fingerprints fingerprints(const c10::Dict<std::string, at::Tensor>& tensors) {
  Fingerprints out;
  for (const auto& entry : tensors)
    if (!is_running_statistic(entry.key())) out.push_back(fingerprint(entry.value()));
  return out;
}

}  // namespace kbench::check
