// Benchmark (not a test) of kbench's timer: kernels of known length from 10 us to 10 ms, each timed
// by timing::measure five times. scripts/gpu/timer-check.sh runs it, then runs it again under Nsight
// Compute (--launches mode) for an independent gpu__time_duration of the same kernels.
//
//   kbench_timer_bench                       calibrate, time, print one JSON line per kernel
//   kbench_timer_bench --iters a,b,c,d,e --launches N   only launch each kernel N times (for ncu)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <ATen/cuda/CUDAContext.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "compile/nvrtc_compiler.h"
#include "launch/cuda_driver.h"
#include "timing/timer.h"

namespace {

using namespace kbench;

// A dependent chain of FMAs per thread: the run time grows linearly with `iters`.
constexpr const char* kSource = R"(
#define SPIN(NAME) extern "C" __global__ void NAME(float* out, long long iters) { \
  float a = threadIdx.x * 1e-3f, b = 0.999f;                                       \
  for (long long i = 0; i < iters; ++i) a = a * b + 1e-3f;                         \
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;                                  \
}
SPIN(spin_10us) SPIN(spin_100us) SPIN(spin_1ms) SPIN(spin_3ms) SPIN(spin_10ms)
)";
const char* kNames[] = {"spin_10us", "spin_100us", "spin_1ms", "spin_3ms", "spin_10ms"};
const double kTargetUs[] = {10, 100, 1000, 3000, 10000};

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    throw std::runtime_error(std::string(what) + ": " + (s ? s : "?"));
  }
}

struct Bench {
  launch::LoadedModule* module;
  float* out;
  int blocks;
  void launch(const char* name, long long iters) const {
    void* args[] = {const_cast<float**>(&out), &iters};
    auto stream = reinterpret_cast<CUstream>(at::cuda::getCurrentCUDAStream().stream());
    check(cuLaunchKernel(static_cast<CUfunction>(module->find(name)->function), blocks, 1, 1, 256, 1, 1, 0, stream,
                         args, nullptr),
          "cuLaunchKernel");
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<long long> iters;
    int launches = 0;
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) {
        for (char* tok = std::strtok(argv[++i], ","); tok; tok = std::strtok(nullptr, ",")) iters.push_back(std::atoll(tok));
      } else if (!std::strcmp(argv[i], "--launches") && i + 1 < argc) {
        launches = std::atoi(argv[++i]);
      }
    }
    const auto gpu = launch::query_device(0);
    if (!gpu.present) throw std::runtime_error("no GPU: " + gpu.why_absent);
    cudaSetDevice(0);
    cudaFree(nullptr);
    compile::CompileOptions options;
    options.arch = gpu.arch();
    const auto compiled = compile::nvrtc_compile(kSource, "timer_bench.cu", options);
    if (!compiled.ok) throw std::runtime_error("NVRTC: " + compiled.log);
    launch::LoadedModule module(compiled.cubin, compiled.kernels);
    const int blocks = gpu.multiprocessors * 8;  // fills the GPU: one wave of 256-thread blocks
    auto out = torch::empty({blocks * 256}, torch::dtype(torch::kFloat32).device(torch::kCUDA));
    Bench bench{&module, out.data_ptr<float>(), blocks};

    if (launches > 0) {  // under ncu: launch only
      for (size_t k = 0; k < iters.size() && k < 5; ++k)
        for (int i = 0; i < launches; ++i) bench.launch(kNames[k], iters[k]);
      cudaDeviceSynchronize();
      return 0;
    }

    // Calibrate: the time of a fixed count, scaled linearly to each target.
    timing::TimingOptions calibration;
    calibration.trials = 20;
    const long long probe = 100000;
    const double probe_ms = timing::measure([&] { bench.launch(kNames[4], probe); }, calibration).stats.median;
    for (double target : kTargetUs) iters.push_back(static_cast<long long>(probe * (target / 1000.0) / probe_ms));

    timing::TimingOptions options_100;
    for (int k = 0; k < 5; ++k) {
      std::vector<double> means;
      int hidden = 0;  // trials flagged as leaving work on another stream: none should be
      for (int run = 0; run < 5; ++run) {
        const auto m = timing::measure([&] { bench.launch(kNames[k], iters[k]); }, options_100);
        means.push_back(m.stats.mean);
        hidden += m.hidden_work_trials;
      }
      const auto [lo, hi] = std::minmax_element(means.begin(), means.end());
      double mean = 0;
      for (double m : means) mean += m / means.size();
      std::printf("%s\n", nlohmann::json{{"kernel", kNames[k]}, {"iters", iters[k]}, {"target_us", kTargetUs[k]},
                                         {"run_means_ms", means}, {"mean_ms", mean},
                                         {"spread_pct", 100.0 * (*hi - *lo) / mean},
                                         {"hidden_work_trials", hidden}}
                              .dump()
                              .c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbench_timer_bench: %s\n", e.what());
    return 1;
  }
}
