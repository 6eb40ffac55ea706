// CUDA as nvcc accepts it, for NVRTC. nvcc compiles device code beside the host compiler's headers:
// a kernel written for it includes <cmath>, <cfloat>, <cstdint> or <cstdio> and uses INFINITY, NAN,
// FLT_MAX, INT_MAX or M_PI as a matter of course (nvcc even defines the math macros without an
// include). NVRTC has no host headers, so such code fails with "cannot open source file" or
// "identifier INFINITY is undefined". kbench hands NVRTC in-memory stand-ins: a prelude included
// before every source (the macros nvcc makes available), and headers of the host's names that map to
// CUDA's own libcu++ (cuda/std/...), which NVRTC compiles.
//
// And what NVRTC must not do: read files outside CUDA's headers. `#include "/etc/passwd"` would put
// the file's lines into the compile log, which the record (and kbench serve's answer) carries.
#pragma once

#include <string>
#include <vector>

namespace kbench::compile {

struct InMemoryHeader {
  std::string name;  // as written in #include <...>
  std::string text;
};

// The prelude first (kPreludeHeader), then the host headers kbench provides.
const std::vector<InMemoryHeader>& host_compatibility_headers();
inline constexpr const char* kPreludeHeader = "kbench_nvcc_prelude.h";

// Every #include of `source` must name a header kbench provides or a file under one of
// `include_dirs` (a relative name without ".."); a macro as the name is refused. Returns "" when
// they do, else the first that does not, as a compile error's message.
std::string check_includes(const std::string& source, const std::vector<std::string>& include_dirs);

}  // namespace kbench::compile
