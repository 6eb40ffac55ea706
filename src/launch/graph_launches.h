// Kernels of the submission that run as nodes of a CUDA graph. A launch made while its stream is
// being captured does not run: it becomes a node of the graph, which runs each time the graph is
// replayed (torch.cuda.CUDAGraph.replay, or cudaGraphLaunch from an extension). So a captured launch
// of the submission's is counted when it is replayed, not when it is captured, and the ablation run
// replays the graph with those nodes disabled.
//
// kbench's executable defines the CUDA runtime's cudaStreamBeginCapture(ToGraph),
// cudaStreamEndCapture, cudaGraphInstantiate(WithFlags, WithParams), cudaGraphLaunch,
// cudaGraphExecDestroy and cudaGraphDestroy (exported, so that PyTorch's calls bind to them too)
// and hands each call on to the runtime's. Captures through the driver API are not seen. At instantiation it makes a second executable graph
// of the same graph with the submission's nodes disabled; a replay during the ablation run launches
// that one. Nodes of PyTorch's ops and of libraries in the graph are not the submission's.
#pragma once

namespace kbench::launch {

// Called by the launch wrappers (extension_launches.cpp) after a launch on `stream` succeeded:
// true where the stream is being captured, the launch then being a node of the graph.
bool captured_into_graph(void* stream);

}  // namespace kbench::launch
