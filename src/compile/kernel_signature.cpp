#include "compile/kernel_signature.h"

#include <regex>
#include <stdexcept>

namespace kbench::compile {
namespace {

KernelParam param_from_ptx(const std::string& type, const std::string& array_len) {
  KernelParam p;
  p.ptx_type = type;
  const char cls = type[0];
  const int bits = std::stoi(type.substr(1));
  p.size = bits / 8;
  if (!array_len.empty()) {
    p.kind = ParamKind::Aggregate;
    p.size *= std::stoi(array_len);
    p.ptx_type += "[" + array_len + "]";
  } else if (cls == 'f') {
    p.kind = ParamKind::Float;
  } else if (bits == 64) {
    p.kind = ParamKind::Word64;
  } else {
    p.kind = ParamKind::Integer;
  }
  return p;
}

std::string describe(const KernelParam& p) {
  switch (p.kind) {
    case ParamKind::Float: return p.size == 8 ? "f64" : (p.size == 2 ? "f16" : "f32");
    case ParamKind::Word64: return "ptr|i64";
    case ParamKind::Integer: return "i" + std::to_string(p.size * 8);
    case ParamKind::Aggregate: return "struct(" + std::to_string(p.size) + " bytes)";
  }
  return "?";
}

}  // namespace

std::string KernelSignature::to_string() const {
  std::string s = name + "(";
  for (size_t i = 0; i < params.size(); ++i) s += (i ? ", " : "") + describe(params[i]);
  return s + ")";
}

std::vector<KernelSignature> read_kernel_signatures(const std::string& ptx) {
  static const std::regex entry(R"(\.entry\s+([A-Za-z_$][\w$]*)\s*\(([^)]*)\))");
  static const std::regex param(R"(\.param\s+(?:\.align\s+\d+\s+)?\.([usbf]\d+)\s+(?:\.ptr\s+(?:\.\w+\s+)*)?[\w$]+(?:\[(\d+)\])?)");
  static const std::regex empty_entry(R"(\.entry\s+([A-Za-z_$][\w$]*)\s*(?:\{|$))");
  std::vector<KernelSignature> kernels;
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry); it != std::sregex_iterator(); ++it) {
    KernelSignature k;
    k.name = (*it)[1];
    const std::string params = (*it)[2];
    for (auto p = std::sregex_iterator(params.begin(), params.end(), param); p != std::sregex_iterator(); ++p)
      k.params.push_back(param_from_ptx((*p)[1], (*p)[2]));
    kernels.push_back(std::move(k));
  }
  // A kernel without parameters has no parenthesised list in PTX.
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), empty_entry); it != std::sregex_iterator(); ++it)
    kernels.push_back({(*it)[1], {}});
  return kernels;
}

}  // namespace kbench::compile
