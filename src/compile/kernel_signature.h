// Kernel parameter lists read from PTX `.entry` directives: what kbench.launch checks arguments
// against, and what error messages print.
#pragma once

#include <string>
#include <vector>

namespace kbench::compile {

enum class ParamKind {
  Float,        // .f32 / .f64
  Integer,      // .u8-.u32 / .s8-.s32 / .b8-.b32 (int, unsigned, bool, char)
  Word64,       // .u64 / .s64 / .b64: a pointer or a 64-bit integer (PTX does not tell them apart)
  Aggregate,    // .b8 name[N]: a struct passed by value, which a host program cannot build
};

struct KernelParam {
  ParamKind kind = ParamKind::Integer;
  int size = 0;          // bytes
  std::string ptx_type;  // e.g. "u64", "f32", "b8[16]"
};

struct KernelSignature {
  std::string name;
  std::vector<KernelParam> params;

  std::string to_string() const;  // "scale_relu(ptr|i64, ptr|i64, f32, i32)"
};

// Every `.entry` in the PTX, in order of appearance. Throws std::runtime_error on PTX it cannot read.
std::vector<KernelSignature> read_kernel_signatures(const std::string& ptx);

}  // namespace kbench::compile
