#include "compile/host_program.h"

#include <set>

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "problems/script_resolver.h"

namespace kbench::compile {
namespace {

// torch::jit::compile cannot resolve torch.ops.<ns>; this resolver maps the bare name `kbench` to
// the operator namespace so that `kbench.launch(...)` is a call of kbench::launch.
struct KbenchResolver : problems::ScriptResolver {
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name, torch::jit::GraphFunction& fn,
                                                         const torch::jit::SourceRange& loc) override {
    if (name == "kbench") return std::make_shared<torch::jit::BuiltinModule>("kbench");
    return ScriptResolver::resolveValue(name, fn, loc);
  }
};

// Operators that reach outside the process's tensors (files, the reference's archives): a host
// program that names one is rejected before it runs.
const std::set<std::string> kForbiddenOps = {"aten::from_file", "aten::save", "aten::load"};

// PyTorch ops that make a tensor without computing values: allocation, views, copies and dtype
// conversions (one tensor's values moved), fills (constants) and random draws. Internal ops that
// these call (aten::_to_copy under aten::to) are listed too: the observer of check/ sees them.
const std::set<std::string> kNonComputingOps = {
    // allocation
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty", "aten::new_empty_strided",
    // views
    "aten::view", "aten::view_as", "aten::unsqueeze", "aten::squeeze", "aten::t", "aten::transpose",
    "aten::permute", "aten::expand", "aten::expand_as", "aten::select", "aten::slice", "aten::narrow",
    "aten::as_strided", "aten::detach", "aten::alias", "aten::movedim", "aten::unflatten", "aten::_reshape_alias",
    "aten::_unsafe_view", "aten::lift_fresh", "aten::resolve_conj", "aten::resolve_neg",
    // lookups: an element of a list or a dictionary (params["weight"])
    "aten::__getitem__",
    // copies and conversions
    "aten::contiguous", "aten::clone", "aten::copy_", "aten::reshape", "aten::flatten", "aten::to",
    "aten::_to_copy", "aten::type_as",
    // fills and random draws
    "aten::zeros", "aten::ones", "aten::full", "aten::zeros_like", "aten::ones_like", "aten::full_like",
    "aten::new_zeros", "aten::new_ones", "aten::new_full", "aten::fill_", "aten::zero_", "aten::rand",
    "aten::randn", "aten::rand_like", "aten::randn_like", "aten::normal_", "aten::uniform_"};

bool makes_tensor(const torch::jit::Node* node) {
  for (const auto* out : node->outputs())
    if (out->type()->isSubtypeOf(*c10::TensorType::get())) return true;
  return false;
}

void collect_ops(const torch::jit::Block* block, std::set<std::string>& ops, std::set<std::string>& computing) {
  for (const auto* node : block->nodes()) {
    const auto kind = node->kind();
    if (kind.is_aten() || kind.is_prim()) ops.insert(kind.toQualString());
    if (computes_values(kind.toQualString()) && makes_tensor(node)) computing.insert(kind.toQualString());
    for (const auto* sub : node->blocks()) collect_ops(sub, ops, computing);
  }
}

}  // namespace

bool computes_values(const std::string& op) {
  // prim::NumToTensor makes a tensor from a number the program computed on the host.
  if (op == "prim::NumToTensor") return true;
  return op.rfind("aten::", 0) == 0 && !kNonComputingOps.count(op);
}

ScriptHostProgram::ScriptHostProgram(const std::string& source, size_t input_count)
    : unit_(std::make_shared<torch::jit::CompilationUnit>()) {
  try {
    unit_->define(c10::nullopt, source, std::make_shared<KbenchResolver>(), nullptr);
  } catch (const std::exception& e) {
    // The first line names the cause (TorchScript's text starts with a blank line); the rest keeps the
    // full diagnostic with its source excerpt.
    const std::string what = e.what();
    const auto from = what.find_first_not_of(" \n");
    const auto cause = from == std::string::npos ? what : what.substr(from, what.find('\n', from) - from);
    throw HostProgramError("host program does not compile as TorchScript: " + cause + "\n" + what);
  }
  forward_ = unit_->find_function("forward");
  if (!forward_) throw HostProgramError("host program has no `def forward(...)`");
  const size_t expected = input_count + 1;
  const size_t got = forward_->getSchema().arguments().size();
  if (got != expected)
    throw HostProgramError("forward takes " + std::to_string(got) + " arguments; this problem needs " +
                           std::to_string(input_count) + " input(s) then params: Dict[str, Tensor]");
  setup_ = unit_->find_function("setup");

  std::set<std::string> ops, computing;
  for (auto* fn : unit_->get_functions()) {
    std::set<std::string> computing_here;
    collect_ops(torch::jit::toGraphFunction(*fn).graph()->block(), ops, computing_here);
    if (fn != setup_) computing.insert(computing_here.begin(), computing_here.end());  // setup is never ablated
  }
  computing_ops_.assign(computing.begin(), computing.end());
  for (const auto& op : ops) {
    if (kForbiddenOps.count(op)) throw HostProgramError("host program calls " + op + ", which kbench does not allow");
    if (op.rfind("aten::", 0) == 0) torch_ops_.push_back(op);
  }
}

std::string ScriptHostProgram::forward_schema() const {
  std::ostringstream s;
  s << forward_->getSchema();
  return s.str();
}

c10::Dict<std::string, at::Tensor> ScriptHostProgram::setup(const c10::Dict<std::string, at::Tensor>& params) const {
  if (!setup_) return params;
  torch::jit::GraphOptimizerEnabledGuard op_by_op(false);  // as the reference runs: see Reference::forward
  auto out = (*setup_)({params});
  if (!out.isGenericDict()) throw HostProgramError("setup(params) must return Dict[str, Tensor]");
  return c10::impl::toTypedDict<std::string, at::Tensor>(out.toGenericDict());
}

c10::IValue ScriptHostProgram::forward(const std::vector<c10::IValue>& inputs,
                                 const c10::Dict<std::string, at::Tensor>& params) const {
  std::vector<c10::IValue> stack(inputs.begin(), inputs.end());
  // A fresh dictionary per call: entries the program adds cannot carry results into the next call.
  stack.emplace_back(params.copy());
  torch::jit::GraphOptimizerEnabledGuard op_by_op(false);  // as the reference runs: see Reference::forward
  return (*forward_)(std::move(stack));
}

}  // namespace kbench::compile
