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

std::string feedback_section(const nlohmann::json& r, const std::string& previous) {
  std::ostringstream s;
  s << "## Your previous attempt\n\n```cuda\n" << previous << (previous.empty() || previous.back() == '\n' ? "" : "\n")
    << "```\n\nkbench's verdict: **" << r.value("verdict", "?") << "**: " << r.value("message", "") << "\n\n";
  if (r.contains("compile") && !r["compile"].value("ok", true))
    s << "NVRTC's log:\n```\n" << r["compile"].value("log", "").substr(0, 4000) << "\n```\n\n";
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

}  // namespace

std::string build_prompt(const PromptInput& in) {
  std::ostringstream s;
  s << "You write custom CUDA kernels that replace PyTorch operators to make a model faster.\n\n"
    << "Below is a PyTorch reference model (`Model`, with `get_inputs()` and `get_init_inputs()` giving "
       "its inputs and constructor arguments). Write a faster implementation as one kbench submission: a "
       "`.cu` file that computes exactly what `Model.forward` computes (within atol = rtol = 1e-2 in "
       "float32), in training mode, for the given input shapes. You may fuse operators, change "
       "algorithms and keep some operators in PyTorch, but your kernels must do the work.\n\n"
    << "## How kbench checks it\n\n"
    << "- Five trials on inputs drawn as `get_inputs()` draws them, then three on inputs of the same shapes "
       "drawn from other distributions (normal, logistic x 10, uniform in [-0.1, 0.1]; integer inputs keep "
       "theirs). A kernel right only on the given distribution is `fragile`, not correct.\n"
    << "- For outputs smaller than 1, atol shrinks with the output's mean magnitude, so zeros never pass.\n"
    << "- forward runs once more with every `kbench.launch` skipped; if the outputs are still right, "
       "PyTorch did the work and the verdict is `no_custom_kernel`.\n"
    << "- Speedups faster than reading the inputs and writing the outputs at the GPU's memory bandwidth "
       "allows are flagged and not counted.\n\n"
    << "## The submission format\n\n"
    << "- All of the file is compiled by NVRTC as CUDA C++17; kernels you launch are `extern \"C\" __global__`.\n"
    << "- The host side is a TorchScript program inside one block comment that starts with `/* kbench:host` "
       "and ends with `*/`. It defines `forward(<inputs in get_inputs() order>, params: Dict[str, Tensor])`, "
       "where `params` holds the model's parameters and buffers by their state_dict names, already on the GPU; "
       "it returns what `Model.forward` returns. An optional `setup(params) -> Dict[str, Tensor]` runs once, untimed.\n"
    << "- `kbench.launch(kernel_name, grid, block, args, shared_mem=0)` launches a kernel on the current stream: "
       "`grid` and `block` are lists of 1-3 ints, `args` a tuple whose tensors become device pointers, ints "
       "int32/int64 and floats float/double, matching the kernel's parameters.\n"
    << "- Reply with the whole file in one ```cuda block.\n\n"
    << "## Example\n\nThe reference:\n```python\n" << in.example_reference << "```\n\nA submission for it:\n```cuda\n"
    << in.example_solution << "```\n\n";
  if (in.gpu) s << gpu_section(*in.gpu);
  s << "## Your problem: " << in.problem_name << "\n\n```python\n" << in.reference_source << "```\n\n";
  if (!in.degeneracy_note.empty())
    s << "Note on this problem: " << in.degeneracy_note << ". Compute the real function of the inputs.\n\n";
  if (in.feedback) s << feedback_section(*in.feedback, in.previous_submission);
  s << "Write the submission for " << in.problem_name << ".\n";
  return s.str();
}

std::string first_cuda_block(const std::string& text) {
  const std::string open = "```cuda\n";
  const auto start = text.find(open);
  if (start == std::string::npos) return "";
  const auto body = start + open.size();
  const auto end = text.find("```", body);
  return text.substr(body, end == std::string::npos ? std::string::npos : end - body);
}

}  // namespace kbench::report
