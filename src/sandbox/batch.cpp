#include "sandbox/batch.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <future>
#include <mutex>
#include <regex>
#include <set>
#include <thread>
#include <tuple>
#include <unistd.h>

#include "check/correctness.h"
#include "compile/submission.h"
#include "launch/cuda_driver.h"
#include "problems/catalog.h"
#include "sandbox/compile_ahead.h"
#include "sandbox/gpu_runner.h"
#include "sandbox/job_queue.h"
#include "sandbox/ncu_pass.h"

namespace kbench::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Records already in `out` (a resumed batch), keyed by submission path. A torn last line from a
// killed run is cut off so that appending continues on a clean line.
std::map<std::string, nlohmann::json> read_existing(const std::filesystem::path& out) {
  std::map<std::string, nlohmann::json> done;
  std::ifstream in(out, std::ios::binary);
  if (!in) return done;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto last_newline = text.rfind('\n');
  const size_t keep = last_newline == std::string::npos ? 0 : last_newline + 1;
  if (keep != text.size()) std::filesystem::resize_file(out, keep);
  std::istringstream lines(text.substr(0, keep));
  for (std::string line; std::getline(lines, line);) {
    const auto r = nlohmann::json::parse(line, nullptr, false);
    if (!r.is_discarded() && r.contains("batch")) done[r["batch"].value("file", "")] = r;
  }
  return done;
}

// Appends records, one line each, flushed at once: a batch killed at any point loses nothing
// that was reported.
class ResultWriter {
 public:
  explicit ResultWriter(const std::filesystem::path& path) {
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    file_ = std::fopen(path.c_str(), "a");
    if (!file_) throw std::runtime_error("cannot append to " + path.string());
  }
  ~ResultWriter() { std::fclose(file_); }
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;
  void append(const nlohmann::json& record) {
    const std::string line = record.dump() + "\n";
    std::lock_guard<std::mutex> lock(mutex_);
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);
    ::fsync(::fileno(file_));
  }

 private:
  std::FILE* file_ = nullptr;
  std::mutex mutex_;
};

// "[120/400] correct 80  value_mismatch 30 ... ETA 2m10s" on one self-overwriting stderr line.
class Progress {
 public:
  Progress(int total, bool enabled) : total_(total), enabled_(enabled && ::isatty(STDERR_FILENO)), start_(Clock::now()) {}
  void update(const std::string& verdict) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++done_;
    ++counts_[verdict];
    if (!enabled_) return;
    std::string line = "\r[" + std::to_string(done_) + "/" + std::to_string(total_) + "]";
    for (const auto& [v, n] : counts_) line += " " + v + " " + std::to_string(n);
    const double eta = seconds_since(start_) / done_ * (total_ - done_);
    line += "  ETA " + std::to_string(static_cast<int>(eta) / 60) + "m" + std::to_string(static_cast<int>(eta) % 60) + "s ";
    std::fputs(line.c_str(), stderr);
    if (done_ == total_) std::fputs("\n", stderr);
  }

 private:
  int total_, done_ = 0;
  bool enabled_;
  Clock::time_point start_;
  std::map<std::string, int> counts_;
  std::mutex mutex_;
};

struct Job {
  DiscoveredSubmission submission;
  std::string hash;
  std::shared_future<nlohmann::json> compiled;  // ready once NVRTC or the extension builds have filled the caches
};

// A .py file that does not follow the naming is listed as unmatched only if it defines ModelNew: a
// directory of Python files (a checkout, with its reference problems) holds many that are not
// submissions at all.
bool looks_like_modelnew(const std::filesystem::path& path) {
  return compile::file_bytes(path).find("class ModelNew") != std::string::npos;
}


}  // namespace

Discovery discover(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error("not a directory: " + dir.string());
  static const std::regex flat(R"(level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.(cu|py))");
  static const std::regex nested(R"((?:.*/)?level(\d+)/(\d+)/[^/]+\.(cu|py))");
  static const std::regex beside(R"((?:.*/)?level(\d+)/(\d+)_[^/]+\.cu)");  // levelN/<id>_<Name>.cu
  Discovery d;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const auto extension = entry.path().extension();
    if (!entry.is_regular_file() || (extension != ".cu" && extension != ".py")) continue;
    const std::string rel = std::filesystem::relative(entry.path(), dir).string();
    std::smatch m;
    const std::string name = entry.path().filename().string();
    DiscoveredSubmission s{entry.path(), rel};
    if (std::regex_match(name, m, flat)) {
      s.level = std::stoi(m[1]), s.problem = std::stoi(m[2]), s.sample = std::stoi(m[3]);
    } else if (std::regex_match(rel, m, nested) || std::regex_match(rel, m, beside)) {
      s.level = std::stoi(m[1]), s.problem = std::stoi(m[2]);
    } else {
      if (extension == ".cu" || looks_like_modelnew(entry.path())) d.unmatched.push_back(rel);
      continue;
    }
    d.submissions.push_back(s);
  }
  std::sort(d.submissions.begin(), d.submissions.end(), [](const auto& a, const auto& b) {
    return std::tie(a.level, a.problem, a.relative) < std::tie(b.level, b.problem, b.relative);
  });
  std::sort(d.unmatched.begin(), d.unmatched.end());
  return d;
}

bool in_shard(const std::string& content_hash, int index, int count) {
  if (count <= 1) return true;
  const unsigned long long h = std::stoull(content_hash.substr(0, 12), nullptr, 16);
  return static_cast<int>(h % static_cast<unsigned long long>(count)) == index;
}

nlohmann::json BatchSummary::to_json() const {
  return {{"discovered", discovered}, {"unmatched", unmatched}, {"in_shard", in_shard}, {"resumed", resumed},
          {"evaluated", evaluated}, {"duplicates", duplicates}, {"wall_s", wall_s}, {"compile_s", compile_s},
          {"compile_threads", compile_threads},
          {"gpu_busy_s", gpu_busy_s}, {"verdicts", verdicts}, {"builds", builds}};
}

namespace {

// What a batch has to do: the submissions to evaluate, each (problem, content) once, and the files
// identical to one evaluated (or already done), which get its record under their own names.
struct Plan {
  std::vector<Job> jobs;
  std::vector<std::pair<DiscoveredSubmission, std::string>> duplicates;  // (file, the one it repeats)
};

// Hashes every file and keeps this shard's; counts into `summary` what it finds and what was done.
Plan plan_jobs(const Discovery& found, const BatchOptions& o, const std::map<std::string, nlohmann::json>& existing,
               BatchSummary& summary) {
  Plan plan;
  std::map<std::string, std::string> first_of;  // "L/P/hash" -> relative path evaluated
  for (const auto& s : found.submissions) {
    const auto hash = compile::content_hash(compile::file_bytes(s.path));
    if (!in_shard(hash, o.shard_index, o.shard_count)) continue;
    ++summary.in_shard;
    const auto key = std::to_string(s.level) + "/" + std::to_string(s.problem) + "/" + hash;
    if (existing.count(s.relative)) {
      ++summary.resumed;
      first_of.emplace(key, s.relative);
      continue;
    }
    if (auto it = first_of.find(key); it != first_of.end()) {
      plan.duplicates.emplace_back(s, it->second);
      continue;
    }
    first_of[key] = s.relative;
    plan.jobs.push_back({s, hash, {}});
  }
  return plan;
}

// NVRTC and ModelNew extension builds on every core, ahead of the GPUs: workers then find their
// CUBINs and extensions in the caches. Each job's `compiled` is ready when its build is done.
void compile_ahead_of_gpus(std::vector<Job>& jobs, const BatchOptions& o, const problems::Catalog& catalog,
                           CompileAhead& compile_ahead) {
  const auto gpu0 = launch::query_device(o.gpus.empty() ? 0 : o.gpus.front());
  const auto compile_options = compile_options_for(o.base, gpu0);
  for (auto& job : jobs) {
    PrepareOptions prepare{compile_options, {}, o.worker_exe, o.budgets.build_s};
    if (const auto* problem = catalog.find(job.submission.level, job.submission.problem))
      prepare.problem_source = catalog.source_path(*problem);
    job.compiled = compile_ahead.submit(job.submission.path, prepare);
  }
}

// One submission on GPU `gpu`'s runner; the record carries where and how long.
nlohmann::json evaluate_job(const Job& job, GpuRunner& runner, int gpu, EvalRequest req, const BatchOptions& o,
                            const problems::Catalog& catalog) {
  req.submission = job.submission.path.string();
  req.level = job.submission.level;
  req.problem = job.submission.problem;
  const auto t0 = Clock::now();
  nlohmann::json record;
  if (!catalog.find(req.level, req.problem)) {
    record = {{"problem", {{"level", req.level}, {"id", req.problem}}},
              {"verdict", check::to_string(check::Verdict::host_error)}, {"message", "no such problem in the catalog"}};
  } else {
    record = runner.evaluate(req, o.budgets);
  }
  record["batch"] = {{"file", job.submission.relative}, {"sample", job.submission.sample}, {"hash", job.hash},
                     {"gpu", gpu}, {"seconds", seconds_since(t0)}};
  return record;
}

// --compiled on-demand: per GPU, the maker of its model's compiled baselines, with every figure the
// jobs' problems lacked made. They are made before the GPUs evaluate, beside the builds: a worker
// holds its GPU's free memory, which the compiles need (on the H200, compiles beside the workers ran
// out of memory). Empty without on-demand.
std::vector<std::shared_ptr<CompiledOnDemand>> compiled_on_demand(const std::vector<Job>& jobs, const std::vector<int>& gpus,
                                                                  const BatchOptions& o, const problems::Catalog& catalog) {
  if (o.base.compiled != "on-demand" || !o.base.time) return {};
  std::vector<std::pair<int, int>> problems;
  for (const auto& job : jobs) {
    const std::pair<int, int> p{job.submission.level, job.submission.problem};
    if (problems.empty() || problems.back() != p) problems.push_back(p);
  }
  auto makers = compiled_makers(catalog, gpus);
  for (const auto& maker : makers) maker->make_ahead(problems);  // a model's maker asked twice makes each figure once
  for (const auto& maker : makers)
    for (const auto& [level, id] : problems) maker->figure(level, id);
  return makers;
}

// One runner per GPU, each keeping to one problem at a time (jobs are in (problem, path) order), so
// that its samples reuse the worker's loaded reference and eager timing. Every record is written as
// it comes, and kept in `existing` for the duplicates.
void evaluate_on_gpus(std::vector<Job>& jobs, const BatchOptions& o, const problems::Catalog& catalog,
                      ResultWriter& writer, std::map<std::string, nlohmann::json>& existing, BatchSummary& summary) {
  const auto gpus = gpus_to_use(o.gpus);
  JobQueue queue(gpus.size());
  for (const auto& job : jobs) queue.push(problem_queue_key(job.submission.level, job.submission.problem));
  queue.close();
  summary.gpu_busy_s.assign(gpus.size(), 0.0);
  const auto compiled = compiled_on_demand(jobs, gpus, o, catalog);
  Progress progress(static_cast<int>(jobs.size()), o.progress);
  std::mutex summary_mutex;
  std::vector<std::thread> runners;
  for (size_t g = 0; g < gpus.size(); ++g)
    runners.emplace_back([&, g] {
      GpuRunner runner(gpus[g], o.worker_exe, compiled.empty() ? nullptr : compiled.at(g).get());
      while (const auto next = queue.next(g)) {
        const auto& job = jobs[*next];
        job.compiled.wait();
        auto req = o.base;
        if (const auto upcoming = queue.upcoming(g)) std::tie(req.next_level, req.next_problem) = level_and_problem(*upcoming);
        const auto record = evaluate_job(job, runner, gpus[g], req, o, catalog);
        writer.append(record);
        progress.update(record.value("verdict", "?"));
        std::lock_guard<std::mutex> lock(summary_mutex);
        summary.gpu_busy_s[g] += record["batch"]["seconds"].get<double>();
        ++summary.evaluated;
        ++summary.verdicts[record.value("verdict", "?")];
        existing[job.submission.relative] = record;
      }
    });
  for (auto& t : runners) t.join();
}

}  // namespace

BatchSummary run_batch(const BatchOptions& options) {
  const auto start = Clock::now();
  // One robustness seed for every sample of the batch: their reference outputs stay reusable.
  BatchOptions o = options;
  if (o.base.check.robust_seed == 0) o.base.check.robust_seed = check::draw_robust_seed();
  BatchSummary summary;
  const auto found = discover(o.dir);
  summary.discovered = static_cast<int>(found.submissions.size());
  summary.unmatched = static_cast<int>(found.unmatched.size());
  const auto catalog = problems::Catalog::load(problems::project_root(o.base.root));
  auto existing = read_existing(o.out);
  ResultWriter writer(o.out);
  auto plan = plan_jobs(found, o, existing, summary);

  const auto compile_start = Clock::now();
  CompileAhead compile_ahead(o.compile_threads);
  compile_ahead_of_gpus(plan.jobs, o, catalog, compile_ahead);
  summary.compile_threads = compile_ahead.cores();
  if (o.build_only) {  // the caches are filled for a later run; nothing is evaluated
    for (const auto& job : plan.jobs)
      if (const auto& builds = job.compiled.get(); !builds.is_null())
        summary.builds.push_back({{"file", job.submission.relative}, {"extensions", builds}});
    summary.compile_s = seconds_since(compile_start);
    summary.wall_s = seconds_since(start);
    return summary;
  }
  // The builds' own time, measured beside the GPUs' work.
  std::thread compile_clock([&] {
    for (const auto& job : plan.jobs) job.compiled.wait();
    summary.compile_s = seconds_since(compile_start);
  });
  evaluate_on_gpus(plan.jobs, o, catalog, writer, existing, summary);
  compile_clock.join();

  // Identical files: the first one's verdict, recorded under each name.
  for (const auto& [dup, original] : plan.duplicates) {
    auto record = existing.at(original);
    record["duplicate_of"] = original;
    record["batch"]["file"] = dup.relative;
    record["batch"]["sample"] = dup.sample;
    record["submission"]["path"] = dup.path.string();
    writer.append(record);
    ++summary.duplicates;
    ++summary.verdicts[record.value("verdict", "?")];
  }
  summary.wall_s = seconds_since(start);
  return summary;
}

}  // namespace kbench::sandbox
