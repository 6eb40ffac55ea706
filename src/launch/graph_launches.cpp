#include "launch/graph_launches.h"

#ifdef KBENCH_WITH_CUDA
#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "launch/launches.h"

namespace kbench::launch {
namespace {

// The submission's nodes of each graph being captured, and of each executable graph made from one.
struct Replayed {
  int64_t kernels = 0;                 // the submission's kernel nodes, counted at each replay
  cudaGraphExec_t ablated = nullptr;   // the same graph with those nodes disabled
};

// Captures begun and not yet ended: a launch asks whether its stream is capturing only while one
// is (the question costs every launch time of its own).
std::atomic<int> g_captures{0};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<cudaGraph_t, std::vector<cudaGraphNode_t>>& captured() {
  static std::map<cudaGraph_t, std::vector<cudaGraphNode_t>> nodes;
  return nodes;
}
std::map<cudaGraphExec_t, Replayed>& executables() {
  static std::map<cudaGraphExec_t, Replayed> execs;
  return execs;
}

template <typename Function>
Function runtime(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_NEXT, name));
}

// The graph and the node a capturing stream's last call added, or false where it is not capturing.
bool last_captured_node(cudaStream_t stream, cudaGraph_t& graph, cudaGraphNode_t& node) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* dependencies = nullptr;
  size_t count = 0;
#if CUDART_VERSION >= 13000
  const auto err = cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &dependencies, nullptr, &count);
#else
  const auto err = cudaStreamGetCaptureInfo_v2(stream, &status, nullptr, &graph, &dependencies, &count);
#endif
  if (err != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (status != cudaStreamCaptureStatusActive || count != 1) return false;
  node = dependencies[0];
  return true;
}

// After `exec` was made from `graph`: where the graph holds nodes of the submission, a second
// executable graph with them disabled, for the ablation run.
template <typename Instantiate>
void note_instantiated(cudaGraphExec_t exec, cudaGraph_t graph, Instantiate instantiate) {
  std::vector<cudaGraphNode_t> nodes;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    const auto it = captured().find(graph);
    if (it == captured().end()) return;
    nodes = it->second;
  }
  Replayed replayed{static_cast<int64_t>(nodes.size()), nullptr};
  if (instantiate(&replayed.ablated, graph) == cudaSuccess)
    for (const auto node : nodes) cudaGraphNodeSetEnabled(replayed.ablated, node, 0);
  cudaGetLastError();
  std::lock_guard<std::mutex> lock(registry_mutex());
  executables()[exec] = replayed;
}

}  // namespace

bool captured_into_graph(void* stream) {
  if (g_captures.load() == 0) return false;
  cudaGraph_t graph = nullptr;
  cudaGraphNode_t node = nullptr;
  if (!last_captured_node(static_cast<cudaStream_t>(stream), graph, node)) return false;
  std::lock_guard<std::mutex> lock(registry_mutex());
  captured()[graph].push_back(node);
  return true;
}

}  // namespace kbench::launch

using namespace kbench::launch;

extern "C" cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  static const auto real = runtime<decltype(&cudaStreamBeginCapture)>("cudaStreamBeginCapture");
  const auto err = real(stream, mode);
  if (err == cudaSuccess) ++g_captures;
  return err;
}

extern "C" cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph,
                                                     const cudaGraphNode_t* dependencies,
                                                     const cudaGraphEdgeData* edges, size_t count,
                                                     cudaStreamCaptureMode mode) {
  static const auto real = runtime<decltype(&cudaStreamBeginCaptureToGraph)>("cudaStreamBeginCaptureToGraph");
  const auto err = real(stream, graph, dependencies, edges, count, mode);
  if (err == cudaSuccess) ++g_captures;
  return err;
}

extern "C" cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  static const auto real = runtime<decltype(&cudaStreamEndCapture)>("cudaStreamEndCapture");
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const bool was_capturing = cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
  cudaGetLastError();
  const auto err = real(stream, graph);
  if (was_capturing) --g_captures;  // ended, also where the capture had failed
  return err;
}

extern "C" cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  static const auto real = runtime<decltype(&cudaGraphInstantiate)>("cudaGraphInstantiate");
  const auto err = real(exec, graph, flags);
  if (err == cudaSuccess) note_instantiated(*exec, graph, [&](cudaGraphExec_t* e, cudaGraph_t g) { return real(e, g, flags); });
  return err;
}

extern "C" cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  static const auto real = runtime<decltype(&cudaGraphInstantiateWithFlags)>("cudaGraphInstantiateWithFlags");
  const auto err = real(exec, graph, flags);
  if (err == cudaSuccess) note_instantiated(*exec, graph, [&](cudaGraphExec_t* e, cudaGraph_t g) { return real(e, g, flags); });
  return err;
}

extern "C" cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                      cudaGraphInstantiateParams* params) {
  static const auto real = runtime<decltype(&cudaGraphInstantiateWithParams)>("cudaGraphInstantiateWithParams");
  const auto err = real(exec, graph, params);
  if (err == cudaSuccess)
    note_instantiated(*exec, graph, [&](cudaGraphExec_t* e, cudaGraph_t g) {
      auto copy = *params;
      return real(e, g, &copy);
    });
  return err;
}

extern "C" cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  static const auto real = runtime<decltype(&cudaGraphLaunch)>("cudaGraphLaunch");
  Replayed replayed;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    const auto it = executables().find(exec);
    if (it != executables().end()) replayed = it->second;
  }
  if (replayed.kernels == 0) return real(exec, stream);
  if (launches_skipped()) return replayed.ablated ? real(replayed.ablated, stream) : cudaSuccess;
  const auto err = real(exec, stream);
  if (err == cudaSuccess)
    for (int64_t i = 0; i < replayed.kernels; ++i) record_launch();
  return err;
}

extern "C" cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  static const auto real = runtime<decltype(&cudaGraphExecDestroy)>("cudaGraphExecDestroy");
  cudaGraphExec_t ablated = nullptr;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    const auto it = executables().find(exec);
    if (it != executables().end()) ablated = it->second.ablated, executables().erase(it);
  }
  if (ablated) real(ablated);
  return real(exec);
}

extern "C" cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  static const auto real = runtime<decltype(&cudaGraphDestroy)>("cudaGraphDestroy");
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    captured().erase(graph);
  }
  return real(graph);
}

#else

namespace kbench::launch {
bool captured_into_graph(void*) { return false; }  // without CUDA nothing is captured
}  // namespace kbench::launch

#endif
