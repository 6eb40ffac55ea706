#include "report/prompt.h"

#include <sstream>

#include "report/profile_text.h"
#include "report/records.h"

namespace kbench::report {
namespace {

std::string gpu_section(const launch::DeviceInfo& g) {
  std::ostringstream s;
  s << "## The GPU\n\n"
    << "- " << g.name << " (compute capability " << g.major << "." << g.minor << ", NVRTC target " << g.arch() << ")\n"
    << "- " << g.multiprocessors << " streaming multiprocessors; " << (g.memory_bytes >> 30) << " GiB of device memory\n"
    << "- L2 cache: " << (g.l2_bytes >> 20) << " MiB; shared memory per block: up to " << (g.max_shared_optin >> 10)
    << " KiB (above 48 KiB is enabled for you)\n"
    << "- at most " << g.max_threads_per_block << " threads per block\n\n";
  return s.str();
}

std::string feedback_section(const nlohmann::json& r, const std::string& previous, const std::string& fence) {
  std::ostringstream s;
  s << "## Your previous attempt\n\n```" << fence << "\n" << previous << (previous.empty() || previous.back() == '\n' ? "" : "\n")
    << "```\n\nkbench's verdict: **" << r.value("verdict", "?") << "**: " << r.value("message", "") << "\n\n";
  if (r.contains("compile") && !r["compile"].value("ok", true))
    s << "The compiler's log:\n```\n" << r["compile"].value("log", "").substr(0, 4000) << "\n```\n\n";
  if (r.contains("error_details"))
    s << "Error details:\n```\n" << r["error_details"].get<std::string>().substr(0, 3000) << "\n```\n\n";
  if (r.contains("correctness"))
    for (const auto& t : r["correctness"]["trials"])
      s << "- trial " << t.value("trial", 0) << ": " << t.value("verdict", "") << ", max abs error "
        << t.value("max_abs_error", 0.0) << (t.value("message", "").empty() ? "" : " (" + t.value("message", "") + ")") << "\n";
  if (r.contains("timing") && r["timing"].contains("candidate")) {
    const auto& t = r["timing"];
    s << "\nTiming: your kernel " << t["candidate"].value("mean_ms", 0.0) << " ms";
    if (t.contains("eager")) s << ", PyTorch eager " << t["eager"].value("mean_ms", 0.0) << " ms, speedup " << t.value("speedup_eager", 0.0) << "x";
    if (t.contains("speedup_compiled")) s << ", against torch.compile " << t.value("speedup_compiled", 0.0) << "x";
    s << ".\n";
  }
  if (r.contains("profile")) s << "\n" << profile_text(r["profile"]);
  s << "\n" << (verdict_of(r) == check::Verdict::correct ? "It is correct. Make it faster while keeping it correct."
                                                      : "Fix it: the submission must be correct before speed counts.")
    << "\n\n";
  return s.str();
}

// The task and the submission format, in kbench's own format (a .cu file) or as a Triton ModelNew
// (upstream KernelBench's Triton backend: its prompt's conventions).
void format_section(std::ostringstream& s, const PromptInput& in) {
  const bool triton = in.backend == "triton";
  s << (triton ? "You write custom Triton kernels" : "You write custom CUDA kernels")
    << " that replace PyTorch operators to make a model faster.\n\n"
    << "Below is a PyTorch reference model (`Model`, with `get_inputs()` and `get_init_inputs()` giving "
       "its inputs and constructor arguments). Write a faster implementation as one kbench submission: a "
    << (triton ? "Python file defining `class ModelNew(nn.Module)`" : "`.cu` file")
    << " that computes exactly what `Model.forward` computes (within atol = rtol = 1e-2 in "
       "float32), in training mode, for the given input shapes. You may fuse operators, change "
       "algorithms and keep some operators in PyTorch, but your kernels must do the work.\n\n"
    << "## How kbench checks it\n\n"
    << "- Five trials on inputs drawn as `get_inputs()` draws them, then three on inputs of the same shapes "
       "drawn from other distributions (normal, logistic x 10, uniform in [-0.1, 0.1]; integer inputs keep "
       "theirs). A kernel right only on the given distribution is `fragile`, not correct.\n"
    << "- For outputs smaller than 1, atol shrinks with the output's mean magnitude, so zeros never pass.\n"
    << "- forward runs once more with every launch of your kernels skipped; if the outputs are still right, "
       "PyTorch did the work and the verdict is `no_custom_kernel`.\n"
    << "- Speedups faster than reading the inputs and writing the outputs at the GPU's memory bandwidth "
       "allows are flagged and not counted.\n";
  if (triton)
    s << "- Your kernels are compiled and autotuned on untimed calls before the checks; a call that still "
         "compiles or autotunes later (an autotune key that changes from call to call) is `inconsistent`.\n";
  s << "\n## The submission format\n\n";
  if (triton)
    s << "- Import `torch`, `torch.nn as nn`, `triton` and `triton.language as tl`. Kernels are `@triton.jit` "
         "functions at the file's top level (`triton.autotune` and `triton.heuristics` may wrap them), with "
         "`tl.constexpr` block sizes and masked `tl.load`/`tl.store`.\n"
      << "- `class ModelNew(nn.Module)` takes the same constructor arguments as `Model` and creates its "
         "parameters the same way, in the same order (kbench seeds both alike); `forward` takes `Model.forward`'s "
         "inputs, allocates outputs with `torch.empty`/`torch.empty_like` and launches the kernels, e.g. "
         "`kernel[grid](x, y, n, BLOCK_SIZE=1024)`.\n"
      << "- No threads, files or processes: kbench refuses them.\n"
      << "- Reply with the whole file in one ```python block.\n\n";
  else
    s << "- All of the file is compiled by NVRTC as CUDA C++17; kernels you launch are `extern \"C\" __global__`.\n"
      << "- The host side is a TorchScript program inside one block comment that starts with `/* kbench:host` "
         "and ends with `*/`. It defines `forward(<inputs in get_inputs() order>, params: Dict[str, Tensor])`, "
         "where `params` holds the model's parameters and buffers by their state_dict names, already on the GPU; "
         "it returns what `Model.forward` returns. An optional `setup(params) -> Dict[str, Tensor]` runs once, untimed.\n"
      << "- `kbench.launch(kernel_name, grid, block, args, shared_mem=0)` launches a kernel on the current stream: "
         "`grid` and `block` are lists of 1-3 ints, `args` a tuple whose tensors become device pointers, ints "
         "int32/int64 and floats float/double, matching the kernel's parameters.\n"
      << "- Reply with the whole file in one ```cuda block.\n\n";
}

}  // namespace

std::string build_prompt(const PromptInput& in) {
  std::ostringstream s;
  const std::string fence = in.backend == "triton" ? "python" : "cuda";
  format_section(s, in);
  s << "## Example\n\nThe reference:\n```python\n" << in.example_reference << "```\n\nA submission for it:\n```"
    << fence << "\n" << in.example_solution << "```\n\n";
  if (in.gpu) s << gpu_section(*in.gpu);
  s << "## Your problem: " << in.problem_name << "\n\n```python\n" << in.reference_source << "```\n\n";
  if (!in.degeneracy_note.empty())
    s << "Note on this problem: " << in.degeneracy_note << ". Compute the real function of the inputs.\n\n";
  if (in.feedback) s << feedback_section(*in.feedback, in.previous_submission, fence);
  s << "Write the submission for " << in.problem_name << ".\n";
  return s.str();
}

std::string first_code_block(const std::string& text, const std::string& language) {
  const std::string open = "```" + language + "\n";
  const auto start = text.find(open);
  if (start == std::string::npos) return "";
  const auto body = start + open.size();
  const auto end = text.find("```", body);
  return text.substr(body, end == std::string::npos ? std::string::npos : end - body);
}

}  // namespace kbench::report
