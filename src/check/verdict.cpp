#include "check/verdict.h"

#include <array>
#include <utility>

namespace kbench::check {
namespace {

struct Entry {
  Verdict verdict;
  const char* name;
  const char* meaning;
};

constexpr std::array<Entry, 17> kVerdicts = {{
    {Verdict::correct, "correct", "matched the reference on every trial"},
    {Verdict::compile_error, "compile_error",
     "NVRTC rejected the device code, or a ModelNew's extension did not build; the record holds the full log"},
    {Verdict::host_error, "host_error",
     "the kbench:host block is missing or malformed, or the host program (a ModelNew's Python) failed"},
    {Verdict::launch_error, "launch_error", "kbench.launch was called with a wrong kernel, grid, block or argument list"},
    {Verdict::runtime_error, "runtime_error", "a kernel failed on the GPU (illegal address, trap, out of memory)"},
    {Verdict::timeout, "timeout", "the candidate exceeded its time budget and was killed"},
    {Verdict::crash, "crash", "the worker process died (signal or exit) while running the candidate"},
    {Verdict::shape_mismatch, "shape_mismatch", "an output has a different shape or structure than the reference"},
    {Verdict::dtype_mismatch, "dtype_mismatch", "an output has a different dtype than the reference"},
    {Verdict::value_mismatch, "value_mismatch", "values differ beyond tolerance, or NaN/Inf where the reference has none"},
    {Verdict::input_mutated, "input_mutated", "the candidate wrote into its inputs"},
    {Verdict::no_custom_kernel, "no_custom_kernel",
     "forward launched no kernel of the submission, or its outputs are right without the kernels"},
    {Verdict::inconsistent, "inconsistent",
     "outputs of timed runs differ from the checked runs (caching, stream tricks), or kernels were still compiled or "
     "autotuned in them"},
    {Verdict::fragile, "fragile",
     "right on the problem's own inputs, wrong on inputs from other distributions (KernelBench would say correct)"},
    {Verdict::not_checked, "not_checked", "compiled, but correctness was not checked (no GPU, or --compile-only)"},
    {Verdict::unsupported_backend, "unsupported_backend",
     "a ModelNew whose kernels use a backend kbench does not run (TileLang, CuTe, ...; Triton where it is not "
     "installed or no GPU runs it): not evaluated"},
    {Verdict::state_changed, "state_changed",
     "the submission changed what the reference and the baselines run with (a kernel of PyTorch's dispatcher, a "
     "cuDNN or TF32 flag, a CUDA limit, the current stream): nothing measured beside it is kept"},
}};

}  // namespace

std::string to_string(Verdict v) {
  for (const auto& e : kVerdicts)
    if (e.verdict == v) return e.name;
  return "unknown";
}

std::optional<Verdict> verdict_from_string(const std::string& s) {
  for (const auto& e : kVerdicts)
    if (s == e.name) return e.verdict;
  return std::nullopt;
}

std::string describe(Verdict v) {
  for (const auto& e : kVerdicts)
    if (e.verdict == v) return e.meaning;
  return "";
}

}  // namespace kbench::check
