#include "compile/host_program.h"
#include "compile/submission.h"
#include "fixtures.h"

#include "catch.h"  // last: libtorch brings glog, whose CHECK would replace Catch's

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

TEST_CASE("a host program's value-computing PyTorch ops are told from allocation, views, copies, fills and int arithmetic", "[compile]") {
  const kbench::compile::ScriptHostProgram kernels_only(
      "def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:\n"
      "    x = x.contiguous().to(torch.float32)\n"
      "    y = torch.zeros_like(x)\n"
      "    n = x.numel()\n"
      "    blocks = (n + 255) // 256\n"
      "    kbench.launch('k', [blocks], [256], (x.view(-1), y, n))\n"
      "    return y.view(x.shape)\n", 1);
  CHECK(kernels_only.computing_ops().empty());
  const kbench::compile::ScriptHostProgram with_torch(
      "def setup(params: Dict[str, Tensor]) -> Dict[str, Tensor]:\n"
      "    params['w'] = params['w'].t().contiguous()\n"
      "    return params\n"
      "def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:\n"
      "    y = torch.relu(x)\n"
      "    kbench.launch('k', [1], [32], (y, y.numel()))\n"
      "    return y\n", 1);
  // setup's contiguous() is not listed: setup is never ablated.
  CHECK(with_torch.computing_ops() == std::vector<std::string>{"aten::relu"});
  // Names as the observer of check/ sees them at run time, internal ops included.
  using kbench::compile::computes_values;
  CHECK(computes_values("aten::relu"));
  CHECK(computes_values("aten::addmm"));
  CHECK(computes_values("aten::cat"));  // assembles what PyTorch computed in pieces
  CHECK(computes_values("prim::NumToTensor"));
  CHECK_FALSE(computes_values("aten::_to_copy"));
  CHECK_FALSE(computes_values("aten::fill_"));
  CHECK_FALSE(computes_values("kbench::launch"));
}

TEST_CASE("a file written atomically is whole, replaces the old one or keeps it, and leaves no temporary behind", "[compile]") {
  const auto dir = std::filesystem::temp_directory_path() / "kbench-atomic-write";
  kbench::testing::remove_tree(dir);
  std::filesystem::create_directories(dir);
  const auto file = dir / "doc.json";
  kbench::compile::write_file_atomically(file, "first\n");
  kbench::compile::write_file_atomically(file, std::string("second\0with a zero byte", 23));
  CHECK(kbench::compile::file_bytes(file) == std::string("second\0with a zero byte", 23));
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  // Not replacing: a file already there stays, a new one is written, and no temporary is left.
  kbench::compile::write_file_atomically(file, "third\n", /*replace=*/false);
  CHECK(kbench::compile::file_bytes(file) == std::string("second\0with a zero byte", 23));
  kbench::compile::write_file_atomically(dir / "new.json", "new\n", /*replace=*/false);
  CHECK(kbench::compile::file_bytes(dir / "new.json") == "new\n");
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 2);
  std::filesystem::remove(dir / "new.json");
  // A folder that does not exist: an error that names the file, and still nothing left behind.
  CHECK_THROWS_WITH(kbench::compile::write_file_atomically(dir / "missing" / "doc.json", "x"), contains_text("missing/doc.json"));
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 1);
  kbench::testing::remove_tree(dir);
}
