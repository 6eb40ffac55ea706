// The parent's side of isolation, with stand-in worker programs that misbehave on purpose: the real
// worker's misbehaviour on a GPU is covered by the [gpu] submission tests.
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "compile/child_process.h"
#include "compile/file_lock.h"
#include "fixtures.h"
#include "sandbox/gpu_lock.h"
#include "sandbox/gpu_runner.h"
#include "sandbox/worker.h"

#include "catch.h"

using namespace kbench;

namespace {

sandbox::EvalRequest some_request() {
  sandbox::EvalRequest r;
  r.submission = "x.cu";
  r.level = 1;
  r.problem = 19;
  return r;
}

}  // namespace

TEST_CASE("a worker killed by a signal gives crash, naming the signal and the stage", "[sandbox]") {
  const auto record = sandbox::evaluate_isolated(some_request(), {},
                                                 testing::fake_worker("segv", "next_request; reply '{\"stage\":\"correctness\"}'; kill -SEGV $$"));
  CHECK(record["verdict"] == "crash");
  CHECK_THAT(record["message"].get<std::string>(), contains_text("Segmentation fault"));
  CHECK_THAT(record["message"].get<std::string>(), contains_text("correctness"));
  CHECK_FALSE(record.contains("retried"));  // a fault is the process's own: never evaluated again
}

TEST_CASE("a worker that exits without a record gives crash with its exit code", "[sandbox]") {
  const auto record = sandbox::evaluate_isolated(some_request(), {}, testing::fake_worker("exit", "exit 3"));
  CHECK(record["verdict"] == "crash");
  CHECK_THAT(record["message"].get<std::string>(), contains_text("code 3"));
}

TEST_CASE("a worker that hangs is killed at its stage budget: timeout", "[sandbox]") {
  sandbox::Budgets budgets;
  budgets.compile_s = 1;
  const auto t0 = std::chrono::steady_clock::now();
  const auto record = sandbox::evaluate_isolated(some_request(), budgets, testing::fake_worker("hang", "sleep 100"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(record["verdict"] == "timeout");
  CHECK(seconds < 5);
  CHECK_FALSE(record.contains("retried"));  // kbench's own kill
}

TEST_CASE("a flood of output is drained and only its tail kept", "[sandbox]") {
  const auto record = sandbox::evaluate_isolated(
      some_request(), {}, testing::fake_worker("flood", "head -c 50000000 /dev/zero | tr '\\\\0' x; echo; echo last-line; exit 1"));
  CHECK(record["verdict"] == "crash");
  const auto output = record["worker_output"].get<std::string>();
  CHECK(output.size() <= 16 * 1024);
  CHECK_THAT(output, contains_text("last-line"));
}

TEST_CASE("a worker is reused after a clean verdict and replaced after a crash", "[sandbox]") {
  // Answers every request with a fixed record; the third line of input makes it crash.
  const auto exe = testing::fake_worker("serve", R"(n=0
while next_request; do
  n=$((n+1))
  if [ $n -eq 3 ]; then kill -SEGV $$; fi
  reply '{"record":{"verdict":"value_mismatch","problem":{"level":1,"id":19}}}'
done)");
  sandbox::Worker worker(exe);
  CHECK(worker.evaluate(some_request(), {})["worker_evaluations"] == 1);
  CHECK(worker.evaluate(some_request(), {})["worker_evaluations"] == 2);  // same process
  CHECK(worker.evaluate(some_request(), {})["verdict"] == "crash");
  CHECK(worker.evaluate(some_request(), {})["worker_evaluations"] == 1);  // a fresh process
}

TEST_CASE("a worker killed from outside mid-evaluation: evaluated again on a fresh worker, the record says why", "[sandbox]") {
  // Says where it is and who it is, then answers after a second; the test kills the first one.
  const auto pids = std::filesystem::temp_directory_path() / "kbench-fake-outside.pids";
  std::filesystem::remove(pids);
  const auto exe = testing::fake_worker("outside", "while next_request; do reply '{\"stage\":\"timing\"}'; echo $$ >> " +
                                                       pids.string() + "; sleep 1; reply '{\"record\":{\"verdict\":\"correct\"}}'; done");
  sandbox::Worker worker(exe);
  auto evaluation = std::async(std::launch::async, [&] { return worker.evaluate(some_request(), {}); });
  pid_t first = 0;
  for (int i = 0; i < 500 && !(std::ifstream(pids) >> first); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(first > 0);
  ::kill(first, SIGKILL);  // as the OOM killer or an operator would
  const auto record = evaluation.get();
  CHECK(record["verdict"] == "correct");
  REQUIRE(record.contains("retried"));
  CHECK(record["retried"]["stage"] == "timing");
  CHECK_THAT(record["retried"]["message"].get<std::string>(), contains_text("Killed"));
  CHECK(record["worker_evaluations"] == 1);  // on a fresh process
}

TEST_CASE("a worker that kills itself dies again on the retry: crash", "[sandbox]") {
  const auto record = sandbox::evaluate_isolated(
      some_request(), {}, testing::fake_worker("self-kill", "next_request; reply '{\"stage\":\"correctness\"}'; kill -KILL $$"));
  CHECK(record["verdict"] == "crash");
  CHECK(record["retried"]["stage"] == "correctness");
  CHECK_THAT(record["message"].get<std::string>(), contains_text("on a fresh worker as on the first"));
}

TEST_CASE("a worker that hoards host memory is killed at its budget: runtime_error", "[sandbox]") {
  sandbox::Budgets budgets;
  budgets.host_memory_gib = 0.25;
  // 400 MiB written (not just reserved), then the worker would wait for ever.
  const auto record = sandbox::evaluate_isolated(
      some_request(), budgets,
      testing::fake_worker("hoard", "exec python3 -c \"import time; x = b'x' * (400 << 20); time.sleep(100)\""));
  CHECK(record["verdict"] == "runtime_error");
  CHECK_THAT(record["message"].get<std::string>(), contains_text("out of host memory"));
}

TEST_CASE("a request the worker could not evaluate is a harness error that names the line that failed", "[sandbox]") {
  // As the worker reports a reference that ran out of memory inside TorchScript: the traceback's
  // first line says only that an operation failed.
  const auto worker = testing::fake_worker(
      "harness-error", "while next_request; do reply '{\"record\":{\"error\":\"The following operation failed in the "
                       "TorchScript interpreter.\\nTraceback of TorchScript (most recent call last):\\n  x = torch.rand(n)"
                       "\\nRuntimeError: CUDA out of memory. Tried to allocate 7.00 GiB\"}}'; done");
  sandbox::GpuRunner runner(0, worker);
  const auto record = runner.evaluate(some_request(), {});
  CHECK(record["verdict"] == "not_checked");
  CHECK(record["message"] == "harness error: RuntimeError: CUDA out of memory. Tried to allocate 7.00 GiB");
  CHECK_THAT(record["error"].get<std::string>(), contains_text("Traceback of TorchScript"));
}

// ---- a ModelNew spare: Python started before its request ------------------------------------------

namespace {

// A ModelNew that imports and constructs on the CPU with no extension to build (L3#46's names), and
// L1#19's .cu, both compile-only: what a worker can evaluate without a GPU.
sandbox::EvalRequest compile_only(const std::filesystem::path& file, int level, int problem) {
  sandbox::EvalRequest r;
  r.submission = file.string();
  r.level = level;
  r.problem = problem;
  r.compile_only = true;
  return r;
}
const auto kModelNew = [] { return compile_only(testing::test_dir() / "fixtures" / "modelnew" / "cpu" / "uses_reference_names.py", 3, 46); };
const auto kCu = [] { return compile_only(testing::test_dir().parent_path() / "level1" / "19_ReLU.cu", 1, 19); };

template <typename Ready>
bool wait_for(Ready ready, double seconds) {
  for (int i = 0; i < seconds * 20 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return ready();
}

}  // namespace

TEST_CASE("a worker starts Python ahead of its request, its ModelNew record says so, and it never takes a .cu",
          "[sandbox][modelnew]") {
  sandbox::Worker worker(testing::kbench_exe());
  // Sent at once: the worker reads it once its Python has started, and none of it is lost then.
  worker.start_python_ahead();
  const auto record = worker.evaluate(kModelNew(), {});
  INFO(record.dump().substr(0, 2000));
  CHECK(record["verdict"] == "not_checked");
  CHECK(record["worker"]["python_prestarted"] == true);
  CHECK(record["worker"]["python_prestart_wait_ms"].get<double>() > 0);
  const auto& phases = record["phases_ms"];
  CHECK(phases["python_prestart"]["python_start_split"]["torch"].get<double>() > 0);  // torch imported then
  CHECK(phases["python_start"].get<double>() < phases["python_prestart"]["python_start"].get<double>());
  CHECK_FALSE(phases.contains("python_start_split"));

  // The ModelNew retired that process; a fresh one whose Python started refuses a .cu.
  worker.start_python_ahead();
  REQUIRE(wait_for([&] { return worker.python_ready(); }, 120));
  const auto cu = worker.evaluate(kCu(), {});
  INFO(cu.dump().substr(0, 2000));
  CHECK_THAT(cu.value("error", ""), contains_text("never evaluates a .cu"));
}

TEST_CASE("a runner evaluates each ModelNew in a spare whose Python started ahead, never in its worker",
          "[sandbox][modelnew]") {
  sandbox::GpuRunner runner(0, testing::kbench_exe());
  CHECK(runner.evaluate(kCu(), {})["worker_evaluations"] == 1);
  const long worker_pid = runner.status().pid;
  CHECK(runner.status().modelnew_spares.empty());  // made by the first ModelNew

  const auto cold = runner.evaluate(kModelNew(), {});
  CHECK(cold["worker"]["python_prestarted"] == false);  // the first: a fresh process, its spare started beside it
  CHECK(cold["phases_ms"].contains("python_start_split"));
  REQUIRE(runner.status().modelnew_spares.size() == 1);
  REQUIRE(wait_for([&] { return runner.status().modelnew_spares.at(0).python_started; }, 120));
  const long spare_pid = runner.status().modelnew_spares[0].pid;

  const auto warm = runner.evaluate(kModelNew(), {});
  INFO(warm.dump().substr(0, 2000));
  CHECK(warm["worker"]["python_prestarted"] == true);
  CHECK(warm["worker"]["python_prestart_wait_ms"] == 0.0);
  CHECK(warm["verdict"] == cold["verdict"]);
  CHECK(warm["message"] == cold["message"]);
  CHECK(warm["phases_ms"]["python_start"].get<double>() < cold["phases_ms"]["python_start"].get<double>());
  // Used once; the next one is starting, and one spare was enough.
  REQUIRE(runner.status().modelnew_spares.size() == 1);
  CHECK(runner.status().modelnew_spares[0].pid != spare_pid);

  // The worker kept its process through both: never a ModelNew's, never retired by one.
  CHECK(runner.evaluate(kCu(), {})["worker_evaluations"] == 2);
  CHECK(runner.status().pid == worker_pid);
}

TEST_CASE("a ModelNew that finds its spare still starting adds a spare to the pool (a ready one adds none)",
          "[sandbox][modelnew]") {
  // A stand-in worker whose Python takes 3 s to start: far longer than its evaluations.
  const auto slow_start = testing::fake_worker("slow-python", R"(while next_request; do
  case "$line" in
    *start_python*) sleep 3; printf '%s\n' '{"python_started":{}}' >&3 ;;
    *) reply '{"record":{"verdict":"correct","problem":{"level":1,"id":19}}}' ;;
  esac
done)");
  // GPU 7: its timing lock file (machine-wide, per GPU) is this test's own. On GPU 0's, a test
  // evaluating beside it under ctest -j made the first request wait seconds, its spare meanwhile ready.
  sandbox::GpuRunner runner(7, slow_start);
  auto request = some_request();
  request.submission = "x.py";  // a ModelNew
  CHECK(runner.evaluate(request, {})["verdict"] == "correct");  // a fresh process: its spare starts beside it
  REQUIRE(runner.status().modelnew_spares.size() == 1);

  const auto waited = runner.evaluate(request, {});  // at once: that spare is still starting
  CHECK(waited["worker"]["python_prestart_wait_ms"].get<double>() > 1000);
  const auto spares = runner.status().modelnew_spares;
  REQUIRE(spares.size() == 2);
  REQUIRE(wait_for([&] {
    const auto s = runner.status().modelnew_spares;
    return s.size() == 2 && s[0].python_started && s[1].python_started;
  }, 20));

  const auto ready = runner.evaluate(request, {});
  CHECK(ready["worker"]["python_prestart_wait_ms"] == 0.0);
  const auto after = runner.status().modelnew_spares;
  REQUIRE(after.size() == 2);  // the one taken replaced, no more
  CHECK(after[0].pid == spares[1].pid);  // the oldest is taken first
}

TEST_CASE("a ModelNew that finds its spare not ready grows the pool to cover a spare's start, up to its cap; the record "
          "says what it found", "[sandbox][modelnew]") {
  // Python takes 2 s to start, an evaluation 0.1 s: 20 evaluations to cover one start.
  const auto slow_start = testing::fake_worker("slower-python", R"(while next_request; do
  case "$line" in
    *start_python*) sleep 2; printf '%s\n' '{"python_started":{}}' >&3 ;;
    *) sleep 0.1; reply '{"record":{"verdict":"correct","problem":{"level":1,"id":19}}}' ;;
  esac
done)");
  sandbox::GpuRunner runner(7, slow_start);  // GPU 7: see the test above
  auto request = some_request();
  request.submission = "x.py";
  runner.evaluate(request, {});  // a fresh process; its spare starts beside it
  REQUIRE(wait_for([&] { const auto s = runner.status().modelnew_spares; return s.size() == 1 && s[0].python_started; }, 20));
  const auto ready = runner.evaluate(request, {});  // takes it ready: its start is now known
  CHECK(ready["worker"]["python_prestart_wait_ms"] == 0.0);
  CHECK(ready["worker"]["pool_at_take"] == nlohmann::json{{"spares", 1}, {"wanted", 1}});
  const auto& timeline = ready["worker"]["spare_timeline_ms"];
  CHECK(timeline["started"].get<double>() > timeline["python_started"].get<double>());
  CHECK(timeline["started"].get<double>() - timeline["python_started"].get<double>() >= 2000);
  CHECK(runner.status().modelnew_spares.size() == 1);

  const auto waited = runner.evaluate(request, {});  // at once: its replacement is still starting
  CHECK(waited["worker"]["python_prestart_wait_ms"].get<double>() > 1000);
  CHECK(runner.status().modelnew_spares.size() == 5);  // not 2: one more would not cover a 2 s start
}

TEST_CASE("a runner ends a ModelNew's process after its record, and the next ModelNew waits for that end by pid",
          "[sandbox][modelnew]") {
  // Each record says which process wrote it and which ending process its request named.
  const auto teller = testing::fake_worker("ending-teller", R"(while next_request; do
  case "$line" in
    *start_python*) printf '%s\n' '{"python_started":{}}' >&3 ;;
    *) ending=$(printf '%s' "$line" | sed -n 's/.*"ending_process":\(-\{0,1\}[0-9]*\).*/\1/p')
       [ "$ending" = -1 ] || sleep 0.3  # as a worker waits for that end (a killed shell's takes milliseconds)
       reply "{\"record\":{\"verdict\":\"correct\",\"problem\":{\"level\":1,\"id\":19},\"message\":\"$$ $ending\",\"phases_ms\":{}}}" ;;
  esac
done)");
  sandbox::GpuRunner runner(7, teller);  // GPU 7: see the spare-pool test
  auto request = some_request();
  request.submission = "x.py";
  const auto told = [&](const nlohmann::json& record) {
    INFO(record.dump());
    long pid = 0, ending = 0;
    std::istringstream(record.value("message", "")) >> pid >> ending;
    return std::pair{pid, ending};
  };
  const auto first_record = runner.evaluate(request, {});
  const auto [first, none] = told(first_record);
  CHECK(none == -1);
  CHECK_FALSE(first_record["phases_ms"]["runner"].contains("previous_end"));
  const auto second_record = runner.evaluate(request, {});
  const auto [second, named] = told(second_record);
  CHECK(second != first);
  CHECK(named == first);  // its pid still taken (not reaped) while the request could name it
  // The record says when that process was killed and how long its end took (ended by the time the
  // record is in, since the kill comes before the next request).
  const auto& end = second_record["phases_ms"]["runner"]["previous_end"];
  CHECK(end["killed_before_request"].get<double>() >= 0);
  CHECK(end["took"].get<double>() >= 0);
  // Reaped once the next end began; a .cu request waits for the last ModelNew's end and names none.
  CHECK(::kill(static_cast<pid_t>(first), 0) == -1);
  request.submission = "x.cu";
  const auto [worker, unnamed] = told(runner.evaluate(request, {}));
  CHECK(unnamed == -1);
  CHECK(::kill(static_cast<pid_t>(second), 0) == -1);
  CHECK(worker != second);
}

TEST_CASE("ModelNew spares prepare their GPU for the request they start beside (unless KBENCH_SPARES_PREPARE_GPU=0); a "
          "failed one is never used",
          "[sandbox][modelnew]") {
  // Each spare logs the preparation it was asked for, and answers it after `delay` seconds; each
  // record says which process wrote it.
  const auto asked = std::filesystem::temp_directory_path() / "kbench-prepare-log";
  std::filesystem::remove(asked);
  const auto spare = [&](const std::string& name, const std::string& answer, const std::string& delay = "") {
    return testing::fake_worker(name, "prepare_log=" + asked.string() + "\nprepare_reply='" + answer + "'\nprepare_delay=" +
                                          delay + "\n" + R"(while next_request; do
  case "$line" in
    *start_python*) printf '%s\n' '{"python_started":{}}' >&3 ;;
    *) reply "{\"record\":{\"verdict\":\"correct\",\"problem\":{\"level\":1,\"id\":19},\"message\":\"$$\"}}" ;;
  esac
done)");
  };
  const auto pid_of = [](const nlohmann::json& record) { return std::stol(record.value("message", "0")); };
  auto request = some_request();
  request.submission = "x.py";
  request.level = 2, request.problem = 12;
  const auto log_lines = [&] {
    std::ifstream log(asked);
    std::vector<nlohmann::json> lines;
    for (std::string line; std::getline(log, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  };

  SECTION("prepared: the spare is asked for the request's problem, once, and serves the next request") {
    const testing::ScopedEnv on("KBENCH_SPARES_PREPARE_GPU", "1");
    sandbox::GpuRunner runner(7, spare("prepared-spare", R"({"gpu_prepared":{"cuda_context":1}})"));  // GPU 7: see above
    const auto first = runner.evaluate(request, {});
    REQUIRE(wait_for([&] { return log_lines().size() == 1; }, 20));
    const auto ask = log_lines()[0]["prepare_gpu_ahead"];
    CHECK(ask["level"] == 2);
    CHECK(ask["problem"] == 12);
    REQUIRE(runner.status().modelnew_spares.size() == 1);
    const long spare_pid = runner.status().modelnew_spares[0].pid;
    const auto second = runner.evaluate(request, {});
    CHECK(pid_of(second) == spare_pid);
    CHECK(second["worker"].contains("gpu_prepare_wait_ms"));
    CHECK(pid_of(first) != spare_pid);
  }
  SECTION("still preparing: the request waits for it, and the pool grows by one, as for a Python still starting") {
    const testing::ScopedEnv on("KBENCH_SPARES_PREPARE_GPU", "1");
    sandbox::GpuRunner runner(7, spare("slow-prepare", R"({"gpu_prepared":{"cuda_context":1}})", "3"));
    runner.evaluate(request, {});  // a fresh process; its spare starts and is asked to prepare
    REQUIRE(wait_for([&] { return !runner.status().modelnew_spares.empty() && runner.status().modelnew_spares[0].python_started; }, 20));
    const long spare_pid = runner.status().modelnew_spares[0].pid;
    const auto second = runner.evaluate(request, {});  // its Python ready, its preparation not yet
    CHECK(pid_of(second) == spare_pid);
    CHECK(second.at("worker").at("python_prestart_wait_ms") == 0.0);
    CHECK(second.at("worker").at("gpu_prepare_wait_ms").get<double>() > 500);
    CHECK(runner.status().modelnew_spares.size() == 2);
  }
  SECTION("skipped (no GPU, say): the spare serves the next request all the same") {
    const testing::ScopedEnv on("KBENCH_SPARES_PREPARE_GPU", "1");
    sandbox::GpuRunner runner(7, spare("skipping-spare", R"({"gpu_prepared":{"skipped":"no GPU"}})"));
    runner.evaluate(request, {});
    REQUIRE(wait_for([&] { return log_lines().size() == 1; }, 20));
    REQUIRE(runner.status().modelnew_spares.size() == 1);
    const long spare_pid = runner.status().modelnew_spares[0].pid;
    CHECK(pid_of(runner.evaluate(request, {})) == spare_pid);
  }
  SECTION("failed: the spare is ended unused, and the request runs in a fresh process") {
    const testing::ScopedEnv on("KBENCH_SPARES_PREPARE_GPU", "1");
    sandbox::GpuRunner runner(7, spare("unprepared-spare", R"({"gpu_prepared":{"error":"CUDA did not start"}})"));
    runner.evaluate(request, {});
    REQUIRE(wait_for([&] { return log_lines().size() == 1; }, 20));
    REQUIRE(runner.status().modelnew_spares.size() == 1);
    const long spare_pid = runner.status().modelnew_spares[0].pid;
    const auto second = runner.evaluate(request, {});
    CHECK(pid_of(second) != spare_pid);
    CHECK_FALSE(second.value("worker", nlohmann::json::object()).contains("gpu_prepare_wait_ms"));  // a fresh process was asked nothing
    CHECK(::kill(static_cast<pid_t>(spare_pid), 0) == -1);
  }
  SECTION("with KBENCH_SPARES_PREPARE_GPU=0: no spare is asked") {
    const testing::ScopedEnv off("KBENCH_SPARES_PREPARE_GPU", "0");
    sandbox::GpuRunner runner(7, spare("unasked-spare", R"({"gpu_prepared":{"cuda_context":1}})"));
    runner.evaluate(request, {});
    REQUIRE(wait_for([&] { return !runner.status().modelnew_spares.empty() && runner.status().modelnew_spares[0].python_started; }, 20));
    CHECK(log_lines().empty());
  }
  std::filesystem::remove(asked);
}

TEST_CASE("the spares lock: a shared hold only while nobody holds it exclusively, and the exclusive taker waits for it",
          "[sandbox]") {
  const auto path = sandbox::spares_lock_path(7, ::getpid());
  CHECK(path != sandbox::spares_lock_path(7, ::getpid() + 1));  // each runner's own
  {
    const compile::FileLock worker_holds(path);
    CHECK(compile::FileLock::try_shared(path) == nullptr);  // a spare does not prepare its GPU then
  }
  auto preparing = compile::FileLock::try_shared(path);
  REQUIRE(preparing != nullptr);
  CHECK(compile::FileLock::try_shared(path) != nullptr);  // spares prepare side by side
  const auto t0 = std::chrono::steady_clock::now();
  auto taker = std::async(std::launch::async, [&] {
    const compile::FileLock worker_takes(path);
    return std::chrono::steady_clock::now();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(taker.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
  preparing.reset();
  CHECK(taker.get() - t0 >= std::chrono::milliseconds(300));
  std::filesystem::remove(path);
}

TEST_CASE("the quiet lock: timed work waits for the spare's part under way, never for the parts queued behind it",
          "[sandbox]") {
  constexpr int kDevice = 9001;  // lock files of a GPU no machine has: this test's own
  using Clock = std::chrono::steady_clock;
  std::atomic<bool> first_part_held{false};
  // A spare whose parts follow each other at once, 60 ms each: flock(2) alone would often hand the
  // lock straight back to it.
  auto spare = std::async(std::launch::async, [&] {
    for (int part = 0; part < 10; ++part) {
      const sandbox::QuietLock quiet(kDevice, sandbox::QuietLock::For::spare_part);
      first_part_held = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(60));
    }
    return Clock::now();
  });
  REQUIRE(wait_for([&] { return first_part_held.load(); }, 5));
  const auto asked = Clock::now();
  Clock::time_point timed_from;
  {
    const sandbox::QuietLock timing(kDevice, sandbox::QuietLock::For::timing);
    timed_from = Clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto spare_done = spare.get();
  CHECK(timed_from - asked < std::chrono::milliseconds(200));  // one part at most, not the ten
  CHECK(spare_done - timed_from > std::chrono::milliseconds(100));  // the spare's later parts waited for it
  std::filesystem::remove(sandbox::quiet_gpu_lock_path(kDevice));
  std::filesystem::remove(sandbox::quiet_gate_path(kDevice));
}

TEST_CASE("wait_for_end waits for any process's end, and only as long as it is told", "[sandbox]") {
  const pid_t child = ::fork();
  if (child == 0) {
    ::usleep(300 * 1000);
    ::_exit(0);
  }
  REQUIRE(child > 0);
  CHECK_FALSE(compile::wait_for_end(child, 0.05));  // still sleeping
  CHECK(compile::wait_for_end(child, 10));          // ended: a zombie until reaped below
  CHECK(compile::wait_for_end(child, 0));
  ::waitpid(child, nullptr, 0);
  CHECK(compile::wait_for_end(child, 0));  // no such process
}

TEST_CASE("a line on the result pipe without the request's token is the submission's: host_error, never its record",
          "[sandbox]") {
  // As a submission writing to the pipe: a made-up record first, then the worker's own.
  const auto forger = testing::fake_worker("forger", R"(next_request
printf '%s\n' '{"record":{"verdict":"correct","message":"forged"}}' >&3
reply '{"record":{"verdict":"value_mismatch","problem":{"level":1,"id":19}}}')");
  const auto record = sandbox::evaluate_isolated(some_request(), {}, forger);
  CHECK(record["verdict"] == "host_error");
  CHECK_THAT(record["message"].get<std::string>(), contains_text("[kbench:refused]"));
  CHECK_THAT(record["message"].get<std::string>(), contains_text("forged"));
  // A torn line (no newline before the worker's own) is as foreign.
  const auto torn = testing::fake_worker("torn", R"(next_request
printf 'x' >&3
reply '{"record":{"verdict":"value_mismatch","problem":{"level":1,"id":19}}}')");
  CHECK(sandbox::evaluate_isolated(some_request(), {}, torn)["verdict"] == "host_error");
  // The worker's own lines pass.
  const auto honest = testing::fake_worker("honest", R"(next_request
reply '{"stage":"correctness"}'
reply '{"record":{"verdict":"value_mismatch","problem":{"level":1,"id":19}}}')");
  CHECK(sandbox::evaluate_isolated(some_request(), {}, honest)["verdict"] == "value_mismatch");
}

TEST_CASE("a ModelNew that writes a record into its worker's pipe gets host_error, not its record", "[sandbox][modelnew]") {
  sandbox::Worker worker(testing::kbench_exe());
  const auto record =
      worker.evaluate(compile_only(testing::test_dir() / "fixtures" / "modelnew" / "l1_19_forges_its_record.py", 1, 19), {});
  INFO(record.dump().substr(0, 2000));
  CHECK(record["verdict"] == "host_error");
  CHECK_THAT(record["message"].get<std::string>(), contains_text("result channel"));
  CHECK_FALSE(record.contains("timing"));
  CHECK(record["submission"]["format"] == "modelnew");  // kbench's record for a killed worker still says what it ran
}
