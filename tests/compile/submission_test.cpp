#include "catch.h"

#include "compile/submission.h"

using kbench::compile::split_submission;
using kbench::compile::SubmissionError;

TEST_CASE("split separates device code and host program, keeping line numbers", "[compile]") {
  const std::string text =
      "extern \"C\" __global__ void k(float* x) { x[0] = 1; }\n"
      "/* kbench:host\n"
      "def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:\n"
      "    return x\n"
      "*/\n"
      "// after\n";
  const auto s = split_submission(text);
  CHECK(s.host_source == "def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:\n    return x\n");
  CHECK(s.host_first_line == 3);
  CHECK(s.device_source.find("kbench:host") == std::string::npos);
  CHECK(std::count(s.device_source.begin(), s.device_source.end(), '\n') ==
        std::count(text.begin(), text.end(), '\n'));
  CHECK(s.device_source.find("// after") != std::string::npos);
  CHECK(s.hash.size() == 40);
}

TEST_CASE("an indented host block is dedented", "[compile]") {
  const auto s = split_submission("/* kbench:host\n    def forward(x):\n        return x\n  */\n");
  CHECK(s.host_source == "def forward(x):\n    return x\n");
}

TEST_CASE("malformed host blocks are rejected with a clear message", "[compile]") {
  CHECK_THROWS_WITH(split_submission("__global__ void k() {}"), contains_text("no host program"));
  CHECK_THROWS_WITH(split_submission("/* kbench:host\ndef forward(x):\n  return x\n"),
                    contains_text("unterminated"));
  CHECK_THROWS_WITH(split_submission("/* kbench:host\na\n*/\n/* kbench:host\nb\n*/\n"),
                    contains_text("more than one"));
}
