#include "problems/reference.h"

#include <torch/csrc/api/include/torch/version.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include "problems/script_resolver.h"

#include <cstdlib>
#include <unordered_set>
#include <sstream>

namespace kbench::problems {

std::string libtorch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
}

bool version_less(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  for (;;) {
    std::string pa, pb;
    const bool more_a = static_cast<bool>(std::getline(sa, pa, '.'));
    const bool more_b = static_cast<bool>(std::getline(sb, pb, '.'));
    if (!more_a && !more_b) return false;
    const long va = more_a ? std::atol(pa.c_str()) : 0, vb = more_b ? std::atol(pb.c_str()) : 0;
    if (va != vb) return va < vb;
  }
}

std::shared_ptr<torch::jit::CompilationUnit> compile_input_generator(const std::string& source) {
  auto unit = std::make_shared<torch::jit::CompilationUnit>();
  unit->define(c10::nullopt, source, std::make_shared<ScriptResolver>(), nullptr);
  return unit;
}

std::vector<c10::IValue> run_input_generator(torch::jit::CompilationUnit& generator, uint64_t seed,
                                             const torch::Device& device, const std::string& distribution) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  auto result = generator.get_function("make_inputs")({c10::IValue(device), c10::IValue(distribution)});
  if (result.isTuple()) return result.toTupleRef().elements().vec();
  if (result.isList()) return result.toList().vec();
  return {result};
}

bool needs_newer_torch(const Problem& problem) {
  return !problem.min_torch.empty() && version_less(libtorch_version(), problem.min_torch);
}

void for_each_tensor(const torch::jit::Module& module, const std::function<void(at::Tensor&)>& fn) {
  std::unordered_set<const c10::TensorImpl*> seen;  // one tensor may sit in several attributes
  c10::IValue(module._ivalue()).visit([&](const c10::IValue& v) {
    if (v.isTensor()) {
      at::Tensor t = v.toTensor();
      if (t.defined() && seen.insert(t.unsafeGetTensorImpl()).second) fn(t);
    }
    return false;  // false: go on into lists, tuples, dicts and objects
  });
}

Reference::Reference(const Problem& problem, const torch::Device& device)
    : problem_(problem), device_(torch::kCPU) {
  if (needs_newer_torch(problem))
    throw std::runtime_error(problem.key() + " needs PyTorch >= " + problem.min_torch + ": " +
                             problem.skip_reason);
  const auto archive = archive_path(problem, libtorch_version());
  if (!std::filesystem::exists(archive))
    throw std::runtime_error("no TorchScript archive for " + problem.key() + " at " + archive.string() +
                             "; make it with: scripts/tools/export_problems.py --level " +
                             std::to_string(problem.level) + " --problem " + std::to_string(problem.id));
  module_ = torch::jit::load(archive.string(), torch::kCPU);
  module_.train();
  generator_ = compile_input_generator(problem.input_generator);
  to(device);
}

void Reference::to(const torch::Device& device) {
  torch::NoGradGuard no_grad;
  // In place (set_data), as Module::to does for parameters: every attribute that names a tensor
  // sees it moved. Scripted archives hold no tensor constants in their code, only attributes.
  for_each_tensor(module_, [&](at::Tensor& t) {
    if (t.device() != device) t.set_data(t.to(device));
  });
  device_ = device;
  collect_state();
}

void Reference::collect_state() {
  state_ = c10::Dict<std::string, at::Tensor>();
  for (const auto& p : module_.named_parameters(/*recurse=*/true)) state_.insert(p.name, p.value.detach());
  for (const auto& b : module_.named_buffers(/*recurse=*/true)) state_.insert(b.name, b.value);
}

Reference Reference::in_float64() const {
  torch::NoGradGuard no_grad;
  Reference wide = *this;
  wide.module_ = module_.deepcopy();
  for_each_tensor(wide.module_, [](at::Tensor& t) {
    if (t.scalar_type() == at::kFloat) t.set_data(t.to(at::kDouble));
  });
  wide.collect_state();
  return wide;
}

std::vector<c10::IValue> Reference::make_inputs(uint64_t seed, const std::string& distribution) const {
  return run_input_generator(*generator_, seed, device_, distribution);
}

c10::IValue Reference::forward(const std::vector<c10::IValue>& inputs, uint64_t seed) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  // Op by op, as PyTorch eager runs the Python module. TorchScript's executor would otherwise
  // profile the first runs and then fuse elementwise chains into generated kernels (NNC), making
  // the "eager" baseline a partly compiled one. The flag is per thread, hence per call.
  torch::jit::GraphOptimizerEnabledGuard op_by_op(false);
  return module_.forward(inputs);
}

}  // namespace kbench::problems
