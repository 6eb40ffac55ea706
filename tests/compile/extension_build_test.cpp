// The two routes of a ModelNew extension build (compile/extension_build.h) on the CPU: kbench's fast
// route compiles what PyTorch's own build compiles, to the same bytes; against the narrowest headers that compile,
// to the same device code, and against PyTorch's own where a file needs more; a CUDA extension builds
// and loads without a GPU on the documented CPU setup (Debian's PyTorch 1.13, CUDA 13), where
// PyTorch's own build cannot (its plan is adapted, and the record says how); processes that share a
// cache build an extension once; failures and the fallback.
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <future>
#include <iterator>
#include <regex>

#include "fixtures.h"
#include "compile/extension_build.h"
#include "compile/file_lock.h"

#include "catch.h"

using namespace kbench;

namespace {

compile::ExtensionCache fresh_cache(const std::string& name) {
  const auto dir = testing::scratch_dir("extension-build-" + name);
  compile::set_build_executable(testing::kbench_exe());  // this test binary has no `__build-extension`
  return compile::ExtensionCache(dir / "extensions");
}

std::string bytes_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A library's device code: its .nv_fatbin section (the cubins nvcc embedded), as objcopy copies it,
// with the hash nvcc names the translation unit's internal symbols after (`_INTERNAL_<8 hex>_...`,
// `_GLOBAL__N__<8 hex>_...`) masked: it follows the unit's text, headers included.
std::string device_code(const std::filesystem::path& library) {
  const auto out = testing::scratch_dir("fatbin") / library.stem().string();
  const auto command = "objcopy -O binary --only-section=.nv_fatbin '" + library.string() + "' '" + out.string() + "'";
  if (std::system(command.c_str()) != 0) return "";
  auto bytes = bytes_of(out);
  std::filesystem::remove(out);
  std::smatch unit;
  if (std::regex_search(bytes, unit, std::regex("_INTERNAL_([0-9a-f]{8})_"))) {
    const auto hash = unit[1].str();
    for (auto at = bytes.find(hash); at != std::string::npos; at = bytes.find(hash, at)) bytes.replace(at, hash.size(), "########");
  }
  return bytes;
}

// A C++-only extension binding one function, `name`, defined in `source`.
compile::ExtensionSpec cpp_spec(const std::string& name, const std::string& source) {
  compile::ExtensionSpec spec;
  spec.name = name;
  spec.cpp_sources = {source};
  spec.functions = {name};
  return spec;
}

// The symbols a built library defines, looked up as the loader would (calling them may need a GPU).
bool defines(const std::filesystem::path& library, const std::vector<std::string>& symbols) {
  void* handle = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  INFO((handle ? "" : ::dlerror()));
  if (!handle) return false;
  bool all = true;
  for (const auto& symbol : symbols) all = all && ::dlsym(handle, symbol.c_str());
  ::dlclose(handle);
  return all;
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& line : lines)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("$KBENCH_EXTENSION_BUILD picks the route, $KBENCH_EXTENSION_HEADERS the headers; a mistyped one is an error",
          "[modelnew]") {
  ::unsetenv("KBENCH_EXTENSION_BUILD");
  ::unsetenv("KBENCH_EXTENSION_HEADERS");
  CHECK(compile::requested_build_route() == compile::BuildRoute::fast);
  CHECK(compile::light_headers_requested());
  ::setenv("KBENCH_EXTENSION_BUILD", "pytorch", 1);
  ::setenv("KBENCH_EXTENSION_HEADERS", "full", 1);
  CHECK(compile::requested_build_route() == compile::BuildRoute::pytorch);
  CHECK_FALSE(compile::light_headers_requested());
  ::setenv("KBENCH_EXTENSION_BUILD", "torch", 1);
  ::setenv("KBENCH_EXTENSION_HEADERS", "lighter", 1);
  CHECK_THROWS_WITH(compile::requested_build_route(), contains_text("it must be fast or pytorch"));
  CHECK_THROWS_WITH(compile::light_headers_requested(), contains_text("it must be light or full"));
  ::unsetenv("KBENCH_EXTENSION_BUILD");
  ::unsetenv("KBENCH_EXTENSION_HEADERS");
}

TEST_CASE("kbench's fast route compiles and links what PyTorch's own build does, to the same bytes", "[modelnew]") {
  compile::ExtensionSpec spec;
  spec.name = "negate";
  // Included again, as cpp_sources often do: g++ finds the precompiled header's directory first.
  spec.cpp_sources = {"#include <torch/extension.h>\ntorch::Tensor negate(torch::Tensor x) { return -x; }"};
  spec.functions = {"negate"};
  const auto cache = fresh_cache("routes");
  // PyTorch's own torch/extension.h, as PyTorch's build reads it (the lighter one: the test below).
  ::setenv("KBENCH_EXTENSION_HEADERS", "full", 1);
  const auto fast = compile::build_extension(spec, "sm_90a", cache, compile::BuildRoute::fast);
  ::unsetenv("KBENCH_EXTENSION_HEADERS");
  INFO(fast.log);
  REQUIRE(fast.ok);
  CHECK(fast.route == "fast");
  CHECK(fast.headers == "full: asked for (KBENCH_EXTENSION_HEADERS=full)");
  CHECK(fast.why.empty());
  CHECK(fast.adaptations.empty());  // a C++ extension: PyTorch's plan as it is
  CHECK((fast.pch == "built" || fast.pch == "used"));
  for (const auto* step : {"plan", "main.o", "link"}) CHECK(fast.steps.contains(step));
  CHECK(fast.cpu_seconds > 0);

  const auto pytorch = compile::build_extension(spec, "sm_90a", cache, compile::BuildRoute::pytorch);
  INFO(pytorch.log);
  REQUIRE(pytorch.ok);
  CHECK(pytorch.route == "pytorch");
  CHECK(pytorch.why.find("KBENCH_EXTENSION_BUILD=pytorch") != std::string::npos);
  CHECK(pytorch.key != fast.key);
  CHECK(pytorch.module == fast.module);  // one name for both: the same sources
  // The binding file compiled with the precompiled torch/extension.h, and the library: byte for
  // byte what ninja made from PyTorch's build file.
  const auto object = bytes_of(fast.library.parent_path() / "main.o");
  CHECK(!object.empty());
  CHECK(object == bytes_of(pytorch.library.parent_path() / "main.o"));
  CHECK(bytes_of(fast.library) == bytes_of(pytorch.library));
}

TEST_CASE("a CUDA extension builds and loads without a GPU, on the CPU setup too", "[modelnew]") {
  compile::ExtensionSpec spec;  // L1#19's ReLU as tests/fixtures/modelnew/l1_19_relu.py writes it
  spec.name = "relu";
  spec.cpp_sources = {"torch::Tensor relu_cuda(torch::Tensor x);"};
  spec.cuda_sources = {R"(#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        y[i] = fmaxf(x[i], 0.0f);
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    relu_kernel<<<(int)std::min<int64_t>((n + 255) / 256, 132 * 32), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
})"};
  spec.functions = {"relu_cuda"};
  const auto built = compile::build_extension(spec, "sm_90a", fresh_cache("cuda"), compile::BuildRoute::fast);
  INFO(built.log);
  // ok: built, and imported in the build process as PyTorch's load_inline imports what it built.
  REQUIRE(built.ok);
  CHECK(built.route == "fast");
  for (const auto* step : {"main.o", "cuda.cuda.o", "link"}) CHECK(built.steps.contains(step));
  if (std::string(KBENCH_TORCH_VERSION).rfind("1.", 0) == 0) {  // Debian's PyTorch 1.13: what kbench changed
    INFO(nlohmann::json(built.adaptations).dump(1));
    CHECK(mentions(built.adaptations, "-gencode=arch=compute_90a,code=sm_90a"));
    CHECK(mentions(built.adaptations, "kbench passes -std=c++17"));
    CHECK(mentions(built.adaptations, "kbench links without -ltorch_cuda"));
  }
  CHECK(built.headers == "narrow");
  CHECK((built.pch == "built" || built.pch == "used"));  // the narrow binding header's
  // Against PyTorch's own torch/extension.h: the same device code (the kernels' cubins, byte for byte).
  ::setenv("KBENCH_EXTENSION_HEADERS", "full", 1);
  const auto full = compile::build_extension(spec, "sm_90a", fresh_cache("cuda-full"), compile::BuildRoute::fast);
  ::unsetenv("KBENCH_EXTENSION_HEADERS");
  INFO(full.log);
  REQUIRE(full.ok);
  CHECK(full.key != built.key);
  const auto light_cubins = device_code(built.library), full_cubins = device_code(full.library);
  CHECK(light_cubins.find("_Z11relu_kernelPKfPfl") != std::string::npos);
  CHECK(light_cubins == full_cubins);
  // Its functions are there: the module's entry point and the C++ function it binds (calling them
  // needs a GPU).
  CHECK(defines(built.library, {"PyInit_" + built.module, "_Z9relu_cudaN2at6TensorE"}));
}

TEST_CASE("a C++ error is a failed build with the compiler's message", "[modelnew]") {
  const auto spec = cpp_spec("broken", "torch::Tensor broken(torch::Tensor x) { return x.no_such_method(); }");
  const auto built = compile::build_extension(spec, "sm_90a", fresh_cache("broken"), compile::BuildRoute::fast);
  CHECK_FALSE(built.ok);
  CHECK(built.route == "fast");
  INFO(built.log);
  CHECK(built.log.rfind("FAILED: main.o\n", 0) == 0);
  CHECK(built.log.find("has no member named") != std::string::npos);  // g++'s own words
}

TEST_CASE("a build the fast route cannot take is PyTorch's, and the record says why", "[modelnew]") {
  // An architecture neither PyTorch nor kbench can name: PyTorch's load_inline raises before writing
  // its build file, so PyTorch's own build runs (in a fresh process), and fails with its message.
  compile::ExtensionSpec spec;
  spec.name = "unbuildable";
  spec.cpp_sources = {"void nothing();"};
  spec.cuda_sources = {"void nothing() {}"};
  const auto built = compile::build_extension(spec, "no_such_arch", fresh_cache("fallback"), compile::BuildRoute::fast);
  CHECK_FALSE(built.ok);
  CHECK(built.route == "pytorch");
  CHECK(built.why.find("torch's load_inline failed before its build (ValueError: Unknown CUDA arch (no_such_arch)") == 0);
  CHECK(built.log.find("Unknown CUDA arch (no_such_arch)") != std::string::npos);
  CHECK(built.cpu_seconds > 0);  // both build processes
}

TEST_CASE("a file compiles against the narrowest headers it can: narrow, lighter, PyTorch's own", "[modelnew]") {
  const auto cache = fresh_cache("headers");
  // Builds one C++ function into this test's cache; it must build.
  const auto build = [&](const std::string& name, const std::string& source) {
    auto built = compile::build_extension(cpp_spec(name, source), "sm_90a", cache, compile::BuildRoute::fast);
    INFO(built.log << "\nheaders: " << built.headers);
    REQUIRE(built.ok);
    return built;
  };
  const auto built = build(
      "negate", "torch::Tensor negate(torch::Tensor x) { TORCH_CHECK(x.dim() > 0); return (-x * 2).to(torch::kFloat32); }");
  CHECK(built.headers == "narrow");
  // The precompiled headers are $KBENCH_CACHE's, which an earlier test may have filled: the narrow
  // one was made here, or found.
  CHECK((built.pch == "built") == built.steps.contains("pch (narrow headers)"));
  CHECK((built.pch == "built" || built.pch == "used"));
  CHECK_FALSE(built.steps.contains("pch"));
  CHECK_FALSE(built.steps.contains("main.o (narrow headers, failed)"));
  CHECK(built.to_json()["headers"] == "narrow");

  // torch::Dtype is torch/types.h's own name: the narrowest headers fail, the lighter ones build it.
  const auto lighter = build("as_float", "torch::Tensor as_float(torch::Tensor x) { torch::Dtype f = torch::kFloat32; return x.to(f); }");
  INFO(lighter.headers);
  CHECK(lighter.headers.rfind("light: the narrowest headers failed: ", 0) == 0);
  CHECK(lighter.headers.find("Dtype") != std::string::npos);  // the compiler's own line
  CHECK(lighter.steps.contains("main.o (narrow headers, failed)"));
  CHECK_FALSE(lighter.steps.contains("main.o (light headers, failed)"));

  // torch::tensor is torch's own too: ATen's would compile, making doubles of a list of doubles, and
  // must not be found through torch:: even where the source brings it.
  const auto own_tensor = build(
      "constant", "#include <ATen/ATen.h>\ntorch::Tensor constant(torch::Tensor x) { return x + torch::tensor({1.0, 2.0}); }");
  INFO("torch::tensor: " << own_tensor.headers);
  CHECK(own_tensor.headers.rfind("light: the narrowest headers failed: ", 0) == 0);

  // torch::nn is in neither: the compiler's errors, then PyTorch's own header.
  const auto fell_back = build("gelu", "torch::Tensor gelu(torch::Tensor x) { return torch::nn::functional::gelu(x); }");
  INFO(fell_back.headers);
  CHECK(fell_back.headers.rfind("full: the lighter headers failed: ", 0) == 0);
  CHECK(fell_back.headers.find("error:") != std::string::npos);
  CHECK(fell_back.steps.contains("main.o (narrow headers, failed)"));
  CHECK(fell_back.steps.contains("main.o (light headers, failed)"));
  CHECK(fell_back.steps.contains("main.o"));
  CHECK(defines(fell_back.library, {"PyInit_" + fell_back.module}));
}

TEST_CASE("processes that share a cache build an extension once, and the others wait for it", "[modelnew]") {
  // Two builds of one extension at once (two threads here: flock's locks are per open file, so they
  // exclude each other as two processes, or two machines on a network file system, do).
  const auto spec = cpp_spec("twice", "torch::Tensor twice(torch::Tensor x) { return x * 2; }");
  const auto cache = fresh_cache("shared");
  auto build = [&] { return compile::build_extension(spec, "sm_90a", cache, compile::BuildRoute::fast); };
  auto first = std::async(std::launch::async, build), second = std::async(std::launch::async, build);
  const compile::ExtensionBuild builds[] = {first.get(), second.get()};
  for (const auto& b : builds) {
    INFO(b.log);
    REQUIRE(b.ok);
    CHECK(b.key == builds[0].key);
  }
  CHECK(builds[0].from_cache != builds[1].from_cache);  // one built it, the other found it
  const auto& waited = builds[0].from_cache ? builds[0] : builds[1];
  CHECK(waited.waited_seconds > 1);  // a build takes seconds: it waited for it
  CHECK(waited.to_json()["waited_seconds"] == waited.waited_seconds);
  // Nothing half-made left beside the entry.
  for (const auto& entry : std::filesystem::directory_iterator(cache.dir()))
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("a lock taken without waiting is none while another holds it, and taken once it is free", "[compile]") {
  // What a build waiting for another's precompiled header polls (flock's locks are per open file, so
  // two holds in one process exclude each other as two processes do).
  const auto path = testing::scratch_dir("file-lock") / "header.lock";
  {
    const compile::FileLock maker(path);
    CHECK(compile::FileLock::try_exclusive(path) == nullptr);
  }
  {
    const auto reader = compile::FileLock::try_shared(path);
    REQUIRE(reader != nullptr);
    CHECK(compile::FileLock::try_exclusive(path) == nullptr);
  }
  auto held = compile::FileLock::try_exclusive(path);
  REQUIRE(held != nullptr);
  CHECK(compile::FileLock::try_shared(path) == nullptr);
  held.reset();
  CHECK(compile::FileLock::try_exclusive(path) != nullptr);
}

TEST_CASE("a CUDA build waits beside nvcc for the precompiled header another build is making", "[modelnew]") {
  // Two different CUDA extensions with the same flags, built at once into one cache: one makes the
  // narrow binding header, and the other, whose nvcc runs meanwhile, waits for it instead of
  // compiling its binding file against the whole header text.
  auto relu_like = [](const std::string& name, const std::string& body) {
    compile::ExtensionSpec spec;
    spec.name = name;
    spec.cpp_sources = {"torch::Tensor " + name + "(torch::Tensor x);"};
    spec.cuda_sources = {"#include <torch/extension.h>\n__global__ void k(const float* x, float* y, int64_t n) {\n"
                         "  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; if (i < n) y[i] = " + body + ";\n}\n"
                         "torch::Tensor " + name + "(torch::Tensor x) {\n  auto y = torch::empty_like(x);\n"
                         "  k<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());\n"
                         "  return y;\n}\n"};
    spec.functions = {name};
    return spec;
  };
  const auto cache = fresh_cache("pch-wait");
  // The headers live in $KBENCH_CACHE, beside the extensions of every test: a fresh one, so that
  // neither build finds the header made.
  const testing::ScopedEnv own_cache("KBENCH_CACHE", std::optional<std::string>((cache.dir().parent_path() / "cache").string()));
  const auto specs = {relu_like("relu_one", "fmaxf(x[i], 0.0f)"), relu_like("relu_two", "fmaxf(x[i], 1.0f)")};
  std::vector<std::future<compile::ExtensionBuild>> running;
  for (const auto& spec : specs)
    running.push_back(std::async(std::launch::async, [&, spec] {
      return compile::build_extension(spec, "sm_90a", cache, compile::BuildRoute::fast);
    }));
  std::vector<compile::ExtensionBuild> builds;
  for (auto& build : running) builds.push_back(build.get());
  int made = 0, waited = 0;
  for (const auto& b : builds) {
    INFO(b.log << "\n" << b.steps.dump(1));
    REQUIRE(b.ok);
    CHECK(b.headers == "narrow");
    CAPTURE(b.pch);
    made += b.pch == "built";
    if (b.pch == "used" && b.steps.contains("waited for another build's pch (narrow headers)")) {
      ++waited;
      CHECK(b.steps["waited for another build's pch (narrow headers)"]["wall_s"].get<double>() > 0.1);
    }
  }
  CHECK(made == 1);    // one header, made once
  CHECK(waited == 1);  // the other build used it, after waiting for it
}
