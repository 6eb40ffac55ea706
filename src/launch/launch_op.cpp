#include "launch/launch_op.h"

#include <array>
#include <cstring>
#include <limits>
#include <vector>

#include <torch/library.h>
#include <torch/script.h>

#ifdef KBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda.h>
#endif

namespace kbench::launch {
namespace {

const LoadedModule* g_module = nullptr;
const DeviceInfo* g_device = nullptr;
LaunchObserver* g_observer = nullptr;

[[noreturn]] void fail(const LoadedModule::Kernel* kernel, const std::string& what) {
  std::string msg = std::string(kLaunchErrorTag) + what;
  if (kernel) msg += "; signature: " + kernel->signature.to_string();
  throw std::runtime_error(msg);
}

#ifdef KBENCH_WITH_CUDA
// Kernel arguments packed as the driver wants them: storage per argument, pointers to each.
struct PackedArgs {
  std::vector<std::array<unsigned char, 8>> storage;
  std::vector<void*> pointers;

  template <typename T>
  void push(T value) {
    storage.emplace_back();
    std::memcpy(storage.back().data(), &value, sizeof(T));
  }
  void** finish() {
    for (auto& s : storage) pointers.push_back(s.data());
    return pointers.data();
  }
};

template <typename T>
void push_checked_int(PackedArgs& packed, int64_t v, const LoadedModule::Kernel* k, size_t i) {
  if (v < std::numeric_limits<T>::min() || v > static_cast<int64_t>(std::numeric_limits<T>::max()))
    fail(k, "argument " + std::to_string(i) + " = " + std::to_string(v) + " does not fit the kernel's " +
                std::to_string(sizeof(T) * 8) + "-bit parameter");
  packed.push(static_cast<T>(v));
}

void pack_argument(PackedArgs& packed, const c10::IValue& arg, const compile::KernelParam& param,
                   const LoadedModule::Kernel* k, size_t i) {
  using compile::ParamKind;
  const std::string where = "argument " + std::to_string(i);
  if (param.kind == ParamKind::Aggregate) fail(k, where + " is a struct passed by value; pass pointers and scalars only");
  if (arg.isTensor()) {
    const auto& t = arg.toTensor();
    if (!t.defined()) fail(k, where + " is an undefined tensor");
    if (!t.is_cuda()) fail(k, where + " is a tensor on " + t.device().str() + "; kernels need GPU tensors");
    if (param.kind != ParamKind::Word64) fail(k, where + " is a tensor but the parameter is not a pointer");
    packed.push(t.data_ptr());
  } else if (arg.isBool()) {
    if (param.kind != ParamKind::Integer) fail(k, where + " is a bool but the parameter is not an integer");
    packed.push(static_cast<uint8_t>(arg.toBool()));
    std::memset(packed.storage.back().data() + 1, 0, 7);
  } else if (arg.isInt()) {
    const int64_t v = arg.toInt();
    if (param.kind == ParamKind::Word64) packed.push(v);
    else if (param.kind == ParamKind::Float) param.size == 8 ? packed.push(static_cast<double>(v)) : packed.push(static_cast<float>(v));
    else if (param.size == 4) push_checked_int<int32_t>(packed, v, k, i);
    else if (param.size == 2) push_checked_int<int16_t>(packed, v, k, i);
    else push_checked_int<int8_t>(packed, v, k, i);
  } else if (arg.isDouble()) {
    if (param.kind != ParamKind::Float) fail(k, where + " is a float but the parameter is " + param.ptx_type);
    if (param.size == 8) packed.push(arg.toDouble());
    else if (param.size == 4) packed.push(static_cast<float>(arg.toDouble()));
    else fail(k, where + " is a float but the parameter is 16-bit; pass a tensor or convert in the kernel");
  } else {
    fail(k, where + " has type " + arg.tagKind() + "; kernels take tensors, ints, floats and bools");
  }
}

std::vector<c10::IValue> as_argument_list(const c10::IValue& args) {
  if (args.isTuple()) return args.toTupleRef().elements().vec();
  if (args.isList()) return args.toList().vec();
  return {args};  // a single argument without a tuple
}

void check_dims(const std::vector<int64_t>& dims, const int* limits, const char* what,
                const LoadedModule::Kernel* k) {
  if (dims.empty() || dims.size() > 3) fail(k, std::string(what) + " must have 1 to 3 dimensions");
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] < 1 || dims[d] > limits[d])
      fail(k, std::string(what) + "[" + std::to_string(d) + "] = " + std::to_string(dims[d]) +
                  " is outside 1.." + std::to_string(limits[d]));
}

#endif

void launch(const std::string& name, const std::vector<int64_t>& grid, const std::vector<int64_t>& block,
            const c10::IValue& args, int64_t shared_mem) {
#ifdef KBENCH_WITH_CUDA
  if (!g_module || !g_device) fail(nullptr, "kbench.launch called outside an evaluation");
  const auto* k = g_module->find(name);
  if (!k) fail(nullptr, "no kernel named '" + name + "'; the submission defines: " + g_module->kernel_list());
  check_dims(grid, g_device->max_grid, "grid", k);
  check_dims(block, g_device->max_block, "block", k);
  int64_t threads = 1;
  for (auto b : block) threads *= b;
  if (threads > k->max_threads_per_block)
    fail(k, "block of " + std::to_string(threads) + " threads exceeds this kernel's limit of " +
                std::to_string(k->max_threads_per_block) + " (registers per thread bound it)");
  if (shared_mem < 0 || shared_mem + k->static_shared_bytes > g_device->max_shared_optin)
    fail(k, "shared_mem = " + std::to_string(shared_mem) + " bytes (+ " + std::to_string(k->static_shared_bytes) +
                " static) exceeds the device's " + std::to_string(g_device->max_shared_optin) + " per block");

  const auto list = as_argument_list(args);
  if (list.size() != k->signature.params.size())
    fail(k, "kernel '" + name + "' takes " + std::to_string(k->signature.params.size()) + " arguments, got " +
                std::to_string(list.size()));
  PackedArgs packed;
  for (size_t i = 0; i < list.size(); ++i) pack_argument(packed, list[i], k->signature.params[i], k, i);
  if (launches_skipped()) return;

  auto fn = static_cast<CUfunction>(k->function);
  if (shared_mem > 48 * 1024 &&
      cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shared_mem)) != CUDA_SUCCESS)
    fail(k, "cannot enable " + std::to_string(shared_mem) + " bytes of dynamic shared memory");
  auto dim = [](const std::vector<int64_t>& v, size_t i) { return i < v.size() ? static_cast<unsigned>(v[i]) : 1u; };
  const CUstream stream = at::cuda::getCurrentCUDAStream().stream();
  const LaunchShape shape{k, {dim(grid, 0), dim(grid, 1), dim(grid, 2)}, {dim(block, 0), dim(block, 1), dim(block, 2)},
                          static_cast<unsigned>(shared_mem), stream};
  if (g_observer) g_observer->before(shape);
  const CUresult r = cuLaunchKernel(fn, shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0], shape.block[1],
                                    shape.block[2], shape.shared_mem, stream, packed.finish(), nullptr);
  if (r != CUDA_SUCCESS) {
    const char* msg = nullptr;
    cuGetErrorString(r, &msg);
    // Errors from earlier asynchronous work surface here too; those are the kernel's, not the launch's.
    const bool sticky = r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED ||
                        r == CUDA_ERROR_ILLEGAL_INSTRUCTION || r == CUDA_ERROR_MISALIGNED_ADDRESS ||
                        r == CUDA_ERROR_HARDWARE_STACK_ERROR || r == CUDA_ERROR_ASSERT;
    const std::string text = "launching '" + name + "' failed: " + (msg ? msg : "unknown CUDA error");
    if (sticky) throw std::runtime_error(kRuntimeErrorTag + text);
    fail(k, text);
  }
  if (g_observer) g_observer->after(shape);
  record_launch();
#else
  (void)name; (void)grid; (void)block; (void)args; (void)shared_mem;
  fail(nullptr, "kbench.launch needs a GPU build of kbench");
#endif
}

void launch_boxed(const c10::OperatorHandle&, torch::jit::Stack* stack) {
  const int64_t shared_mem = stack->back().toInt();
  const c10::IValue args = (*stack)[stack->size() - 2];
  const auto block = (*stack)[stack->size() - 3].toIntVector();
  const auto grid = (*stack)[stack->size() - 4].toIntVector();
  const std::string name = (*stack)[stack->size() - 5].toStringRef();
  torch::jit::drop(*stack, 5);
  launch(name, grid, block, args, shared_mem);
}

}  // namespace

void set_active_module(const LoadedModule* module, const DeviceInfo* device) {
  g_module = module;
  g_device = device;
}

void set_launch_observer(LaunchObserver* observer) { g_observer = observer; }

// CONSERVATIVE alias analysis: the op returns nothing, and without it TorchScript would treat the
// call as dead code and drop it, so the kernel would silently never run.
TORCH_LIBRARY(kbench, m) {
  m.def(torch::schema("kbench::launch(str kernel, int[] grid, int[] block, Any args, int shared_mem=0) -> ()",
                      c10::AliasAnalysisKind::CONSERVATIVE),
        torch::CppFunction::makeFromBoxedFunction<&launch_boxed>());
}

}  // namespace kbench::launch
