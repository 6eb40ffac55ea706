#include "compile/modelnew.h"

#include <atomic>
#include <mutex>
#include <set>
#include <sstream>

#include <ATen/Context.h>
#include <ATen/record_function.h>
#include <pybind11/embed.h>
#include <torch/csrc/autograd/python_variable.h>

#include "compile/python_runtime.h"
#include "compile/submission.h"
#include "compile/submission_threads.h"
#include "compile/triton_runtime.h"
#include "problems/reference.h"

namespace py = pybind11;

namespace kbench::compile {
namespace {

// The extensions of the submission being loaded: kbench's load_inline (modelnew_support.py) asks
// here, through the embedded module below.
struct ExtensionBuilder {
  const ModelNewOptions& options;
  ExtensionCache cache;
  std::vector<ExtensionBuild>& builds;

  std::string build(const std::string& spec_json) {
    const auto spec = ExtensionSpec::from_json(nlohmann::json::parse(spec_json));
    // A hit costs a file read; only a real build switches to the build budget.
    auto built = cache.lookup(ExtensionCache::key(spec, options.arch, options.extension_build));
    if (!built) {
      if (options.on_stage) options.on_stage("build");
      built = build_extension(spec, options.arch, cache, options.extension_build);
      if (options.on_stage) options.on_stage("compile");
    }
    built->name = spec.name;
    if (built->ok) add_submission_library(built->library.string());
    builds.push_back(*built);
    return nlohmann::json{{"ok", built->ok}, {"log", built->log}, {"module", built->module},
                          {"path", built->library.string()}}
        .dump();
  }
};
ExtensionBuilder* g_builder = nullptr;

// Sets the builder for the scope of one load.
class BuilderScope {
 public:
  explicit BuilderScope(ExtensionBuilder& builder) { g_builder = &builder; }
  ~BuilderScope() { g_builder = nullptr; }
  BuilderScope(const BuilderScope&) = delete;
  BuilderScope& operator=(const BuilderScope&) = delete;
};

// The PyTorch ops that forward calls itself (not those they call in turn), over every call: what
// the record lists and the ablation rule needs (HostProgram::computing_ops). In kbench's own format
// they are read from the program; Python's are known only by watching, on forward's thread and on
// the threads the submission starts (submission_threads.h).
struct CalledOps {
  std::mutex mutex;
  std::set<std::string> ops, computing;
};
std::atomic<CalledOps*> g_called{nullptr};
thread_local bool t_runs_forward = false;
thread_local int t_depth = 0;

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction&) {
  ++t_depth;
  return nullptr;
}

void on_op_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (--t_depth != 0 || !(t_runs_forward || on_submission_thread())) return;
  auto* called = g_called.load();
  const std::string op = fn.name();
  if (!called || op.rfind("aten::", 0) != 0) return;
  bool makes_tensor = false;
  for (const auto& v : fn.outputs()) makes_tensor = makes_tensor || v.isTensor();
  std::lock_guard<std::mutex> lock(called->mutex);
  called->ops.insert(op);
  if (makes_tensor && computes_values(op)) called->computing.insert(op);
}

// Watches the ops of the calling thread and of the submission's threads for the scope of one call.
class OpWatch {
 public:
  explicit OpWatch(CalledOps& called) {
    g_called = &called;
    t_runs_forward = true;
    t_depth = 0;
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(on_op_start, on_op_end).needsOutputs(true).scopes({at::RecordScope::FUNCTION}));
  }
  ~OpWatch() {
    at::removeCallback(handle_);
    t_runs_forward = false;
    g_called = nullptr;
  }
  OpWatch(const OpWatch&) = delete;
  OpWatch& operator=(const OpWatch&) = delete;

 private:
  at::CallbackHandle handle_ = 0;
};

// Threads the submission left running, Python's or native: a refusal, or "".
std::string threads_left(const std::string& after) {
  const auto python_threads = python::other_threads();
  return python_threads.empty() ? submission_threads_left(after) : python_threads;
}

// PyTorch's settings that only pick algorithms (cuDNN's autotuner and its limit, its deterministic
// choice): a submission may set them for its own calls, and kbench's calls (the reference, the
// baselines) never run under them. Settings that change results (TF32, reduced-precision
// reductions, ...) are not among them: the process-state watch refuses those (check/process_state.h).
struct AlgorithmSettings {
  bool cudnn_benchmark = false;
  int cudnn_benchmark_limit = 0;
  bool cudnn_deterministic = false;

  static AlgorithmSettings current() {
    const auto& c = at::globalContext();
    return {c.benchmarkCuDNN(), c.benchmarkLimitCuDNN(), c.deterministicCuDNN()};
  }
  void apply() const {
    auto& c = at::globalContext();
    c.setBenchmarkCuDNN(cudnn_benchmark);
    c.setBenchmarkLimitCuDNN(cudnn_benchmark_limit);
    c.setDeterministicCuDNN(cudnn_deterministic);
  }
};

// For the scope of the submission's code: its own algorithm settings in force; on leaving, what it
// set is kept as its own and kbench's are back.
class SubmissionSettingsScope {
 public:
  SubmissionSettingsScope(AlgorithmSettings& submission, const AlgorithmSettings& kbench)
      : submission_(submission), kbench_(kbench) {
    submission_.apply();
  }
  ~SubmissionSettingsScope() {
    submission_ = AlgorithmSettings::current();
    kbench_.apply();
  }
  SubmissionSettingsScope(const SubmissionSettingsScope&) = delete;
  SubmissionSettingsScope& operator=(const SubmissionSettingsScope&) = delete;

 private:
  AlgorithmSettings& submission_;
  const AlgorithmSettings& kbench_;
};

// An input as ModelNew receives it. A tensor is handed as a fresh alias of its memory: a Python
// object of its own each call, so nothing a submission attaches to it survives to a later call.
py::object to_python(const c10::IValue& v) {
  if (v.isTensor()) return py::reinterpret_steal<py::object>(THPVariable_Wrap(v.toTensor().alias()));
  if (v.isInt()) return py::int_(v.toInt());
  if (v.isDouble()) return py::float_(v.toDouble());
  if (v.isBool()) return py::bool_(v.toBool());
  if (v.isNone()) return py::none();
  throw HostProgramError("kbench cannot hand ModelNew an input of type " + v.tagKind());
}

// What forward returned, as the checks compare it: plain tensors, or tuples and lists of them.
c10::IValue to_ivalue(const py::handle& out) {
  PyObject* object = out.ptr();
  if (THPVariable_CheckExact(object)) return THPVariable_Unpack(object);
  if (THPVariable_Check(object))
    throw HostProgramError("forward returned a subclass of torch.Tensor (" + std::string(Py_TYPE(object)->tp_name) +
                           "): kbench compares plain tensors");
  if (py::isinstance<py::tuple>(out) || py::isinstance<py::list>(out)) {
    std::vector<c10::IValue> elements;
    for (const auto& item : out) elements.push_back(to_ivalue(item));
    return c10::ivalue::Tuple::create(std::move(elements));
  }
  throw HostProgramError("forward returned " + std::string(Py_TYPE(object)->tp_name) +
                         ": kbench compares tensors, or tuples of them");
}

// A ModelNew instance as the checks run it. Python runs on the thread that started it, which holds
// the GIL; every method here runs there (they acquire it, which for that thread costs nothing).
class ModelNewProgram : public HostProgram {
 public:
  ModelNewProgram(py::module_ support, py::object model, std::string signature, std::string backend, int device,
                  AlgorithmSettings submission_settings, AlgorithmSettings kbench_settings)
      : support_(std::move(support)), model_(std::move(model)), signature_(std::move(signature)),
        backend_(std::move(backend)), device_(device), submission_settings_(submission_settings),
        kbench_settings_(kbench_settings) {}
  ~ModelNewProgram() override {
    py::gil_scoped_acquire gil;
    model_ = py::object();
    support_ = py::module_();
  }

  bool has_setup() const override { return false; }
  bool keeps_state() const override { return true; }
  std::string forward_schema() const override { return signature_; }
  const std::vector<std::string>& torch_ops() const override { return torch_ops_; }
  const std::vector<std::string>& computing_ops() const override { return computing_ops_; }
  std::string backend() const override { return backend_; }
  bool settles() const override { return backend_ == "triton"; }

  // Triton's autotuner times every config with PyTorch ops of its own, which no check may count as
  // the submission's: a settling call is made outside the op watch.
  void untimed_call(const std::vector<c10::IValue>& inputs, const c10::Dict<std::string, at::Tensor>&) const override {
    py::gil_scoped_acquire gil;
    py::tuple args(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) args[i] = to_python(inputs[i]);
    {
      SubmissionSettingsScope settings(submission_settings_, kbench_settings_);
      try {
        model_(*args);
        support_.attr("synchronize")();
      } catch (const py::error_already_set& e) {
        throw std::runtime_error(python::describe(e));
      }
    }
    if (const auto threads = threads_left("its call"); !threads.empty()) throw HostProgramError(threads);
  }

  // KernelBench's move to the GPU in float32. What it returns are ModelNew's own parameters and
  // buffers (the reference's are not used: ModelNew holds its own, built under the same seed), which
  // the checks fingerprint around every call.
  c10::Dict<std::string, at::Tensor> setup(const c10::Dict<std::string, at::Tensor>&) const override {
    py::gil_scoped_acquire gil;
    try {
      {
        SubmissionSettingsScope settings(submission_settings_, kbench_settings_);
        model_ = support_.attr("to_device")(model_, "cuda:" + std::to_string(device_));
      }
      if (const auto threads = threads_left("its move to the GPU"); !threads.empty()) throw HostProgramError(threads);
      c10::Dict<std::string, at::Tensor> state;
      for (const auto& [name, tensor] : support_.attr("state_tensors")(model_).cast<py::dict>())
        state.insert(name.cast<std::string>(), THPVariable_Unpack(tensor.ptr()));
      return state;
    } catch (const py::error_already_set& e) {
      throw std::runtime_error(python::describe(e));
    }
  }

  c10::IValue forward(const std::vector<c10::IValue>& inputs, const c10::Dict<std::string, at::Tensor>&) const override {
    py::gil_scoped_acquire gil;
    py::tuple args(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) args[i] = to_python(inputs[i]);
    py::object out;
    {
      SubmissionSettingsScope settings(submission_settings_, kbench_settings_);
      OpWatch watch(called_);
      try {
        out = model_(*args);
      } catch (const py::error_already_set& e) {
        throw std::runtime_error(python::describe(e));
      }
    }
    if (const auto threads = threads_left("its call"); !threads.empty()) throw HostProgramError(threads);
    torch_ops_.assign(called_.ops.begin(), called_.ops.end());
    computing_ops_.assign(called_.computing.begin(), called_.computing.end());
    return to_ivalue(out);
  }

 private:
  py::module_ support_;
  mutable py::object model_;  // replaced by its GPU copy in setup(), as KernelBench's .to() does
  std::string signature_;
  std::string backend_;
  int device_;
  mutable CalledOps called_;
  mutable std::vector<std::string> torch_ops_, computing_ops_;
  mutable AlgorithmSettings submission_settings_;
  const AlgorithmSettings kbench_settings_;
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The line of a compiler's log that says what went wrong.
std::string first_error(const std::string& log) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.find("error") != std::string::npos || line.find("Error") != std::string::npos) return line;
  return first_line(log);
}

// The submission's Python failed: why, in the kinds of ModelNewError.
ModelNewError python_failure(const py::error_already_set& e, const std::vector<ExtensionBuild>& builds) {
  const auto text = python::describe(e);
  for (const auto& b : builds)
    if (!b.ok) return {ModelNewError::Kind::build, "extension '" + b.name + "' did not build: " + first_error(b.log), b.log};
  if (text.find(python::kUnsupportedTag) != std::string::npos) {
    const auto at = text.find(python::kUnsupportedTag) + std::string(python::kUnsupportedTag).size();
    return {ModelNewError::Kind::unsupported, text.substr(at, text.find('\n', at) - at), text};
  }
  std::string message = first_line(text);
  if (e.matches(PyExc_NameError) && message.find("'Model'") != std::string::npos)
    message += " (kbench gives a submission the reference's imports and constants, as KernelBench does, but not its "
               "classes and functions: ModelNew may not reuse Model)";
  return {ModelNewError::Kind::python, message, text};
}

}  // namespace

PYBIND11_EMBEDDED_MODULE(kbench_native, m) {
  m.def("build_extension", [](const std::string& spec_json) {
    if (!g_builder) throw std::runtime_error("kbench builds extensions only while it loads a submission");
    return g_builder->build(spec_json);
  });
}

bool is_modelnew_file(const std::filesystem::path& path) { return path.extension() == ".py"; }

nlohmann::json start_python(bool with_cuda) {
  python::start(with_cuda);
  const auto& t = python::start_times();
  return {{"interpreter", t.interpreter_ms}, {"torch", t.torch_ms}, {"support", t.support_ms}, {"cuda", t.cuda_ms}};
}

std::unique_ptr<HostProgram> load_modelnew(const std::filesystem::path& file, const ModelNewOptions& options,
                                           std::vector<ExtensionBuild>& builds) {
  auto support = python::start(options.with_cuda);
  py::gil_scoped_acquire gil;
  py::object init_inputs, reference_names;
  try {
    const auto problem = support.attr("load_problem")(options.problem_source.string()).cast<py::tuple>();
    init_inputs = problem[0];
    reference_names = problem[1];
  } catch (const py::error_already_set& e) {
    throw std::runtime_error("the problem's get_init_inputs() failed: " + python::describe(e));
  }
  ExtensionBuilder builder{options, ExtensionCache(options.cache_dir / "extensions"), builds};
  BuilderScope scope(builder);
  if (triton::imports_triton(file_bytes(file)))
    python::set_backend("triton", options.with_cuda && options.count_launches
                                      ? triton::prepare(file, options.cache_dir, options.count_launches)
                                      : "Triton kernels need a GPU, and this evaluation runs none");
  python::enter_submission_phase();
  const auto kbench_settings = AlgorithmSettings::current();
  auto submission_settings = kbench_settings;
  try {
    std::string signature, backend = "cuda";
    py::object model;
    {
      SubmissionSettingsScope settings(submission_settings, kbench_settings);
      const auto module = support.attr("import_submission")(std::filesystem::absolute(file).string(), reference_names);
      if (triton::uses_triton(module)) {
        // Triton imported ahead (a spare worker's start) is in sys.modules, where an import raises no
        // audit event: a file that reaches it without an import statement was not set up for.
        if (!triton::ready())
          throw ModelNewError(ModelNewError::Kind::unsupported,
                              "the file uses Triton without an `import triton` statement, which kbench needs to set "
                              "Triton up for it",
                              "");
        backend = "triton";
      }
      const auto cls = support.attr("model_class")(module);
      signature = support.attr("forward_signature")(cls).cast<std::string>();
      torch::manual_seed(problems::kModelSeed);  // as the reference was built: equal parameters
      model = support.attr("construct")(cls, init_inputs);
    }
    if (const auto threads = threads_left("its construction"); !threads.empty())
      throw ModelNewError(ModelNewError::Kind::python, threads, threads);
    return std::make_unique<ModelNewProgram>(support, std::move(model), signature, backend, options.device,
                                             submission_settings, kbench_settings);
  } catch (const py::error_already_set& e) {
    throw python_failure(e, builds);
  }
}

std::string imported_backend(const std::string& source) { return triton::imports_triton(source) ? "triton" : "cuda"; }

nlohmann::json triton_report() { return triton::report(); }

std::string start_triton_ahead(const std::filesystem::path& cache_dir) { return triton::start(cache_dir); }

std::string prepare_triton_gpu_ahead(const std::filesystem::path& cache_dir, const std::function<int64_t()>& count_launches) {
  return triton::prepare_gpu_ahead(cache_dir, count_launches);
}

nlohmann::json modelnew_environment() {
  auto support = python::start(/*with_cuda=*/false);
  const auto json = py::module_::import("json");
  return nlohmann::json::parse(json.attr("dumps")(support.attr("environment")()).cast<std::string>());
}

std::vector<ExtensionBuild> prebuild_modelnew(const std::filesystem::path& file, const ModelNewOptions& options) {
  std::vector<ExtensionBuild> builds;
  try {
    load_modelnew(file, options, builds);
  } catch (const std::exception&) {
    // reported by the evaluation
  }
  return builds;
}

}  // namespace kbench::compile
