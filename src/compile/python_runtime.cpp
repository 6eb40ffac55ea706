#include "compile/python_runtime.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <stdexcept>
#include <string_view>

#include <pybind11/embed.h>

#include "compile/child_process.h"
#include "compile/modelnew_support_source.h"  // generated from modelnew_support.py
#include "log/elapsed.h"
#include "problems/catalog.h"

namespace py = pybind11;

namespace kbench::compile::python {
namespace {


std::atomic<bool> g_submission_phase{false};
StartTimes g_start_times;
// traceback.format_exception as it was at set-up: a submission replacing it cannot reword its errors.
py::object* g_format_exception = nullptr;

// Kernel backends kbench does not run, by top-level module name.
constexpr std::array<std::string_view, 17> kUnsupportedBackends = {
    "triton", "tilelang", "tvm", "cutlass", "cute", "thunderkittens", "cupy", "cupyx", "numba",
    "pycuda", "cuda", "jax", "jaxlib", "warp", "taichi", "helion", "mojo"};

// Events refused outright (threads apart, in audit()): processes, signals, changes to the file
// system (but making a directory: submissions often make a build directory they never use), walks
// over every live object, more audit hooks.
constexpr std::array<std::string_view, 38> kRefusedEvents = {
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn",
    "subprocess.Popen", "os.kill", "os.killpg", "signal.pthread_kill",
    "os.chdir", "os.remove", "os.rename", "os.rmdir", "os.chmod", "os.chown", "os.link",
    "os.symlink", "os.truncate", "os.utime", "os.chflags", "os.lchflags", "os.setxattr", "os.removexattr",
    "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move", "shutil.rmtree",
    "shutil.make_archive", "shutil.unpack_archive", "sqlite3.connect", "resource.setrlimit", "gc.get_objects",
    "gc.get_referrers", "gc.get_referents"};
// Families refused by prefix: the network, and native calls through ctypes.
constexpr std::array<std::string_view, 3> kRefusedPrefixes = {"socket.", "ctypes.", "sys.addaudithook"};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

int refuse(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  return -1;
}

std::string utf8(PyObject* object) {
  if (!object || !PyUnicode_Check(object)) return "";
  const char* text = PyUnicode_AsUTF8(object);
  if (!text) PyErr_Clear();
  return text ? text : "";
}

// open(path, mode, flags): reading is allowed but for /proc, /dev and /sys (the process's own
// memory among them); writing is not.
int check_open(PyObject* args) {
  PyObject *path = nullptr, *mode = nullptr;
  int flags = 0;
  if (!PyArg_ParseTuple(args, "OOi", &path, &mode, &flags)) {
    PyErr_Clear();
    return 0;
  }
  const std::string mode_text = utf8(mode);
  const bool writes = mode_text.find_first_of("wax+") != std::string::npos ||
                      (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) != 0;
  std::string name;
  if (PyUnicode_Check(path)) name = utf8(path);
  else if (PyBytes_Check(path)) name = PyBytes_AsString(path);
  if (writes)
    return refuse(PyExc_PermissionError, std::string(kRefusedTag) + "a submission may not write files (" + name + ")");
  for (const char* dir : {"/proc/", "/dev/", "/sys/"})
    if (starts_with(name, dir) && name != "/dev/null")
      return refuse(PyExc_PermissionError, std::string(kRefusedTag) + "a submission may not read " + name);
  return 0;
}

// Backends kbench runs where it set them up (Triton: triton_runtime.h), or why it could not.
std::map<std::string, std::string, std::less<>> g_backend_refusals;

int check_import(PyObject* args) {
  const std::string module = PyTuple_Check(args) && PyTuple_Size(args) > 0 ? utf8(PyTuple_GetItem(args, 0)) : "";
  const std::string_view root = std::string_view(module).substr(0, module.find('.'));
  if (const auto known = g_backend_refusals.find(root); known != g_backend_refusals.end())
    return known->second.empty() ? 0
                                 : refuse(PyExc_ImportError, std::string(kUnsupportedTag) + "the submission imports " +
                                                                 module + ", which kbench cannot run here: " + known->second);
  for (const auto backend : kUnsupportedBackends)
    if (root == backend)
      return refuse(PyExc_ImportError,
                    std::string(kUnsupportedTag) + "the submission imports " + module + ": kbench runs CUDA C++ built " +
                        "with torch.utils.cpp_extension.load_inline" + (root == "triton" ? " and Triton kernels imported with an import statement" : "") +
                        ", not " + std::string(root) + " kernels");
  return 0;
}

int audit(const char* event, PyObject* args, void*) {
  if (!g_submission_phase) return 0;
  const std::string_view e(event);
  if (e == "open") return check_open(args);
  if (e == "import") return check_import(args);
  if (e == "_thread.start_new_thread" || e == "_thread.start_joinable_thread")  // Python 3.12 on
    return refuse(PyExc_PermissionError,
                  std::string(kRefusedTag) + "a submission may not start threads (" + e.data() + ")");
  for (const auto refused : kRefusedEvents)
    if (e == refused)
      return refuse(PyExc_PermissionError, std::string(kRefusedTag) + e.data() + " is not allowed in a submission");
  for (const auto prefix : kRefusedPrefixes)
    if (starts_with(e, prefix))
      return refuse(PyExc_PermissionError, std::string(kRefusedTag) + e.data() + " is not allowed in a submission");
  return 0;
}

py::module_ start_interpreter() {
  const log::PhaseTimer since_start;
  PySys_AddAuditHook(audit, nullptr);  // before Python starts: nothing can run ahead of it
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;  // the worker's signals stay as kbench set them
  config.parse_argv = 0;
  config.write_bytecode = 0;           // no .pyc files written next to anyone's sources
  config.buffered_stdio = 0;           // what a submission prints reaches the record before the worker ends
  config.safe_path = 1;                // nothing from the current directory shadows a module
  // The Python's own name makes its installation (a venv's site-packages) the interpreter's.
  PyConfig_SetBytesString(&config, &config.program_name, executable().c_str());
  try {
    py::initialize_interpreter(&config, 0, nullptr, /*add_program_dir_to_path=*/false);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot start Python (" + executable() + "): " + e.what());
  }
  g_start_times.interpreter_ms = since_start.elapsed_ms();
  try {
    g_format_exception = new py::object(py::module_::import("traceback").attr("format_exception"));
    // torch's ~2000 modules compiled once into kbench's cache, not at every start: installations
    // often come without bytecode (PYTHONDONTWRITEBYTECODE in container images), and compiling them
    // took 1.6 s of the 3.6 s that importing torch took on the H100 machine. Only kbench's own
    // set-up is cached: a submission's module is never written, nor read from there.
    const auto sys = py::module_::import("sys");
    const py::object prefix_before = sys.attr("pycache_prefix");
    sys.attr("pycache_prefix") = (problems::cache_dir() / "python-bytecode").string();
    sys.attr("dont_write_bytecode") = false;
    log::timed(g_start_times.torch_ms, [] { return py::module_::import("torch"); });
    const log::PhaseTimer support_timer(g_start_times.support_ms);
    auto support = py::module_::import("types").attr("ModuleType")("kbench_modelnew");
    const auto builtins = py::module_::import("builtins");
    builtins.attr("exec")(builtins.attr("compile")(kModelNewSupportSource, "<kbench: modelnew_support.py>", "exec"),
                          support.attr("__dict__"));
    sys.attr("modules")["kbench_modelnew"] = support;
    sys.attr("dont_write_bytecode") = true;
    sys.attr("pycache_prefix") = prefix_before;
    return support;
  } catch (const py::error_already_set& e) {
    throw std::runtime_error("cannot import torch in Python (" + executable() + "): " + describe(e));
  }
}

}  // namespace

py::module_ start(bool with_cuda) {
  environment_at_start();  // taken now, before any submission code could change the environment
  static py::module_ support = start_interpreter();
  static bool cuda_ready = false;
  if (with_cuda && !cuda_ready) {
    // Before any submission code: torch.cuda's lazy initialisation runs calls queued by whoever
    // imported it, and counts devices through NVML with ctypes, which submission code may not use.
    log::timed(g_start_times.cuda_ms, [&] { return support.attr("initialise_cuda")(); });
    cuda_ready = true;
  }
  return support;
}

const StartTimes& start_times() { return g_start_times; }

namespace {
int python_threads() {
  int threads = 0;
  for (PyThreadState* t = PyInterpreterState_ThreadHead(PyInterpreterState_Get()); t; t = PyThreadState_Next(t))
    ++threads;
  return threads;
}
int g_threads_at_setup = 1;  // what kbench's own set-up left (PyTorch may keep threads of its own)
}  // namespace

void set_backend(const std::string& module_root, const std::string& refusal) {
  g_backend_refusals[module_root] = refusal;
}

void enter_submission_phase() {
  if (!g_submission_phase) g_threads_at_setup = python_threads();
  g_submission_phase = true;
}

std::string other_threads() {
  const int started = python_threads() - g_threads_at_setup;
  if (started <= 0) return "";
  return std::string(kRefusedTag) + "a submission may not start threads (" + std::to_string(started) +
         " Python thread(s) started)";
}

pid_t fork() {
  PyOS_BeforeFork();
  const pid_t pid = ::fork();
  if (pid == 0) {
    PyOS_AfterFork_Child();
  } else {
    PyOS_AfterFork_Parent();
  }
  return pid;
}

void replace_environment(const std::vector<std::string>& entries) {
  // os.environ.clear() unsets what Python's copy holds, and setting an entry through os.environ
  // puts it in the C environment as well.
  ::clearenv();
  auto environ = py::module_::import("os").attr("environ");
  environ.attr("clear")();
  for (const auto& entry : entries) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) continue;
    try {
      environ[py::str(entry.substr(0, equals))] = py::str(entry.substr(equals + 1));
    } catch (const py::error_already_set&) {  // not UTF-8: in the C environment alone, as it came
      ::putenv(::strdup(entry.c_str()));
    }
  }
}

const std::vector<std::string>& environment_at_start() {
  static const std::vector<std::string> environment = current_environment();
  return environment;
}

std::string executable() {
  if (const char* configured = std::getenv("KBENCH_PYTHON"); configured && *configured) return configured;
  return KBENCH_PYTHON_EXECUTABLE;
}

std::string describe(const py::error_already_set& e) {
  try {
    const auto lines = (*g_format_exception)(e.type(), e.value(), e.trace());
    std::string traceback;
    for (const auto& line : lines) traceback += line.cast<std::string>();
    return py::str(e.type().attr("__name__")).cast<std::string>() + ": " + py::str(e.value()).cast<std::string>() +
           "\n" + traceback;
  } catch (const std::exception&) {
    return e.what();
  }
}

}  // namespace kbench::compile::python
