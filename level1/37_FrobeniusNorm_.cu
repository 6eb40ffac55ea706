// Level 1 problem 37 (Frobenius norm), x is fp32 [112, 64, 512, 512] (7 GiB):
//   y = x / sqrt(sum(x^2))
//
// Two kernels, because every output needs the norm of the whole tensor:
//   1. sum_sq_partials: a grid-stride float4 pass; each block writes one partial sum of squares.
//   2. scale_by_inv_norm: every block first sums the (about a thousand) partials itself, in
//      double, so no extra launch, atomic or memset is needed; then it streams x -> y.
// That is the minimum traffic (read, read + write), the same as eager's norm-then-divide, so this
// is expected to roughly tie PyTorch eager.

constexpr int THREADS = 256;
constexpr int ILP = 4;  // float4 loads in flight per thread

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

extern "C" __global__ void __launch_bounds__(THREADS)
sum_sq_partials(const float* __restrict__ x, float* __restrict__ partials, long long n) {
  const long long n4 = n / 4;
  const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
  const long long tile = (long long)THREADS * ILP;

  float acc = 0.0f;
  for (long long base = blockIdx.x * tile + threadIdx.x; base < n4; base += gridDim.x * tile) {
    float4 v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
      const long long i = base + (long long)k * THREADS;
      v[k] = i < n4 ? x4[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int k = 0; k < ILP; ++k) acc += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
  }
  const long long t = n4 * 4 + blockIdx.x * (long long)THREADS + threadIdx.x;  // n % 4 tail
  if (t < n) acc += x[t] * x[t];

  // Block reduction: shuffle within warps, then warp 0 over the warp sums.
  __shared__ float warp_sums[THREADS / 32];
  acc = warp_sum(acc);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = warp_sum(threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
scale_by_inv_norm(const float* __restrict__ x, float* __restrict__ y, long long n,
                  const float* __restrict__ partials, int num_partials) {
  // Total sum of squares; every block computes it redundantly (a few KiB from L2).
  __shared__ double warp_sums[THREADS / 32];
  __shared__ float inv_norm;
  double s = 0.0;
  for (int i = threadIdx.x; i < num_partials; i += THREADS) s += partials[i];
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int w = 0; w < THREADS / 32; ++w) total += warp_sums[w];
    inv_norm = (float)(1.0 / sqrt(total));
  }
  __syncthreads();
  const float scale = inv_norm;

  const long long n4 = n / 4;
  const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
  float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
  const long long tile = (long long)THREADS * ILP;
  for (long long base = blockIdx.x * tile + threadIdx.x; base < n4; base += gridDim.x * tile) {
    float4 v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
      const long long i = base + (long long)k * THREADS;
      if (i < n4) v[k] = x4[i];
    }
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
      const long long i = base + (long long)k * THREADS;
      if (i < n4) y4[i] = make_float4(v[k].x * scale, v[k].y * scale, v[k].z * scale, v[k].w * scale);
    }
  }
  const long long t = n4 * 4 + blockIdx.x * (long long)THREADS + threadIdx.x;
  if (t < n) y[t] = x[t] * scale;
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    n = x.numel()
    # About one wave of 256-thread blocks on an H100's 132 SMs; grid-stride loops do the rest.
    blocks = max(1, min((n // 4 + 1023) // 1024, 132 * 8))
    partials = torch.empty([blocks], dtype=torch.float32, device=x.device)
    kbench.launch("sum_sq_partials", [blocks], [256], (x, partials, n))
    y = torch.empty_like(x)
    kbench.launch("scale_by_inv_norm", [blocks], [256], (x, y, n, partials, blocks))
    return y
*/
