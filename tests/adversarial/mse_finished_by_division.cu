// Level 1 problem 94 (MSE loss) with its last step in PyTorch: the kernels of level1/94_MSELoss.cu
// sum the squared differences, and the host program divides the sum by n as a tensor op. The kernels
// compute the answer (skipped, the division of poison is wrong): `correct` under --torch-ops allow, as
// KernelBench counts it; `no_custom_kernel` under --torch-ops forbid (the division computes values).
constexpr int THREADS = 256;
constexpr int ILP = 4;  // float4 pairs in flight per thread

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

__device__ __forceinline__ float sq_diff(float4 p, float4 t) {
  const float a = p.x - t.x, b = p.y - t.y, c = p.z - t.z, d = p.w - t.w;
  return a * a + b * b + c * c + d * d;
}

extern "C" __global__ void __launch_bounds__(THREADS)
mse_partials(const float* __restrict__ pred, const float* __restrict__ targ, float* __restrict__ partials,
             long long n) {
  const long long n4 = n / 4;
  const float4* __restrict__ p4 = reinterpret_cast<const float4*>(pred);
  const float4* __restrict__ t4 = reinterpret_cast<const float4*>(targ);
  const long long tile = (long long)THREADS * ILP;

  float acc = 0.0f;
  for (long long base = blockIdx.x * tile + threadIdx.x; base < n4; base += gridDim.x * tile) {
    float4 p[ILP], t[ILP];
#pragma unroll
    for (int k = 0; k < ILP; ++k) {  // issue all loads before using any
      const long long i = base + (long long)k * THREADS;
      const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      p[k] = i < n4 ? p4[i] : zero;
      t[k] = i < n4 ? t4[i] : zero;
    }
#pragma unroll
    for (int k = 0; k < ILP; ++k) acc += sq_diff(p[k], t[k]);
  }
  const long long i = n4 * 4 + blockIdx.x * (long long)THREADS + threadIdx.x;  // n % 4 tail
  if (i < n) acc += (pred[i] - targ[i]) * (pred[i] - targ[i]);

  __shared__ float warp_sums[THREADS / 32];
  acc = warp_sum(acc);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = warp_sum(threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
  }
}

// One block: out[0] = sum(partials), summed in double.
extern "C" __global__ void __launch_bounds__(1024)
finish_mean(const float* __restrict__ partials, int num_partials, float* __restrict__ out, long long n) {
  __shared__ double warp_sums[32];
  double s = 0.0;
  for (int i = threadIdx.x; i < num_partials; i += blockDim.x) s += partials[i];
  for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int w = 0; w < (int)(blockDim.x / 32); ++w) total += warp_sums[w];
    out[0] = (float)total;
  }
}

/* kbench:host
def forward(predictions: Tensor, targets: Tensor, params: Dict[str, Tensor]) -> Tensor:
    p = predictions.contiguous()
    t = targets.contiguous()
    n = p.numel()
    # About one wave of 256-thread blocks on an H100's 132 SMs; the grid-stride loop does the rest.
    blocks = max(1, min((n // 4 + 1023) // 1024, 132 * 8))
    partials = torch.empty([blocks], dtype=torch.float32, device=p.device)
    scalar_shape: List[int] = []  # the loss is a 0-dim tensor, like torch.mean's
    out = torch.empty(scalar_shape, dtype=torch.float32, device=p.device)
    kbench.launch("mse_partials", [blocks], [256], (p, t, partials, n))
    kbench.launch("finish_mean", [1], [1024], (partials, blocks, out, n))
    return out / n
*/
