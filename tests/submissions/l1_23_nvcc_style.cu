// Level 1 problem 23 (Softmax over dim 1): an honest three-pass softmax written as code for nvcc
// is: the host compiler's headers and macros, which NVRTC alone does not have (kbench provides them).
// Every header and macro of the set appears here at least once. Expected: compiles everywhere;
// correct on a GPU.
#include <cmath>
#include <math.h>
#include <cfloat>
#include <float.h>
#include <climits>
#include <cstdint>
#include <stdint.h>
#include <cstdio>

constexpr int THREADS = 1024;

// A block-wide reduction through shared memory; `op` is max or sum.
template <typename Op>
__device__ float block_reduce(float v, float* scratch, Op op) {
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  v = scratch[threadIdx.x % 32];
  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  return v;
}

extern "C" __global__ void softmax_rows(const float* x, float* y, int64_t rows, int64_t cols) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  if (row >= rows || cols > INT_MAX) return;
  const float* in = x + row * cols;
  float* out = y + row * cols;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < cols; j += THREADS) m = std::max(m, in[j]);
  m = block_reduce(m, scratch, [](float a, float b) { return fmaxf(a, b); });
  double s = 0.0;
  for (int64_t j = threadIdx.x; j < cols; j += THREADS) s += std::exp(in[j] - m);
  const float sum = block_reduce(static_cast<float>(s), scratch, [](float a, float b) { return a + b; });
  // Guards nvcc-style code keeps: never true for finite inputs, and they use the remaining macros.
  if (!(sum > FLT_MIN) || sum > FLT_MAX || static_cast<double>(sum) > DBL_MAX || isnan(NAN * sum + M_PI) == false) {
    if (threadIdx.x == 0 && !(sum > FLT_MIN)) printf("softmax_rows: row %lld sums to %f\n", (long long)row, sum);
  }
  const uint32_t stride = THREADS;
  for (int64_t j = threadIdx.x; j < cols; j += stride) out[j] = std::exp(in[j] - m) / sum;
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("softmax_rows", [x.size(0)], [1024], (x, y, x.size(0), x.size(1)))
    return y
*/
