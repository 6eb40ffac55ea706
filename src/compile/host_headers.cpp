#include "compile/host_headers.h"

#include <filesystem>
#include <regex>
#include <sstream>

namespace kbench::compile {
namespace {

// Included before every source: what nvcc's own headers define without an include (its
// math_functions.h pulls in the host's math.h), plus the limits a kernel reaches for: float's from
// IEEE 754 (#ifndef: a source that defines one keeps its own), the integer limits and fixed-width
// types from libcu++ (about 10 ms of NVRTC).
const std::string kInfinityAndNan = R"(#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
)";
const std::string kPrelude = "#pragma once\n" + kInfinityAndNan + R"(#ifndef HUGE_VALF
#define HUGE_VALF INFINITY
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.40282346638528859812e+38F
#define FLT_MIN 1.17549435082228750797e-38F
#define FLT_EPSILON 1.1920928955078125e-07F
#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define FLT_MAX_EXP 128
#define FLT_MIN_EXP (-125)
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.79769313486231570815e+308
#define DBL_MIN 2.22507385850720138309e-308
#define DBL_EPSILON 2.22044604925031308085e-16
#define DBL_DIG 15
#define DBL_MANT_DIG 53
#endif
#include <cuda/std/climits>
#include <cuda/std/cstdint>
#ifndef M_PI
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#endif
)";

// A host header as libcu++'s counterpart, its names also in std:: (nvcc code writes std::exp,
// std::max, std::numeric_limits, std::int64_t).
std::string mapped(const std::string& cuda_std_header) {
  return "#pragma once\n#include <cuda/std/" + cuda_std_header +
         ">\nnamespace std { using namespace ::cuda::std; }\n";
}

// The prelude includes these two: their names in std:: too.
const std::string kStdNames = "#pragma once\nnamespace std { using namespace ::cuda::std; }\n";

// Some of libcu++'s <cmath> headers define INFINITY and NAN under NVRTC in their own way: the prelude's
// give way to them, and return where they do not. The host's <cmath> brings std::min and std::max
// along (libstdc++'s does), and nvcc code counts on it.
const std::string kMath = "#pragma once\n#undef INFINITY\n#undef NAN\n#include <cuda/std/__algorithm/max.h>\n"
                          "#include <cuda/std/__algorithm/min.h>\n" + mapped("cmath") + kInfinityAndNan;

}  // namespace

const std::vector<InMemoryHeader>& host_compatibility_headers() {
  // Device printf and the C types need no header under NVRTC: <cstdio> and <stddef.h> give nothing
  // more than the prelude.
  static const std::vector<InMemoryHeader> headers = {
      {kPreludeHeader, kPrelude},
      {"cmath", kMath},                 {"math.h", kMath},
      {"cfloat", "#pragma once\n"},     {"float.h", "#pragma once\n"},
      {"climits", kStdNames},           {"limits.h", kStdNames},
      {"cstdint", kStdNames},           {"stdint.h", kStdNames},
      {"cstddef", mapped("cstddef")},   {"stddef.h", mapped("cstddef")},
      {"cstdlib", mapped("cstdlib")},   {"stdlib.h", mapped("cstdlib")},
      {"cstdio", "#pragma once\n"},     {"stdio.h", "#pragma once\n"},
      {"algorithm", mapped("algorithm")}, {"limits", mapped("limits")},
      {"type_traits", mapped("type_traits")}, {"utility", mapped("utility")},
  };
  return headers;
}

std::string check_includes(const std::string& source, const std::vector<std::string>& include_dirs) {
  // A directive, its name in <> or "" (anything else is a macro, whose expansion cannot be checked).
  static const std::regex directive(R"re(^\s*#\s*include\b\s*(.*)$)re");
  static const std::regex quoted(R"re(^(<([^>]*)>|"([^"]*)")\s*(//.*|/\*.*)?$)re");
  std::istringstream lines(source);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    std::smatch m, name;
    if (!std::regex_match(line, m, directive)) continue;
    const std::string where = "line " + std::to_string(number) + ": ";
    const std::string target = m[1];
    if (!std::regex_match(target, name, quoted))
      return where + "#include " + target + ": kbench accepts only a header name in <> or \"\"";
    const std::string header = name[2].matched ? name[2].str() : name[3].str();
    bool provided = false;
    for (const auto& h : host_compatibility_headers()) provided = provided || h.name == header;
    if (provided) continue;
    const std::filesystem::path path(header);
    bool found = false;
    if (!path.is_absolute() && header.find("..") == std::string::npos)
      for (const auto& dir : include_dirs) found = found || std::filesystem::is_regular_file(std::filesystem::path(dir) / path);
    if (!found)
      return where + "#include " + target + ": not a CUDA header (kbench compiles with CUDA's headers and the host " +
             "headers it provides: <cmath>, <cfloat>, <climits>, <cstdint>, <cstdio>, ...; no other files)";
  }
  return "";
}

}  // namespace kbench::compile
