// Level 1 problem 100 (hinge loss), predictions fp32 [32768, 32768] (4 GiB), targets fp32 [32768]
// of +-1, broadcast along the last dim (targets[j] applies to column j of every row):
//   loss = mean(max(0, 1 - predictions[i, j] * targets[j])), a 0-dim tensor
//
// PyTorch eager runs mul, rsub, clamp and mean as four kernels with 4 GiB temporaries in between:
// seven passes of 4 GiB. Here one pass reads predictions once. Blocks take whole rows (so the
// column of every float4 is known without a 64-bit modulo) and threads stride along the row;
// predictions are streamed with evict-first loads while the 128 KiB targets vector, reread for
// every row, stays in cache. Each block writes one partial sum; a one-block kernel adds the
// partials in double and divides by the element count.

constexpr int THREADS = 256;

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

__device__ __forceinline__ float hinge(float p, float t) { return fmaxf(1.0f - p * t, 0.0f); }

// Requires cols % 4 == 0 (rows are whole float4s).
extern "C" __global__ void __launch_bounds__(THREADS)
hinge_partials(const float* __restrict__ pred, const float* __restrict__ targ, float* __restrict__ partials,
               long long rows, int cols) {
  const int cols4 = cols / 4;
  const float4* __restrict__ t4 = reinterpret_cast<const float4*>(targ);

  float acc = 0.0f;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float4* __restrict__ row = reinterpret_cast<const float4*>(pred + r * cols);
#pragma unroll 4
    for (int c = threadIdx.x; c < cols4; c += THREADS) {
      const float4 p = __ldcs(row + c);  // read once: don't let it evict targets
      const float4 t = __ldg(t4 + c);
      acc += hinge(p.x, t.x) + hinge(p.y, t.y) + hinge(p.z, t.z) + hinge(p.w, t.w);
    }
  }

  __shared__ float warp_sums[THREADS / 32];
  acc = warp_sum(acc);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = warp_sum(threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) partials[blockIdx.x] = acc;
  }
}

// One block: out[0] = sum(partials) / n, summed in double.
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
    out[0] = (float)(total / (double)n);
  }
}

/* kbench:host
def forward(predictions: Tensor, targets: Tensor, params: Dict[str, Tensor]) -> Tensor:
    p = predictions.contiguous()
    t = targets.contiguous()
    cols = p.size(-1)
    rows = p.numel() // cols
    assert t.numel() == cols and cols % 4 == 0, "targets broadcast along the last dim, in whole float4s"
    # 1024 blocks of 256 threads: about one wave on an H100's 132 SMs, and 32768 rows split evenly.
    blocks = max(1, min(rows, 1024))
    partials = torch.empty([blocks], dtype=torch.float32, device=p.device)
    scalar_shape: List[int] = []  # the loss is a 0-dim tensor, like torch.mean's
    out = torch.empty(scalar_shape, dtype=torch.float32, device=p.device)
    kbench.launch("hinge_partials", [blocks], [256], (p, t, partials, rows, cols))
    kbench.launch("finish_mean", [1], [1024], (partials, blocks, out, p.numel()))
    return out
*/
