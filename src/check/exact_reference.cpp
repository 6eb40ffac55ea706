#include "check/exact_reference.h"

#include <ATen/Context.h>

#include "check/reference_outputs.h"

namespace kbench::check {

namespace {

// TF32 off for the scope, then exactly as it was (the process-state watch compares these flags).
class Tf32Off {
 public:
  Tf32Off() : cudnn_(at::globalContext().allowTF32CuDNN()), cublas_(at::globalContext().allowTF32CuBLAS()) {
    if (cudnn_) at::globalContext().setAllowTF32CuDNN(false);
    if (cublas_) at::globalContext().setAllowTF32CuBLAS(false);
  }
  ~Tf32Off() {
    if (cudnn_) at::globalContext().setAllowTF32CuDNN(true);
    if (cublas_) at::globalContext().setAllowTF32CuBLAS(true);
  }
  Tf32Off(const Tf32Off&) = delete;
  Tf32Off& operator=(const Tf32Off&) = delete;

 private:
  bool cudnn_, cublas_;
};

}  // namespace

Comparison with_exact_reference_retry(Comparison first, c10::IValue& output, const Tolerance& tolerance,
                                      problems::Reference& reference, const TrialInputs& made_from, bool offload) {
  if (first.verdict != Verdict::value_mismatch) return first;
  c10::IValue exact;
  with_output_in_host_memory(output, offload, [&] {
    Tf32Off tf32_off;
    exact = run_reference(reference, reference.make_inputs(made_from.seed, made_from.distribution), made_from.seed);
  });
  const auto second = compare_outputs(exact, output, tolerance);
  if (second.verdict != Verdict::correct) return first;
  first.verdict = Verdict::correct;
  first.message = "matched the reference computed without TF32 (against PyTorch's default TF32 convolutions: " +
                  first.message + ")";
  first.max_abs_error = second.max_abs_error;
  first.max_rel_error = second.max_rel_error;
  first.smallest_scaled_atol = second.smallest_scaled_atol;
  first.mismatched = 0;
  return first;
}

}  // namespace kbench::check
