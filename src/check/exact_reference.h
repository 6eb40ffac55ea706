// A second comparison, with the reference computed without TF32. PyTorch runs cuDNN convolutions in
// TF32 by default (torch.backends.cudnn.allow_tf32: operands rounded to a 10-bit mantissa), and so
// does the reference, as in KernelBench. On large inputs that rounding alone can put the reference
// outside kbench's tolerance of the exact result: on the H100, a transposed-convolution kernel for
// L2#2 that accumulates exact fp32 products differed from the reference by up to 0.0126 on
// logistic_x10 inputs (tolerance about 0.007), by the reference's error, not its own. So a candidate
// that fails kbench's rule against the reference is compared once more with the reference run with
// TF32 off (cuDNN and cuBLAS), and passes if it matches that one. KernelBench's rule keeps the
// reference as PyTorch's defaults compute it.
#pragma once

#include <ATen/core/ivalue.h>

#include "check/compare.h"
#include "check/correctness.h"
#include "problems/reference.h"

namespace kbench::check {

// `first`: the comparison with the reference's output. Where kbench's rule found values out of
// tolerance there (value_mismatch: rounding cannot change a structure, shape or dtype), the
// reference runs again with TF32 off on the trial's inputs, drawn again from `made_from` (and run
// with its seed, as every trial's reference is), and kbench's verdict, message and errors become
// those of the comparison with that output if it passes (the message says so). `output` may be
// moved to host memory meanwhile (`offload`), as for the first reference run.
Comparison with_exact_reference_retry(Comparison first, c10::IValue& output, const Tolerance& tolerance,
                                      problems::Reference& reference, const TrialInputs& made_from, bool offload);

}  // namespace kbench::check
