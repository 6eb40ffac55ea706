// KernelBench's ModelNew format on the CPU: recognising the files, the extension cache's keys, hits
// and misses, a C++-only extension built and called, and the verdicts decided before anything is
// built or runs on a GPU (tests/fixtures/modelnew/expected.json), and build-only batches that share one
// cache (README's two-stage run). A CUDA extension built without a GPU:
// extension_build_test.cpp; the fixtures' GPU verdicts: tests/sandbox/modelnew_gpu_test.cpp.
#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <thread>

#include "fixtures.h"
#include "compile/build_pass_forks.h"
#include "compile/child_process.h"
#include "compile/modelnew.h"
#include "compile/submission.h"
#include "compile/submission_threads.h"
#include "problems/catalog.h"
#include "sandbox/compile_ahead.h"

#include "catch.h"

using namespace kbench;

namespace {

std::filesystem::path fixture(const std::string& name) { return testing::test_dir() / "fixtures" / "modelnew" / name; }

compile::ModelNewOptions options_for(int level, int problem, const std::filesystem::path& cache_dir) {
  const auto catalog = problems::Catalog::load(problems::project_root());
  compile::ModelNewOptions o;
  o.problem_source = catalog.source_path(catalog.get(level, problem));
  o.cache_dir = cache_dir;
  compile::set_build_executable(testing::kbench_exe());  // this test binary has no `__build-extension`
  return o;
}

std::filesystem::path fresh_cache(const std::string& name) {
  return testing::scratch_dir("modelnew-" + name);
}

compile::ExtensionSpec relu_spec() {
  compile::ExtensionSpec s;
  s.name = "relu";
  s.cpp_sources = {"torch::Tensor relu_cuda(torch::Tensor x);"};
  s.cuda_sources = {"__global__ void k(float* y) { y[0] = 0; }"};
  s.functions = {"relu_cuda"};
  return s;
}

}  // namespace

TEST_CASE("ModelNew files are the .py submissions", "[modelnew]") {
  CHECK(compile::is_modelnew_file("runs/x/level_1_problem_19_sample_0_kernel.py"));
  CHECK_FALSE(compile::is_modelnew_file("level1/19_ReLU.cu"));
}

TEST_CASE("architectures are written as TORCH_CUDA_ARCH_LIST writes them", "[modelnew]") {
  CHECK(compile::torch_arch_list("sm_90a") == "9.0a");
  CHECK(compile::torch_arch_list("sm_80") == "8.0");
  CHECK(compile::torch_arch_list("sm_120") == "12.0");
  CHECK(compile::torch_arch_list("sm_100a") == "10.0a");
}

TEST_CASE("an extension's cache key follows its sources, flags, architecture and route, not its name", "[modelnew]") {
  constexpr auto fast = compile::BuildRoute::fast;
  const auto base = relu_spec();
  const auto key = compile::ExtensionCache::key(base, "sm_90a", fast);
  auto renamed = base;
  renamed.name = "another_name";
  CHECK(compile::ExtensionCache::key(renamed, "sm_90a", fast) == key);
  auto edited = base;
  edited.cuda_sources[0] += " ";
  CHECK(compile::ExtensionCache::key(edited, "sm_90a", fast) != key);
  auto flagged = base;
  flagged.extra_cuda_cflags = {"-O3"};
  CHECK(compile::ExtensionCache::key(flagged, "sm_90a", fast) != key);
  auto bare = base;
  bare.no_implicit_headers = true;
  CHECK(compile::ExtensionCache::key(bare, "sm_90a", fast) != key);
  auto cpu_only = base;
  cpu_only.with_cuda = false;
  CHECK(compile::ExtensionCache::key(cpu_only, "sm_90a", fast) != key);
  CHECK(compile::ExtensionCache::key(base, "sm_80", fast) != key);
  CHECK(compile::ExtensionCache::key(base, "sm_90a", compile::BuildRoute::pytorch) != key);
  CHECK(compile::ExtensionSpec::from_json(base.to_json()).to_json() == base.to_json());
}

TEST_CASE("link flags route every launch entry point and library compute function through kbench", "[modelnew]") {
  const auto flags = compile::extension_link_flags();
  REQUIRE(flags.size() == compile::wrapped_launch_functions().size() + compile::wrapped_library_functions().size());
  CHECK(std::find(flags.begin(), flags.end(), "-Wl,--wrap=__cudaLaunchKernel") != flags.end());
  CHECK(std::find(flags.begin(), flags.end(), "-Wl,--wrap=cuLaunchKernel") != flags.end());
  CHECK(std::find(flags.begin(), flags.end(), "-Wl,--wrap=cublasSgemm_v2") != flags.end());
}

TEST_CASE("a C++ extension is built once, found in the cache after, and its ModelNew runs", "[modelnew]") {
  const auto cache = fresh_cache("cache");
  const auto options = options_for(1, 19, cache);
  std::vector<compile::ExtensionBuild> builds;
  const auto host = compile::load_modelnew(fixture("cpu/relu_cpp.py"), options, builds);
  REQUIRE(builds.size() == 1);
  INFO(builds[0].log);
  CHECK(builds[0].ok);
  CHECK_FALSE(builds[0].from_cache);
  CHECK(builds[0].name == "relu_cpu");
  CHECK(host->keeps_state());
  CHECK(host->forward_schema().find("ModelNew.forward(self, x, mode=0)") == 0);

  const c10::Dict<std::string, at::Tensor> no_params;  // ModelNew holds its own
  const auto x = torch::tensor({-1.0f, 2.0f, -3.0f, 4.0f});
  const auto y = host->forward({x}, no_params).toTensor();
  CHECK(y.equal(torch::tensor({0.0f, 2.0f, 0.0f, 4.0f})));
  CHECK(x.equal(torch::tensor({-1.0f, 2.0f, -3.0f, 4.0f})));
  // forward's own ops are watched: the extension allocated, nothing computed in PyTorch yet.
  CHECK(host->torch_ops() == std::vector<std::string>{"aten::empty_like"});
  CHECK(host->computing_ops().empty());
  const auto pair = host->forward({x, c10::IValue(int64_t{1})}, no_params);
  REQUIRE(pair.isTuple());
  CHECK(pair.toTupleRef().elements()[1].toTensor().equal(-x));
  CHECK(host->computing_ops() == std::vector<std::string>{"aten::neg"});
  CHECK_THROWS_WITH(host->forward({x, c10::IValue(int64_t{2})}, no_params), contains_text("subclass of torch.Tensor"));

  // Loaded again: the build comes from the cache.
  std::vector<compile::ExtensionBuild> again;
  compile::load_modelnew(fixture("cpu/relu_cpp.py"), options, again);
  REQUIRE(again.size() == 1);
  CHECK(again[0].ok);
  CHECK(again[0].from_cache);
  CHECK(again[0].key == builds[0].key);
}

TEST_CASE("a native thread of a ModelNew's extension is watched, and may not outlive its call", "[modelnew]") {
  std::vector<compile::ExtensionBuild> builds;
  const auto host = compile::load_modelnew(fixture("cpu/native_threads_cpp.py"), options_for(1, 19, fresh_cache("threads")), builds);
  REQUIRE(builds.size() == 1);
  INFO(builds[0].log);
  REQUIRE(builds[0].ok);
  const c10::Dict<std::string, at::Tensor> no_params;
  const auto x = torch::tensor({-1.0f, 2.0f});
  // torch::relu ran on the extension's thread: forward's op all the same.
  CHECK(host->forward({x}, no_params).toTensor().equal(torch::tensor({0.0f, 2.0f})));
  CHECK(host->computing_ops() == std::vector<std::string>{"aten::relu"});
  CHECK(compile::submission_threads_running() == 0);
  // A thread still running when the call returns is refused.
  CHECK_THROWS_WITH(host->forward({x, c10::IValue(int64_t{1})}, no_params), contains_text("native thread outlives its call"));
  CHECK(compile::submission_threads_running() == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the thread left running ends
  CHECK(compile::submission_threads_running() == 0);
  // Threads that kbench's own code starts are not the submission's.
  std::thread own([] { std::this_thread::sleep_for(std::chrono::milliseconds(100)); });
  CHECK(compile::submission_threads_running() == 0);
  own.join();
}

TEST_CASE("a ModelNew sees the reference's imports and constants, as in KernelBench, never its Model", "[modelnew]") {
  std::vector<compile::ExtensionBuild> builds;
  const auto host = compile::load_modelnew(fixture("cpu/uses_reference_names.py"), options_for(3, 46, fresh_cache("names")), builds);
  const auto out = host->forward({torch::zeros({1})}, c10::Dict<std::string, at::Tensor>()).toTensor();
  CHECK(out[0].item<float>() == 0.0f);  // Model, get_inputs, get_init_inputs: none seen
  CHECK(out[1].item<float>() == Approx(1 / std::sqrt(512.0)));  // math.sqrt of the reference's feature_size
}

TEST_CASE("kbench's Python keeps torch's bytecode in kbench's cache, and never a submission's", "[modelnew]") {
  const auto split = compile::start_python(false);
  for (const auto* part : {"interpreter", "torch", "support", "cuda"}) CHECK(split.contains(part));
  std::vector<compile::ExtensionBuild> builds;
  compile::load_modelnew(fixture("cpu/relu_cpp.py"), options_for(1, 19, fresh_cache("bytecode")), builds);
  const auto bytecode = problems::cache_dir() / "python-bytecode";
  int torch_modules = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(bytecode)) {
    const auto path = entry.path().string();
    INFO(path);
    if (path.find("/torch/") != std::string::npos && entry.path().extension() == ".pyc") ++torch_modules;
    CHECK(path.find("relu_cpp") == std::string::npos);  // the submission
    CHECK(path.find("19_ReLU") == std::string::npos);   // the problem's file
  }
  CHECK(torch_modules > 100);
}

TEST_CASE("a build that fails is a build error with the compiler's log, and is cached too", "[modelnew]") {
  const auto cache = fresh_cache("failed");
  const auto options = options_for(1, 19, cache);
  for (const bool cached : {false, true}) {
    std::vector<compile::ExtensionBuild> builds;
    try {
      compile::load_modelnew(fixture("cpu/missing_function_cpp.py"), options, builds);
      FAIL("loaded");
    } catch (const compile::ModelNewError& e) {
      INFO(e.what() << "\n" << e.details);
      CHECK(e.kind == compile::ModelNewError::Kind::build);
      CHECK(std::string(e.what()).find("extension 'relu_cpu_missing' did not build") == 0);
      CHECK(e.details.find("relu_cpu") != std::string::npos);
    }
    REQUIRE(builds.size() == 1);
    CHECK_FALSE(builds[0].ok);
    CHECK(builds[0].from_cache == cached);
  }
}

TEST_CASE("what a ModelNew may not do, and what kbench does not run, is decided before any build",
          "[modelnew]") {
  const auto table = testing::read_json_file(fixture("expected.json"));
  int checked = 0;
  for (const auto& entry : table["submissions"]) {
    if (!entry.value("before_build", false)) continue;
    const std::string file = entry["file"];
    std::vector<compile::ExtensionBuild> builds;
    const auto options = options_for(entry["level"], entry["problem"], fresh_cache("hostile"));
    std::string verdict = "loaded", message;
    try {
      compile::load_modelnew(fixture(file), options, builds);
    } catch (const compile::ModelNewError& e) {
      using Kind = compile::ModelNewError::Kind;
      verdict = e.kind == Kind::python ? "host_error" : e.kind == Kind::build ? "compile_error" : "unsupported_backend";
      message = e.what();
    }
    INFO(file << ": " << message);
    CHECK(verdict == entry["verdict"].get<std::string>());
    CHECK(message.find(entry.value("message", "")) != std::string::npos);
    CHECK(builds.empty());
    ++checked;
  }
  CHECK(checked >= 8);
  CHECK_FALSE(std::filesystem::exists("/tmp/kbench-modelnew-was-here"));
}

TEST_CASE("a Triton file is named as such, and refused with the reason where no GPU runs it", "[modelnew][triton]") {
  // CPU only: what a Triton file gets before Triton could run. Its verdicts on a GPU are
  // tests/sandbox/modelnew_gpu_test.cpp's.
  const auto dir = testing::test_dir() / "fixtures" / "triton";
  const auto table = testing::read_json_file(dir / "expected.json");
  int refused = 0;
  for (const auto& entry : table["submissions"]) {
    const auto file = dir / entry["file"].get<std::string>();
    INFO(file);
    CHECK(compile::imported_backend(compile::file_bytes(file)) == "triton");
    std::vector<compile::ExtensionBuild> builds;
    try {
      compile::load_modelnew(file, options_for(entry["level"], entry["problem"], fresh_cache("triton")), builds);
    } catch (const compile::ModelNewError& e) {
      INFO(e.what());
      CHECK(e.kind == compile::ModelNewError::Kind::unsupported);
      CHECK(std::string(e.what()).find("imports triton, which kbench cannot run here: Triton kernels need a GPU") !=
            std::string::npos);
      ++refused;
    }
  }
  CHECK(refused == static_cast<int>(table["submissions"].size()));
  CHECK(compile::imported_backend(compile::file_bytes(fixture("l1_19_relu.py"))) == "cuda");
  for (const auto& [source, backend] : std::vector<std::pair<std::string, std::string>>{
           {"import torch, triton\n", "triton"}, {"from triton import jit\n", "triton"},
           {"def f():\n    import triton.language as tl\n", "triton"}, {"import tritonclient\n", "cuda"},
           {"# import triton\nx = 'import triton'\n", "cuda"}}) {
    INFO(source);
    CHECK(compile::imported_backend(source) == backend);
  }
}

TEST_CASE("a ModelNew file whose extensions are all in the cache, or that has none, starts no build pass", "[modelnew]") {
  // The build pass (batch's, serve's) remembers which extensions a file asked for. Its second
  // submission names an executable that does not exist: only a pass that starts no process can
  // report the builds; once an extension is gone from the cache, the pass must run, and fails here.
  const auto cache = fresh_cache("prebuild-memo");
  const testing::ScopedEnv kbench_cache("KBENCH_CACHE", cache.string());
  const auto catalog = problems::Catalog::load(problems::project_root());
  sandbox::PrepareOptions prepare;
  prepare.problem_source = catalog.source_path(catalog.get(1, 19));
  prepare.worker_exe = testing::kbench_exe();
  auto submit = [&](const sandbox::PrepareOptions& p) {
    sandbox::CompileAhead ahead(1);
    return ahead.submit(fixture("cpu/relu_cpp.py"), p).get();
  };
  const auto first = submit(prepare);
  INFO(first.dump());
  REQUIRE(first.is_array());
  REQUIRE(first.size() == 1);
  CHECK(first[0]["ok"] == true);

  auto no_process = prepare;
  no_process.worker_exe = (cache / "no-such-kbench").string();
  const auto again = submit(no_process);
  INFO(again.dump());
  REQUIRE(again.is_array());
  REQUIRE(again.size() == 1);
  CHECK(again[0]["from_cache"] == true);
  CHECK(again[0]["key"] == first[0]["key"]);
  CHECK(again[0]["name"] == "relu_cpu");

  // A file that never names load_inline (a Triton one) starts no build pass at all.
  {
    sandbox::CompileAhead ahead(1);
    const auto triton = ahead.submit(testing::test_dir() / "fixtures" / "triton" / "l1_19_relu.py", no_process).get();
    INFO(triton.dump());
    CHECK(triton == nlohmann::json::array());
  }

  testing::remove_tree(cache / "extensions" / first[0]["key"].get<std::string>());
  const auto gone = submit(no_process);
  INFO(gone.dump());
  CHECK_FALSE(gone.is_array());  // the pass had to start a process, and could not
}

TEST_CASE("a build pass forks its builds from a copy made before the file ran, failed ones with their log",
          "[modelnew]") {
  // The build pass (`kbench __prebuild-modelnew`) imports torch once: its builds are forks of a copy
  // of it (compile/build_forks.h), where an evaluation's own builds start fresh processes. A library
  // that does not load (a function declared, never defined) fails in the fork, with the loader's words.
  const auto cache = fresh_cache("forked-builds");
  const auto dir = cache / "submissions";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(fixture("cpu/relu_cpp.py"), dir / "level_1_problem_19_sample_0_kernel.py");
  std::filesystem::copy_file(fixture("cpu/missing_function_cpp.py"), dir / "level_1_problem_19_sample_1_kernel.py");
  const testing::ScopedEnv kbench_cache("KBENCH_CACHE", (cache / "kbench").string());
  const auto summary =
      nlohmann::json::parse(testing::run_kbench("--json batch '" + dir.string() + "' --build-only --compile-threads 2"));
  INFO(summary.dump(1));
  REQUIRE(summary["builds"].size() == 2);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& file : summary["builds"]) {
    REQUIRE(file["extensions"].is_array());
    REQUIRE(file["extensions"].size() == 1);
    by_name[file["extensions"][0]["name"]] = file["extensions"][0];
  }
  const auto& built = by_name.at("relu_cpu");
  CHECK(built["ok"] == true);
  CHECK(built["process"] == "fork");
  const auto& failed = by_name.at("relu_cpu_missing");
  CHECK(failed["ok"] == false);
  CHECK(failed["process"] == "fork");
  CHECK(failed["log"].get<std::string>().find("relu_cpu") != std::string::npos);

  // The evaluation builds in a process of its own when the cache lacks the extension.
  testing::remove_tree(cache / "kbench" / "extensions");
  const auto record = nlohmann::json::parse(testing::run_kbench(
      "--json eval '" + (dir / "level_1_problem_19_sample_0_kernel.py").string() + "' --level 1 --problem 19 --compile-only"));
  INFO(record.dump());
  REQUIRE(record["compile"]["extensions"].size() == 1);
  CHECK(record["compile"]["extensions"][0]["ok"] == true);
  CHECK(record["compile"]["extensions"][0]["process"].get<std::string>().rfind("fresh: ", 0) == 0);
}

TEST_CASE("build-only batches that share a cache build each extension once, and evaluation finds them built",
          "[modelnew]") {
  // README's two-stage run: build-only batches (the CPU nodes' Slurm array) fill one KBENCH_CACHE at
  // the same time, then the evaluation (the GPU job) finds every extension there. Two files that ask
  // for the same extension, and two batches over them at once: four build passes want it.
  const auto cache = fresh_cache("shared-cache");
  const auto dir = cache / "submissions";
  std::filesystem::create_directories(dir);
  std::ifstream in(fixture("cpu/relu_cpp.py"));
  const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (int sample = 0; sample < 2; ++sample)  // distinct files (batch evaluates identical ones once)
    std::ofstream(dir / ("level_1_problem_19_sample_" + std::to_string(sample) + "_kernel.py"))
        << "# sample " << sample << "\n" << source;
  const testing::ScopedEnv kbench_cache("KBENCH_CACHE", (cache / "kbench").string());
  const auto build_only = "--json batch '" + dir.string() + "' --build-only --compile-threads 2";
  auto first = std::async(std::launch::async, [&] { return testing::run_kbench(build_only); });
  auto second = std::async(std::launch::async, [&] { return testing::run_kbench(build_only); });
  int built = 0, found = 0;
  for (const auto& out : {first.get(), second.get()}) {
    INFO(out);
    const auto summary = nlohmann::json::parse(out);
    REQUIRE(summary["builds"].size() == 2);
    for (const auto& file : summary["builds"]) {
      REQUIRE(file["extensions"].is_array());
      for (const auto& e : file["extensions"]) {
        CHECK(e["ok"] == true);
        (e["from_cache"] == true ? found : built) += 1;
        if (e["from_cache"] == false) CHECK(e["process"] == "fork");
      }
    }
  }
  CHECK(built == 1);
  CHECK(found == 3);
  for (const auto& entry : std::filesystem::directory_iterator(cache / "kbench" / "extensions"))
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);  // nothing half-made

  // The evaluation's worker imports the file and finds its extension built.
  const auto record = nlohmann::json::parse(testing::run_kbench(
      "--json eval '" + (dir / "level_1_problem_19_sample_0_kernel.py").string() + "' --level 1 --problem 19 --compile-only"));
  INFO(record.dump());
  REQUIRE(record["compile"]["extensions"].size() == 1);
  CHECK(record["compile"]["extensions"][0]["from_cache"] == true);
  CHECK(record["verdict"] == "not_checked");
}

TEST_CASE("build passes fork from one server, each with its own environment and output, and die at their time",
          "[modelnew]") {
  // The server (compile/build_pass_forks.h) started Python once; each pass is a fork of it that runs
  // `kbench __prebuild-modelnew`'s work on its file with the environment it was given, not the server's.
  const auto cache = fresh_cache("build-pass-server");
  const auto dir = cache / "files";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "marks.py") << "import os\nprint('mark', os.environ.get('KBENCH_PASS_MARK'), flush=True)\n";
  std::ofstream(dir / "sleeps.py") << "import time\ntime.sleep(120)\n";
  const auto catalog = problems::Catalog::load(problems::project_root());
  const auto problem = catalog.source_path(catalog.get(1, 19)).string();
  auto environment = compile::current_environment();
  environment.push_back("KBENCH_CACHE=" + (cache / "kbench").string());
  compile::BuildPassForks forks(testing::kbench_exe(), environment);
  const auto pass = [&](const std::string& file, const std::string& mark, double timeout_s) {
    auto env = environment;
    env.push_back("KBENCH_PASS_MARK=" + mark);
    const auto report = (dir / (file + "." + mark + ".json")).string();
    return std::make_pair(forks.run({"__prebuild-modelnew", (dir / file).string(), problem, "sm_80", report}, env, timeout_s),
                          report);
  };

  auto first = std::async(std::launch::async, [&] { return pass("marks.py", "one", 120); });
  auto second = std::async(std::launch::async, [&] { return pass("marks.py", "two", 120); });
  for (auto* run : {&first, &second}) {
    const auto [result, report] = run->get();
    REQUIRE(result.has_value());
    INFO(result->output);
    CHECK(result->exited_cleanly());
    const std::string mark = run == &first ? "one" : "two";
    CHECK(result->output.find("mark " + mark) != std::string::npos);
    std::ifstream written(report);
    CHECK(nlohmann::json::parse(written, nullptr, false).is_array());  // no extension asked for
  }

  const auto t0 = std::chrono::steady_clock::now();
  const auto [slow, ignored] = pass("sleeps.py", "three", 3);
  REQUIRE(slow.has_value());
  CHECK(slow->timed_out);
  CHECK_FALSE(slow->exited_cleanly());
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));  // killed, not slept out

  // No server (an executable that does not exist): no pass starts, and the caller starts its own.
  compile::BuildPassForks none((cache / "no-such-kbench").string(), environment);
  CHECK_FALSE(none.run({"__prebuild-modelnew", (dir / "marks.py").string(), problem, "sm_80", (dir / "x.json").string()},
                       environment, 30)
                  .has_value());
}
