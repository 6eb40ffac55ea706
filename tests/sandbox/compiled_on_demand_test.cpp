// The compiled baseline made on demand (sandbox/compiled_on_demand.h), on the CPU: where its figures
// are kept, what it returns from a record without running anything, and what it says where
// scripts/tools/compile_baselines.py can make no figure. With them, the locks it relies on: the GPU
// lock files' names (sandbox/gpu_lock.h), compile::FileLock and report::record_baseline's.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <optional>
#include <thread>

#include "fixtures.h"
#include "compile/file_lock.h"
#include "compile/python_runtime.h"
#include "problems/catalog.h"
#include "report/baselines.h"
#include "sandbox/compiled_on_demand.h"
#include "sandbox/gpu_lock.h"

#include "catch.h"

using namespace kbench;
using Clock = std::chrono::steady_clock;

namespace {

// An empty directory of this test's own, removed again at the end of the scope.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("kbench-compiled-on-demand-" + name + "-" + std::to_string(::getpid()))) {
    testing::remove_tree(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { testing::remove_tree(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

const problems::Catalog& catalog() {
  static const auto c = problems::Catalog::load(problems::project_root());
  return c;
}

void write_record(const std::filesystem::path& file, const nlohmann::json& doc) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file) << doc.dump(2) << "\n";
}

const std::string kInductorPath =
    "torch.compile (inductor, default mode), in process; timed from Python with kbench's protocol";

// Empty where compile_baselines.py, run by the Python kbench uses, can be relied on to record
// nothing: that Python imports torch and its torch sees no CUDA device. Else why not.
std::string why_no_figureless_script() {
  const auto python = compile::python::executable();
  if (std::system((python + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0) return python + " cannot import torch";
  if (std::system((python + " -c 'import sys, torch; sys.exit(1 if torch.cuda.is_available() else 0)' >/dev/null 2>&1")
                      .c_str()) != 0)
    return "the torch of " + python + " has CUDA: the script would compile and time for real";
  return "";
}

// The last line compile_baselines.py prints, run by hand for level 1's problem 20 with `record`.
std::string script_last_line(const std::filesystem::path& record) {
  const auto script = catalog().root() / "scripts" / "tools" / "compile_baselines.py";
  const auto command = "cd '" + catalog().root().string() + "' && '" + compile::python::executable() + "' '" +
                       script.string() + "' --path inductor --json --record '" + record.string() +
                       "' --devices 0 --problems 1:20 2>&1";
  std::string out;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  ::pclose(pipe);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
}

}  // namespace

TEST_CASE("the machine's compiled record lies under the cache, per GPU model, PyTorch and kbench version",
          "[sandbox][compiled]") {
  const TempDir cache("record-path");
  const testing::ScopedEnv env("KBENCH_CACHE", cache.path().string());
  CHECK(sandbox::machine_compiled_record("NVIDIA H200") ==
        cache.path() / "compiled" / "H200" / ("torch-" KBENCH_TORCH_VERSION) / ("kbench-" KBENCH_VERSION) /
            "compiled.json");
  CHECK(sandbox::machine_compiled_record("NVIDIA H100 80GB HBM3").parent_path().parent_path().parent_path() ==
        cache.path() / "compiled" / "H100_80GB_HBM3");
}

TEST_CASE("a figure in the machine's record is returned without running anything", "[sandbox][compiled]") {
  const TempDir cache("recorded");
  const testing::ScopedEnv env("KBENCH_CACHE", cache.path().string());
  // A made-up model: nothing in baselines/ for it, and no CUDA device of that name to time on.
  const std::string gpu = "NVIDIA Test GPU 51";
  const auto record = sandbox::machine_compiled_record(gpu);
  REQUIRE(starts_with(record.string(), cache.path().string()));
  REQUIRE_FALSE(report::recorded_baseline(gpu, "compiled", 1, "19_ReLU"));
  const auto* relu = catalog().find(1, 19);
  REQUIRE(relu);
  REQUIRE(relu->name == "19_ReLU");
  const auto* second = catalog().find(1, 20);
  REQUIRE(second);
  const auto* third = catalog().find(1, 21);
  REQUIRE(third);
  write_record(record, {{"level1",
                         {{"19_ReLU.py",
                           {{"mean", 0.5},
                            {"path", kInductorPath},
                            {"torch", "x"},
                            {"created", "2025-01-01T00:00:00Z"},
                            {"compile_s", 3.0}}},
                          {third->name + ".py", {{"reason", "compile failed: X"}, {"path", kInductorPath}, {"torch", "x"}}}}}});

  // Any sitting would run this Python, which leaves a mark.
  const auto marker = cache.path() / "a-sitting-ran";
  const auto fake_python = cache.path() / "fake-python.sh";
  std::ofstream(fake_python) << "#!/bin/sh\ntouch '" << marker.string() << "'\necho 'fake python ran'\n";
  std::filesystem::permissions(fake_python, std::filesystem::perms::owner_all);
  const testing::ScopedEnv python_env("KBENCH_PYTHON", fake_python.string());

  sandbox::CompiledOnDemand maker(catalog(), gpu, {0});
  CHECK(maker.known(1, 19));
  CHECK(maker.known(1, 21));  // a reason is known too: nothing to make
  CHECK_FALSE(maker.known(1, 20));

  const auto start = Clock::now();
  const auto entry = maker.figure(1, 19);
  const auto failed = maker.figure(1, 21);
  CHECK(seconds_since(start) < 1.0);  // read, not made: no sitting, which takes seconds at the least

  INFO(entry.dump());
  REQUIRE(entry.contains("mean_ms"));
  CHECK(entry["mean_ms"].get<double>() == Approx(0.5));
  const auto source = entry.value("source", "");
  CHECK(starts_with(source, kInductorPath));
  CHECK_THAT(source, contains_text("made on demand on this machine"));
  CHECK_THAT(source, contains_text(record.string()));
  CHECK(entry.value("torch", "") == "x");
  CHECK(entry.value("compile_s", 0.0) == Approx(3.0));

  INFO(failed.dump());
  CHECK_FALSE(failed.contains("mean_ms"));
  CHECK(starts_with(failed.value("source", ""), "none: compile failed: X"));
  CHECK_THAT(failed.value("source", ""), contains_text("made on demand on this machine"));
  CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("where the script can make no figure, figure says why, once per problem and without a second sitting",
          "[sandbox][compiled]") {
  if (const auto why = why_no_figureless_script(); !why.empty()) {
    WARN("skipped: " << why);
    return;
  }
  const TempDir cache("no-figure");
  const testing::ScopedEnv env("KBENCH_CACHE", cache.path().string());
  const TempDir inductor("no-figure-inductor");  // in case the script got as far as compiling
  const testing::ScopedEnv inductor_env("TORCHINDUCTOR_CACHE_DIR", inductor.path().string());
  const std::string gpu = "NVIDIA Test GPU 52";
  const auto record = sandbox::machine_compiled_record(gpu);
  sandbox::CompiledOnDemand maker(catalog(), gpu, {0});
  REQUIRE_FALSE(maker.known(1, 20));

  auto start = Clock::now();
  const auto first = maker.figure(1, 20);
  const double first_s = seconds_since(start);
  INFO(first.dump());
  CHECK(first_s < 120);
  CHECK_FALSE(first.contains("mean_ms"));
  const auto source = first.value("source", "");
  CHECK(starts_with(source, "none: on demand"));
  // The script's last line: PyTorch without CUDA ("CUDA is not available to PyTorch ...") or, before
  // 2.0 (this Debian's 1.13), too old for the inductor path; either way it says it did nothing. The
  // same line as the script prints when run here by hand.
  CHECK_THAT(source, contains_text("compile_baselines: "));
  CHECK_THAT(source, contains_text("nothing to do"));
  const auto last = script_last_line(cache.path() / "by-hand.json");
  CHECK_FALSE(last.empty());
  CHECK_THAT(source, contains_text(last));
  if (last.find("older than") == std::string::npos) CHECK_THAT(source, contains_text("CUDA"));
  CHECK_FALSE(maker.known(1, 20));

  start = Clock::now();
  const auto second = maker.figure(1, 20);
  CHECK(seconds_since(start) < 5);  // a sanity bound: no second sitting, not a timing goal
  CHECK(second == first);

  // Asked ahead for two more: both come back as reasons, from one sitting.
  maker.make_ahead({{1, 21}, {1, 22}});
  start = Clock::now();
  const auto a = maker.figure(1, 21);
  const auto b = maker.figure(1, 22);
  CHECK(seconds_since(start) < 120);
  INFO(a.dump() << "\n" << b.dump());
  for (const auto* e : {&a, &b}) {
    CHECK_FALSE(e->contains("mean_ms"));
    CHECK(starts_with(e->value("source", ""), "none: on demand"));
    CHECK_THAT(e->value("source", ""), contains_text("nothing to do"));
  }
  CHECK_FALSE(std::filesystem::exists(record));  // nothing recorded
}

TEST_CASE("figure of a problem not in the catalog says there is no such problem", "[sandbox][compiled]") {
  const TempDir cache("no-such");
  const testing::ScopedEnv env("KBENCH_CACHE", cache.path().string());
  REQUIRE_FALSE(catalog().find(1, 999));
  sandbox::CompiledOnDemand maker(catalog(), "NVIDIA Test GPU 53", {0});
  CHECK_FALSE(maker.known(1, 999));
  const auto start = Clock::now();
  const auto entry = maker.figure(1, 999);
  CHECK(seconds_since(start) < 1.0);
  INFO(entry.dump());
  CHECK_FALSE(entry.contains("mean_ms"));
  CHECK(starts_with(entry.value("source", ""), "none: no such problem"));
}

TEST_CASE("a GPU's lock file is named after the GPU that CUDA_VISIBLE_DEVICES maps the ordinal to",
          "[sandbox][compiled]") {
  const auto name = [](int device) { return sandbox::gpu_lock_path(device).filename().string(); };
  {
    const testing::ScopedEnv env("CUDA_VISIBLE_DEVICES", std::nullopt);
    CHECK(name(1) == "kbench-gpu1-timing.lock");
    CHECK(name(0) == "kbench-gpu0-timing.lock");
    CHECK(sandbox::gpu_lock_path(1).parent_path() == std::filesystem::temp_directory_path());
  }
  {
    const testing::ScopedEnv env("CUDA_VISIBLE_DEVICES", "");  // set but empty: as unset
    CHECK(name(1) == "kbench-gpu1-timing.lock");
  }
  {
    const testing::ScopedEnv env("CUDA_VISIBLE_DEVICES", "3,5");
    CHECK(name(1) == "kbench-gpu5-timing.lock");
    CHECK(name(0) == "kbench-gpu3-timing.lock");
  }
  {
    const testing::ScopedEnv env("CUDA_VISIBLE_DEVICES", "GPU-ab:cd,7");
    CHECK(name(0) == "kbench-gpuGPU-ab_cd-timing.lock");
    CHECK(name(1) == "kbench-gpu7-timing.lock");
  }
}

TEST_CASE("a file lock is held by one thread at a time", "[sandbox][compiled]") {
  const TempDir dir("file-lock");
  const auto path = dir.path() / "the.lock";
  std::promise<void> go;
  const auto start = go.get_future().share();
  const auto hold = [&] {
    start.wait();
    const compile::FileLock lock(path);
    const auto from = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return std::make_pair(from, Clock::now());  // before the lock is let go
  };
  auto a = std::async(std::launch::async, hold);
  auto b = std::async(std::launch::async, hold);
  go.set_value();
  const auto [a_from, a_to] = a.get();
  const auto [b_from, b_to] = b.get();
  CHECK((a_to <= b_from || b_to <= a_from));
}

TEST_CASE("baselines recorded from several threads at once are all kept", "[sandbox][compiled]") {
  // record_baseline writes under the project root's baselines/: a root of this test's own.
  const TempDir root("record-root");
  const testing::ScopedEnv env("KBENCH_ROOT", root.path().string());
  const std::string gpu = "Test GPU 51 record";
  const auto file = report::baseline_file(gpu, "compiled");
  REQUIRE(starts_with(file.string(), root.path().string()));
  constexpr int kThreads = 4, kEach = 8;
  std::promise<void> go;
  const auto start = go.get_future().share();
  std::vector<std::future<void>> writers;
  for (int t = 0; t < kThreads; ++t)
    writers.push_back(std::async(std::launch::async, [&, t] {
      start.wait();
      for (int i = 0; i < kEach; ++i)
        report::record_baseline(gpu, "compiled", 1, "problem_" + std::to_string(t) + "_" + std::to_string(i),
                                {{"mean", t + i / 10.0}, {"path", kInductorPath}});
    }));
  go.set_value();
  for (auto& w : writers) w.get();
  const auto doc = testing::read_json_file(file);
  REQUIRE(doc.contains("level1"));
  CHECK(doc["level1"].size() == static_cast<size_t>(kThreads * kEach));
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kEach; ++i) {
      const auto name = "problem_" + std::to_string(t) + "_" + std::to_string(i);
      INFO(name);
      const auto entry = report::recorded_baseline(gpu, "compiled", 1, name);
      REQUIRE(entry);
      CHECK((*entry)["mean"].get<double>() == Approx(t + i / 10.0));
    }
}
