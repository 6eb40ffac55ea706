#include "fixtures.h"
#include "report/printers.h"
#include "report/prompt.h"
#include "sandbox/evaluation.h"
#include "sandbox/worker.h"

#include "catch.h"

using namespace kbench;

namespace {

// The one-shot example of `kbench prompt`, written to a file a test can evaluate.
std::string example_from_prompt() {
  const auto prompt = testing::run_kbench("prompt --level 2 --problem 1");
  const auto example = report::first_code_block(prompt, "cuda");
  const auto path = (std::filesystem::temp_directory_path() / "kbench-prompt-example.cu").string();
  std::ofstream(path) << example;
  return path;
}

}  // namespace

TEST_CASE("kbench prompt holds the task, the format, the example and the problem", "[report]") {
  const auto prompt = testing::run_kbench("prompt --level 2 --problem 1");
  CHECK_THAT(prompt, contains_text("/* kbench:host"));
  CHECK_THAT(prompt, contains_text("kbench.launch("));
  CHECK_THAT(prompt, contains_text("class Model"));
  CHECK_THAT(prompt, contains_text("1_Conv2D_ReLU_BiasAdd"));
  CHECK_FALSE(report::first_code_block(prompt, "cuda").empty());
}

TEST_CASE("kbench prompt --backend triton asks for a Triton ModelNew, with a Triton example", "[report]") {
  const auto prompt = testing::run_kbench("prompt --level 2 --problem 12 --backend triton");
  CHECK_THAT(prompt, contains_text("custom Triton kernels"));
  CHECK_THAT(prompt, contains_text("class ModelNew(nn.Module)"));
  CHECK_THAT(prompt, contains_text("12_Gemm_Multiply_LeakyReLU"));
  CHECK_THAT(prompt, !contains_text("kbench.launch("));
  const auto example = report::first_code_block(prompt.substr(prompt.find("A submission for it:")), "python");
  CHECK_THAT(example, contains_text("@triton.jit"));
  CHECK_THAT(example, contains_text("class ModelNew"));
  CHECK(report::first_code_block(prompt, "cuda").empty());
}

TEST_CASE("the prompt's one-shot example compiles as a submission", "[report]") {
  sandbox::EvalRequest req;
  req.submission = example_from_prompt();
  req.level = 1;
  req.problem = 19;
  req.compile_only = true;
  CHECK(sandbox::evaluate(req)["verdict"] == "not_checked");
}

TEST_CASE("the prompt's one-shot example is a correct submission on the GPU", "[gpu]") {
  if (!testing::gpu_or_skip()) return;
  sandbox::EvalRequest req;
  req.submission = example_from_prompt();
  req.level = 1;
  req.problem = 19;
  req.check.tolerance = {-1, -1};
  req.time = false;
  const auto record = sandbox::evaluate_isolated(req, {}, testing::kbench_exe());
  INFO(record.dump().substr(0, 1500));
  CHECK(record["verdict"] == "correct");
}

TEST_CASE("feedback turns carry the verdict and the compile log", "[report]") {
  report::PromptInput in;
  in.problem_name = "19_ReLU";
  in.feedback = nlohmann::json{{"verdict", "compile_error"}, {"message", "NVRTC: error"},
                               {"compile", {{"ok", false}, {"log", "x.cu(4): error: identifier \"zero\" is undefined"}}}};
  in.previous_submission = "broken";
  const auto text = report::build_prompt(in);
  CHECK_THAT(text, contains_text("compile_error"));
  CHECK_THAT(text, contains_text("identifier \"zero\" is undefined"));
  CHECK_THAT(text, contains_text("Fix it"));
}

TEST_CASE("kbench show prints a problem's degeneracy note in plain text as in JSON", "[report]") {
  // L2#9: on its own inputs the answer is all zeros (problems/degenerate.json).
  const auto json = nlohmann::json::parse(testing::run_kbench("show --level 2 --problem 9 --json"));
  REQUIRE(json.contains("degeneracy"));
  const auto text = testing::run_kbench("show --level 2 --problem 9");
  CHECK_THAT(text, contains_text("# degenerate: " + json["degeneracy"].get<std::string>()));
  // A problem with no note prints none.
  CHECK_FALSE(contains_text("# degenerate:").match(testing::run_kbench("show --level 1 --problem 19")));
}

// tests/fixtures/report/profiled_record.json: a record of L2#12's reference kernel in the layout --profile
// writes (figures illustrative, of the H100's order).
TEST_CASE("a refinement prompt built from a profiled record shows where the time goes", "[report]") {
  report::PromptInput in;
  in.problem_name = "12_Gemm_Multiply_LeakyReLU";
  in.feedback = testing::read_json_file(testing::test_dir() / "fixtures" / "report" / "profiled_record.json");
  in.previous_submission = "(the previous file)";
  const auto text = report::build_prompt(in);
  CHECK_THAT(text, contains_text("Where the time goes"));
  CHECK_THAT(text, contains_text("bias_mul_leaky_relu: 1 launch, 0.0520 ms (0.8%)"));
  CHECK_THAT(text, contains_text("aten::matmul x1 6.2400 ms (98.9%)"));
  CHECK_THAT(text, contains_text("aten::linear: 6.4100 ms (98.6%), mostly sm90_xmma_gemm"));
  // Demangled PyTorch kernel names lose their parameter lists.
  CHECK_THAT(text, contains_text("mostly at::native::leaky_relu_kernel x1"));
  CHECK_THAT(text, contains_text("you take 58.30x that"));
  CHECK_THAT(text, contains_text("(32.0% of the FP32 peak"));
  CHECK_THAT(text, contains_text("Nsight Compute: unavailable"));
  // The breakdown comes before the closing instruction, which stays last.
  CHECK(text.find("Where the time goes") < text.find("Make it faster"));
}

TEST_CASE("kbench eval's summary shows the profile's breakdown", "[report]") {
  const auto record = testing::read_json_file(testing::test_dir() / "fixtures" / "report" / "profiled_record.json");
  const auto summary = report::eval_summary(record);
  CHECK_THAT(summary, contains_text("your kernels, slowest first"));
  CHECK_THAT(summary, contains_text("the reference (PyTorch eager), 6.5000 ms of GPU work"));
}
