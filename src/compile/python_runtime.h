// The Python interpreter embedded in a kbench process, for KernelBench's ModelNew format (internal to
// compile/: modelnew.cpp and extension_build.cpp use it). It is the Python of the PyTorch kbench was
// built against (its site-packages, a virtual environment's included), sharing kbench's libtorch, so
// tensors cross between C++ and Python as they are.
//
// Two phases. Set-up: kbench's own Python (torch imported, torch.cuda initialised, the problem's
// get_init_inputs()). Then, once submission code is about to run and for the rest of the process,
// an audit hook (sys.addaudithook's C form, which Python code cannot remove or reach) refuses what a
// ModelNew has no need for: starting processes (or threads: see other_threads()), sockets, ctypes, writing, moving or
// deleting files, reading /proc, /dev and /sys, signalling processes, gc's object walks and
// importing kernel backends kbench does not run (TileLang, CuTe, ...; Triton unless kbench set it
// up: triton_runtime.h). Native code of the submission's extension is not Python and is not
// restricted by it.
//
// Python runs on the thread that started it, which holds the GIL from then on: no other thread
// runs Python code except while that thread itself is inside Python.
#pragma once

#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <sys/types.h>

namespace kbench::compile::python {

// Tags in the messages of the exceptions raised by the audit hook and by kbench's load_inline.
inline constexpr const char* kRefusedTag = "[kbench:refused] ";
inline constexpr const char* kUnsupportedTag = "[kbench:unsupported_backend] ";

// Starts the interpreter once per process and imports torch and kbench's support module
// (compile/modelnew_support.py), which it returns. `with_cuda`: initialise torch.cuda during set-up
// (a no-op on later calls). Throws std::runtime_error when Python or its torch cannot be started.
pybind11::module_ start(bool with_cuda);

// Where the start went, in ms: the interpreter, `import torch`, kbench's support module (with
// torch.utils.cpp_extension), torch.cuda's set-up. Zero for what has not run in this process.
struct StartTimes {
  double interpreter_ms = 0, torch_ms = 0, support_ms = 0, cuda_ms = 0;
};
const StartTimes& start_times();

// A kernel backend kbench has set up for this process (refusal "": the submission may import
// `module_root`), or could not (its import is refused as unsupported_backend, with the reason).
void set_backend(const std::string& module_root, const std::string& refusal);

// From now on the audit hook refuses what the header comment lists, for good.
void enter_submission_phase();

// "" while Python runs on this thread alone, else the refusal to put in the verdict. Python before
// 3.12 raises no audit event when a thread starts (3.12's is refused by the hook, with the same
// words), so kbench checks after every call into the submission too; as this thread holds the GIL
// between calls, such a thread has run only inside the call that started it.
std::string other_threads();

// The process environment as it was when the interpreter started, before any submission code could
// change it: what child processes (extension builds) get.
const std::vector<std::string>& environment_at_start();

// fork() with Python's own bookkeeping around it (its at-fork hooks, the import lock); call with
// Python started, on the thread that holds the GIL.
pid_t fork();

// This process's environment replaced by `entries` ("NAME=value"), os.environ with it: for a fork of
// a process whose Python started under another environment (compile/build_pass_forks.h).
void replace_environment(const std::vector<std::string>& entries);

// The Python whose installation kbench uses ($KBENCH_PYTHON, else the one found at build time).
std::string executable();

// "Type: message" of the Python exception being handled, then its traceback (as Python prints it).
std::string describe(const pybind11::error_already_set& e);

}  // namespace kbench::compile::python
