// Name resolution for TorchScript compiled from C++ (input generators, host programs). The stock
// nativeResolver knows only `torch.<op>`; Python-written code also says torch.float16, torch.bool
// and math.sqrt, which Python's resolver would have supplied.
#pragma once

#include <memory>

#include <torch/csrc/jit/frontend/resolver.h>

namespace kbench::problems {

struct ScriptResolver : torch::jit::Resolver {
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name, torch::jit::GraphFunction& fn,
                                                         const torch::jit::SourceRange& loc) override;
};

}  // namespace kbench::problems
