// The compute functions of CUDA's libraries that a ModelNew extension calls itself: cuBLAS's GEMMs,
// cuBLASLt's matmul and cuDNN's convolution. Their kernels are the library's work, not the
// submission's, as PyTorch's ops are: an extension that only copies a library's answer into its
// output did not compute it. The extension is linked with `-Wl,--wrap=<function>` for each function
// library_functions() lists (as for the launch entry points, launch/extension_launches.cpp), so its
// calls come to kbench's `__wrap_<function>`, which makes the call and then tells the observer
// installed here what it wrote. check/torch_op_observer.h installs one while it watches a forward.
// compile::wrapped_library_functions() lists them.
#pragma once

#include <ATen/core/Tensor.h>

namespace kbench::launch {

// Hears each call that returned successfully: the function's name and the memory it wrote, as a
// tensor over that memory (its elements in the library's order: column-major matrices column by
// column), after the library's stream has finished it. `result` is undefined where the memory
// cannot be read now (the stream is being captured into a CUDA graph).
using LibraryObserver = void (*)(const char* function, const at::Tensor& result);
void set_library_observer(LibraryObserver observer);

}  // namespace kbench::launch
