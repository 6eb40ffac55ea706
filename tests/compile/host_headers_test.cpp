// What NVRTC may read: the headers kbench provides and CUDA's own, nothing else. No GPU needed.
#include "compile/host_headers.h"
#include "compile/nvrtc_compiler.h"

#include "catch.h"

using kbench::compile::check_includes;

TEST_CASE("a source may include CUDA's headers and the host headers kbench provides, no other file", "[compile]") {
  const auto dirs = kbench::compile::cuda_include_dirs();
  CHECK(check_includes("#include <cmath>\n#include <cfloat>\n  #  include \"cstdint\" // ints\n", dirs).empty());
  CHECK(check_includes("#include <cuda_fp16.h>\n#include <cuda/std/limits>\n#include <cub/cub.cuh>\n", dirs).empty());
  CHECK_THAT(check_includes("int x;\n#include \"/etc/hostname\"\n", dirs), contains_text("line 2: #include \"/etc/hostname\""));
  CHECK_THAT(check_includes("#include <../../../etc/passwd>\n", dirs), contains_text("not a CUDA header"));
  CHECK_THAT(check_includes("#include \"kbench-results.jsonl\"\n", dirs), contains_text("not a CUDA header"));
  // A name the preprocessor would build from a macro cannot be checked: refused.
  CHECK_THAT(check_includes("#define F \"/etc/passwd\"\n#include F\n", dirs), contains_text("only a header name"));
}

TEST_CASE("code written for nvcc compiles under NVRTC with the host headers and macros it uses", "[compile]") {
  const auto compiled = kbench::compile::nvrtc_compile(
      "#include <cmath>\n#include <math.h>\n#include <cfloat>\n#include <float.h>\n#include <climits>\n"
      "#include <cstdint>\n#include <stdint.h>\n#include <cstdio>\n"
      "extern \"C\" __global__ void k(const float* x, float* y, int64_t n) {\n"
      "  float m = -INFINITY;\n"
      "  for (int64_t i = 0; i < n && i < INT_MAX; ++i) m = std::max(m, std::exp(x[i]));\n"
      "  y[0] = m + 0.0f * (FLT_MAX + FLT_MIN + (float)DBL_MAX + NAN + (float)M_PI);\n"
      "  if (m > FLT_MAX) printf(\"%f\\n\", m);\n"
      "}\n",
      "nvcc_style.cu", {"sm_90a", {}});
  INFO(compiled.log);
  CHECK(compiled.ok);
  // Without any include, as nvcc allows: the macros come from kbench's prelude.
  CHECK(kbench::compile::nvrtc_compile("extern \"C\" __global__ void k(float* y) { y[0] = -INFINITY + M_PI + FLT_MAX; }\n",
                                       "bare.cu", {"sm_90a", {}}).ok);
}
