#include "compile/triton_runtime.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <regex>
#include <stdexcept>

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include "compile/child_process.h"
#include "compile/python_runtime.h"
#include "compile/submission.h"
#include "compile/triton_support_source.h"  // generated from triton_support.py
#include "log/elapsed.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace kbench::compile::triton {
namespace {

struct State {
  bool started = false, gpu_started = false, ready = false;
  std::string start_refusal;  // why start() failed, "" when it did not
  std::string gpu_refusal;    // why prepare_gpu() failed, "" when it did not
  double start_ms = 0;        // start(): Triton imported, its seams taken (ahead, in a spare worker)
  double gpu_setup_ms = 0;    // prepare_gpu(): Triton's first use of the GPU, kbench's kernel launched
  bool gpu_setup_ahead = false;  // prepare_gpu() ran before the file was known (a spare's GPU prepared ahead)
  fs::path root;              // $KBENCH_CACHE/triton
  fs::path stubs_dir;     // Triton's C stubs, built by kbench: shared by every evaluation
  fs::path writable_dir;  // where Triton's cache entries may be written now: the file's own directory
  fs::path scratch_dir;   // ptxas's input and output
  std::string ptxas;      // Triton's own, as Triton named it at set-up
  nlohmann::json info;    // version, ptxas, arch
  // The support module as kbench set it up (a submission may rebind sys.modules): never released,
  // as Python may be gone when statics are destroyed.
  py::object* support = nullptr;
  int stub_builds = 0, assembles = 0;
  double stub_build_ms = 0, assemble_ms = 0;
};
State& state() {
  static State s;
  return s;
}

void require(bool condition, const std::string& what) {
  if (!condition) throw std::invalid_argument(python::kRefusedTag + what);
}

bool plain_name(const std::string& name) {
  static const std::regex pattern(R"([A-Za-z0-9_.+=-]+)");
  return std::regex_match(name, pattern) && name != "." && name != "..";
}

std::string c_compiler() {
  for (const char* cc : {"/usr/bin/gcc", "/usr/bin/cc", "/usr/bin/clang"})
    if (::access(cc, X_OK) == 0) return cc;
  throw std::runtime_error("no C compiler (gcc, cc or clang in /usr/bin) to build Triton's launcher");
}

ChildOptions child_options() {
  ChildOptions options;
  options.environment = python::environment_at_start();
  options.timeout_s = 300;
  options.own_process_group = true;
  return options;
}

// Triton's stub `name` from its C source: built once per source and flags into the stubs cache,
// linked so that dlsym("cuLaunchKernelEx") and cuModuleLoadData come to kbench's wrappers.
std::string build_module(const std::string& source, const std::string& name, const std::string& suffix,
                         const std::vector<std::string>& library_dirs, const std::vector<std::string>& include_dirs,
                         const std::vector<std::string>& libraries, const std::vector<std::string>& ccflags) {
  auto& s = state();
  require(!s.stubs_dir.empty(), "Triton's stubs are built only once kbench has set Triton up");
  require(plain_name(name) && plain_name(suffix), "a stub's name is a plain file name");
  require(ccflags.empty(), "kbench builds Triton's stubs with Triton's own flags only");
  std::vector<std::string> arguments = {name + ".c", "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o", name + suffix,
                                        "-Wl,--wrap=dlsym", "-Wl,--wrap=cuModuleLoadData"};
  for (const auto& library : libraries) {
    require(plain_name(library), "a stub's library is a plain name");
    arguments.push_back(library.find(".so") != std::string::npos ? "-l:" + library : "-l" + library);
  }
  for (const auto& dir : library_dirs) arguments.push_back("-L" + dir);
  for (const auto& dir : include_dirs) arguments.push_back("-I" + dir);
  const auto compiler = c_compiler();
  std::string material = source + '\n' + compiler;
  for (const auto& a : arguments) material += '\n' + a;
  const auto dir = s.stubs_dir / content_hash(material);
  const auto library = dir / (name + suffix);
  if (fs::exists(library)) return library.string();

  const log::PhaseTimer timer(s.stub_build_ms);
  const auto building = s.stubs_dir / ("building-" + dir.filename().string() + "-" + std::to_string(::getpid()));
  fs::remove_all(building);
  fs::create_directories(building);
  write_file_atomically(building / (name + ".c"), source);
  auto options = child_options();
  options.working_directory = building.string();
  const auto result = run_child(compiler, arguments, options);
  if (!result.exited_cleanly()) {
    fs::remove_all(building);
    throw std::runtime_error("building Triton's " + name + " failed:\n" + result.output);
  }
  std::error_code taken;
  fs::rename(building, dir, taken);  // another process may have built it first: then its copy stays
  if (taken) fs::remove_all(building);
  ++s.stub_builds;
  return library.string();
}

// ptxas on Triton's PTX, with the options Triton asked for (checked: flags and numbers only, never
// a path). Returns (true, cubin) or (false, ptxas's log).
py::tuple assemble(const std::string& ptx, const std::string& arch, const std::vector<std::string>& options) {
  auto& s = state();
  require(!s.ptxas.empty(), "ptxas runs only once kbench has set Triton up");
  static const std::regex arch_pattern(R"(sm_[0-9]+[a-z]?)");
  static const std::regex option_pattern(R"((-{1,2}[A-Za-z][A-Za-z0-9_-]*(=[A-Za-z0-9_.,+-]+)?)|[0-9]+)");
  require(std::regex_match(arch, arch_pattern), "ptxas's --gpu-name is an sm_XY name");
  for (const auto& option : options)
    require(std::regex_match(option, option_pattern) && option != "-o" && option.rfind("--output", 0) != 0 &&
                option.rfind("--input", 0) != 0,
            "ptxas option " + option + " is not one kbench passes");
  const log::PhaseTimer timer(s.assemble_ms);
  ++s.assembles;
  fs::create_directories(s.scratch_dir);
  const auto base = s.scratch_dir / ("kernel-" + std::to_string(s.assembles));
  const auto ptx_file = fs::path(base.string() + ".ptx"), cubin_file = fs::path(base.string() + ".cubin");
  write_file_atomically(ptx_file, ptx);
  auto arguments = options;
  arguments.insert(arguments.end(), {"--gpu-name=" + arch, ptx_file.string(), "-o", cubin_file.string()});
  const auto result = run_child(s.ptxas, arguments, child_options());
  std::string cubin = result.exited_cleanly() ? file_bytes(cubin_file) : "";
  fs::remove(ptx_file);
  fs::remove(cubin_file);
  std::error_code not_empty;
  fs::remove(s.scratch_dir, not_empty);
  if (!result.exited_cleanly() || cubin.empty()) return py::make_tuple(false, py::bytes("ptxas failed:\n" + result.output));
  return py::make_tuple(true, py::bytes(cubin));
}

// A Triton cache entry, written by kbench: only into a directory of the file's own cache.
std::string cache_put(const std::string& directory, const std::string& filename, const py::bytes& data) {
  const auto& s = state();
  const fs::path dir = fs::weakly_canonical(directory);
  require(!s.writable_dir.empty() && dir.parent_path() == fs::weakly_canonical(s.writable_dir) &&
              plain_name(dir.filename().string()) && plain_name(filename),
          "Triton's cache entries are written into the file's own cache directory only (" + directory + ")");
  fs::create_directories(dir);
  write_file_atomically(dir / filename, std::string(data));
  return (dir / filename).string();
}

fs::path libcuda_directory() {
  void* handle = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  link_map* map = nullptr;
  if (!handle || ::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map) return {};
  return fs::path(map->l_name).parent_path();
}

py::module_ support_module() {
  auto module = py::module_::import("types").attr("ModuleType")("kbench_triton_support");
  const auto builtins = py::module_::import("builtins");
  builtins.attr("exec")(builtins.attr("compile")(python::kTritonSupportSource, "<kbench: triton_support.py>", "exec"),
                        module.attr("__dict__"));
  py::module_::import("sys").attr("modules")["kbench_triton_support"] = module;
  return module;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

bool imports_triton(const std::string& source) {
  static const std::regex statement(R"((^|\n)[ \t]*(import[ \t]+([\w.]+[ \t]*,[ \t]*)*triton\b|from[ \t]+triton\b))");
  return std::regex_search(source, statement);
}

std::string start(const fs::path& cache_dir) {
  auto& s = state();
  if (s.started) return s.start_refusal;
  s.started = true;
  const log::PhaseTimer timer(s.start_ms);
  s.start_refusal = [&]() -> std::string {
    py::gil_scoped_acquire gil;
    try {
      s.support = new py::object(support_module());
    } catch (const py::error_already_set& e) {
      return "kbench's Triton support did not load: " + first_line(python::describe(e));
    }
    const auto libcuda = libcuda_directory();
    if (libcuda.empty()) return "the CUDA driver (libcuda.so.1) is not loaded: Triton kernels need a GPU";
    s.root = cache_dir / "triton";
    s.stubs_dir = s.root / "stubs";
    s.scratch_dir = s.root / "scratch" / std::to_string(::getpid());
    fs::create_directories(s.stubs_dir);
    try {
      s.support->attr("start")((s.root / "home").string(), (s.scratch_dir / "cache").string(), libcuda.string());
    } catch (const py::error_already_set& e) {
      if (e.matches(PyExc_ImportError)) return "Triton is not installed in kbench's Python (" + python::executable() + ")";
      return "Triton did not start: " + first_line(python::describe(e));
    } catch (const std::exception& e) {
      return std::string("Triton did not start: ") + e.what();
    }
    return "";
  }();
  return s.start_refusal;
}

namespace {

// Triton's first use of the GPU and kbench's kernel counted: once per process, ahead or in prepare().
std::string prepare_gpu(const fs::path& cache_dir, const std::function<int64_t()>& count_launches) {
  auto& s = state();
  if (s.gpu_started) return s.gpu_refusal;
  s.gpu_started = true;
  const log::PhaseTimer timer(s.gpu_setup_ms);
  s.gpu_refusal = [&]() -> std::string {
    if (const auto refusal = start(cache_dir); !refusal.empty()) return refusal;
    py::gil_scoped_acquire gil;
    const std::string check_source = s.support->attr("CHECK_KERNEL").cast<std::string>();
    const auto check_dir = s.root / "check" / content_hash(check_source);
    fs::create_directories(check_dir);
    if (!fs::exists(check_dir / "kbench_triton_check.py")) write_file_atomically(check_dir / "kbench_triton_check.py", check_source);
    try {
      s.info = nlohmann::json::parse(py::module_::import("json").attr("dumps")(s.support->attr("prepare")()).cast<std::string>());
      s.ptxas = s.info["ptxas"];
      fs::remove_all(s.scratch_dir);  // the process's own cache until now, unused: nothing was compiled yet
      s.writable_dir = check_dir;
      const auto launches_before = count_launches();
      const bool right = s.support->attr("run_check")(check_dir.string()).cast<bool>();
      const auto launched = count_launches() - launches_before;
      s.writable_dir.clear();  // until the file's own directory is known
      if (!right || launched != 1)
        return "kbench's own Triton kernel " + std::string(right ? "ran" : "gave a wrong answer") + " and kbench counted " +
               std::to_string(launched) + " launches of it, not 1: kbench cannot see this Triton's launches";
    } catch (const py::error_already_set& e) {
      return "Triton did not set up: " + first_line(python::describe(e));
    } catch (const std::exception& e) {
      return std::string("Triton did not set up: ") + e.what();
    }
    return "";
  }();
  return s.gpu_refusal;
}

}  // namespace

std::string prepare_gpu_ahead(const fs::path& cache_dir, const std::function<int64_t()>& count_launches) {
  state().gpu_setup_ahead = !state().gpu_started;
  return prepare_gpu(cache_dir, count_launches);
}

std::string prepare(const fs::path& file, const fs::path& cache_dir, const std::function<int64_t()>& count_launches) {
  auto& s = state();
  if (s.ready) return "";
  const log::PhaseTimer since_start;
  if (const auto refusal = start(cache_dir); !refusal.empty()) return refusal;
  const auto kernel_dir = s.root / "kernels" / content_hash(file_bytes(file));
  const auto use_kernel_dir = [&]() -> std::string {
    py::gil_scoped_acquire gil;
    try {
      fs::create_directories(kernel_dir);
      s.support->attr("use_kernel_dir")(kernel_dir.string());
    } catch (const py::error_already_set& e) {
      return "Triton did not set up: " + first_line(python::describe(e));
    } catch (const std::exception& e) {
      return std::string("Triton did not set up: ") + e.what();
    }
    return "";
  };
  // The file's own directory before the GPU's part where that runs now, as Triton's cache from its
  // first use on; after it where it ran ahead.
  const bool gpu_ran_ahead = s.gpu_started;
  if (!gpu_ran_ahead)
    if (const auto refusal = use_kernel_dir(); !refusal.empty()) return refusal;
  if (const auto refusal = prepare_gpu(cache_dir, count_launches); !refusal.empty()) return refusal;
  if (gpu_ran_ahead)
    if (const auto refusal = use_kernel_dir(); !refusal.empty()) return refusal;
  s.writable_dir = kernel_dir;
  s.info["start_ms"] = s.start_ms;
  s.info["setup_ms"] = since_start.elapsed_ms();  // the GPU's part included, unless it ran ahead
  s.info["gpu_setup_ms"] = s.gpu_setup_ms;
  s.info["gpu_setup_ahead"] = s.gpu_setup_ahead;
  s.ready = true;
  return "";
}

bool ready() { return state().ready; }

bool uses_triton(const py::handle& module) {
  const auto& s = state();
  return s.support && s.support->attr("uses_triton")(module).cast<bool>();
}

nlohmann::json report() {
  const auto& s = state();
  if (!s.ready) return nullptr;
  py::gil_scoped_acquire gil;
  auto j = s.info;
  const auto statistics = s.support->attr("statistics");
  j["compiles"] = statistics["compiles"].cast<int>();
  j["cache_hits"] = statistics["cache_hits"].cast<int>();
  j["lowering_ms"] = statistics["lowering_ms"].cast<double>();
  j["ptxas_ms"] = s.assemble_ms;
  j["ptxas_runs"] = s.assembles;
  j["stub_builds"] = s.stub_builds;
  j["stub_build_ms"] = s.stub_build_ms;
  return j;
}

}  // namespace kbench::compile::triton

PYBIND11_EMBEDDED_MODULE(kbench_triton, m) {
  m.def("build_module", &kbench::compile::triton::build_module);
  m.def("assemble", &kbench::compile::triton::assemble);
  m.def("cache_put", &kbench::compile::triton::cache_put);
}
