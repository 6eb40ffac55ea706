#include "check/compare.h"

#include <algorithm>
#include <sstream>

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
  into.mismatched += part.mismatched;
  if (into.verdict == Verdict::correct && part.verdict != Verdict::correct) {
    into.verdict = part.verdict;
    into.message = part.message;
  }
}

Comparison compare_tensors(const at::Tensor& ref, const at::Tensor& cand, const Tolerance& tol, const std::string& where) {
  Comparison c;
  if (ref.sizes() != cand.sizes()) {
    c.verdict = Verdict::shape_mismatch;
    c.message = where + "shape " + shape_str(cand) + ", expected " + shape_str(ref);
    return c;
  }
  if (ref.scalar_type() != cand.scalar_type()) {
    c.verdict = Verdict::dtype_mismatch;
    c.message = where + "dtype " + std::string(c10::toString(cand.scalar_type())) + ", expected " +
                c10::toString(ref.scalar_type());
    return c;
  }
  const auto r_flat = ref.reshape(-1);
  const auto c_flat = cand.to(ref.device()).reshape(-1);
  const int64_t n = r_flat.numel();
  int64_t first_bad = -1, nan_bad = 0;
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t len = std::min(kChunk, n - start);
    auto r = r_flat.narrow(0, start, len);
    auto x = c_flat.narrow(0, start, len);
    if (!r.is_floating_point()) {
      r = r.to(at::kDouble);
      x = x.to(at::kDouble);
    }
    const auto r_nan = r.isnan();
    const auto x_nan = x.isnan();
    const auto diff = (x - r).abs();
    // inf == inf of the same sign has diff NaN; count it equal, as torch.allclose does.
    const auto same = x.eq(r);
    const auto within = diff.le(tol.atol + tol.rtol * r.abs()) | same | (r_nan & x_nan);
    const auto bad = within.logical_not();
    const int64_t bad_count = bad.sum().item<int64_t>();
    nan_bad += (x_nan & r_nan.logical_not()).sum().item<int64_t>();
    const auto finite_diff = diff.masked_fill(same | diff.isnan(), 0);
    if (len > 0) {
      c.max_abs_error = std::max(c.max_abs_error, finite_diff.max().item<double>());
      const auto rel = finite_diff / r.abs().clamp_min(1e-12);
      c.max_rel_error = std::max(c.max_rel_error, rel.max().item<double>());
    }
    if (bad_count > 0 && first_bad < 0) first_bad = start + bad.nonzero()[0][0].item<int64_t>();
    c.mismatched += bad_count;
  }
  if (c.mismatched > 0) {
    c.verdict = Verdict::value_mismatch;
    std::ostringstream s;
    s << where << c.mismatched << " of " << n << " values outside atol=" << tol.atol << " rtol=" << tol.rtol
      << " (max abs error " << c.max_abs_error << ", first at flat index " << first_bad << ")";
    if (nan_bad > 0) s << "; " << nan_bad << " NaN where the reference has none";
    c.message = s.str();
  }
  return c;
}

Comparison compare_values(const c10::IValue& ref, const c10::IValue& cand, const Tolerance& tol, const std::string& where) {
  Comparison c;
  if (ref.isTensor()) {
    if (!cand.isTensor() || !cand.toTensor().defined()) {
      c.verdict = Verdict::shape_mismatch;
      c.message = where + "expected a tensor, got " + std::string(cand.tagKind());
      return c;
    }
    return compare_tensors(ref.toTensor(), cand.toTensor(), tol, where);
  }
  if (ref.isTuple() || ref.isList()) {
    const auto r = ref.isTuple() ? ref.toTupleRef().elements().vec() : ref.toList().vec();
    if (!(cand.isTuple() || cand.isList())) {
      c.verdict = Verdict::shape_mismatch;
      c.message = where + "expected a sequence of " + std::to_string(r.size()) + ", got " + std::string(cand.tagKind());
      return c;
    }
    const auto x = cand.isTuple() ? cand.toTupleRef().elements().vec() : cand.toList().vec();
    if (x.size() != r.size()) {
      c.verdict = Verdict::shape_mismatch;
      c.message = where + "expected " + std::to_string(r.size()) + " outputs, got " + std::to_string(x.size());
      return c;
    }
    for (size_t i = 0; i < r.size(); ++i) merge(c, compare_values(r[i], x[i], tol, where + "output[" + std::to_string(i) + "]: "));
    return c;
  }
  if (ref.isDouble() || ref.isInt()) {
    if (!(cand.isDouble() || cand.isInt())) {
      c.verdict = Verdict::dtype_mismatch;
      c.message = where + "expected a number, got " + std::string(cand.tagKind());
      return c;
    }
    const double a = ref.toScalar().toDouble(), b = cand.toScalar().toDouble();
    c.max_abs_error = std::abs(a - b);
    if (!(c.max_abs_error <= tol.atol + tol.rtol * std::abs(a))) {
      c.verdict = Verdict::value_mismatch;
      c.message = where + "value " + std::to_string(b) + ", expected " + std::to_string(a);
    }
    return c;
  }
  c.verdict = Verdict::shape_mismatch;
  c.message = where + "unsupported reference output type " + std::string(ref.tagKind());
  return c;
}

}  // namespace

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
  const auto total = words.sum(at::kLong).item<int64_t>();
  const auto every_third = words.slice(0, 0, c10::nullopt, 3).sum(at::kLong).item<int64_t>();
  const auto every_seventh = words.slice(0, 1, c10::nullopt, 7).sum(at::kLong).item<int64_t>();
  return {total, static_cast<int64_t>(static_cast<uint64_t>(every_third) + 31u * static_cast<uint64_t>(every_seventh))};
}

Fingerprints fingerprints(const std::vector<c10::IValue>& values) {
  Fingerprints out;
  for (const auto& v : values) out.push_back(v.isTensor() ? fingerprint(v.toTensor()) : std::make_pair<int64_t, int64_t>(0, 0));
  return out;
}

Fingerprints fingerprints(const c10::Dict<std::string, at::Tensor>& tensors) {
  Fingerprints out;
  for (const auto& entry : tensors) out.push_back(fingerprint(entry.value()));
  return out;
}

}  // namespace kbench::check
