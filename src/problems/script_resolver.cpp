#include "problems/script_resolver.h"

#include <map>

#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/ir/ir.h>

namespace kbench::problems {
namespace {

// `torch`: the aten builtins plus the dtype constants (TorchScript represents a dtype as an int).
struct TorchNamespace : torch::jit::BuiltinModule {
  TorchNamespace() : BuiltinModule("aten") {}

  std::shared_ptr<torch::jit::SugaredValue> attr(const torch::jit::SourceRange& loc, torch::jit::GraphFunction& fn,
                                                 const std::string& field) override {
    static const std::map<std::string, c10::ScalarType> dtypes = {
        {"float32", c10::kFloat}, {"float", c10::kFloat},      {"float64", c10::kDouble}, {"double", c10::kDouble},
        {"float16", c10::kHalf},  {"half", c10::kHalf},        {"bfloat16", c10::kBFloat16},
        {"int64", c10::kLong},    {"long", c10::kLong},        {"int32", c10::kInt},      {"int", c10::kInt},
        {"int16", c10::kShort},   {"short", c10::kShort},      {"int8", c10::kChar},      {"uint8", c10::kByte},
        {"bool", c10::kBool},     {"complex64", c10::kComplexFloat}};
    const auto it = dtypes.find(field);
    if (it != dtypes.end())
      return std::make_shared<torch::jit::SimpleValue>(fn.graph()->insertConstant(c10::IValue(it->second), loc));
    return BuiltinModule::attr(loc, fn, field);
  }
};

}  // namespace

std::shared_ptr<torch::jit::SugaredValue> ScriptResolver::resolveValue(const std::string& name,
                                                                       torch::jit::GraphFunction& fn,
                                                                       const torch::jit::SourceRange& loc) {
  if (name == "torch") return std::make_shared<TorchNamespace>();
  if (name == "math") return std::make_shared<torch::jit::BuiltinModule>("aten");
  return nullptr;
}

}  // namespace kbench::problems
