// Level 2 problem 14: matmul -> / 2 -> sum over features (keepdim) -> * 1.5.
//   x [1024, 8192], W [8192 (hidden), 8192 (input)] -> out[b] = 1.5 * sum_j (x[b] . W[j]) / 2,
//   shape [1024, 1].
// The sum over the hidden dimension can move inside the product:
//   sum_j x[b] . W[j] = x[b] . (sum_j W[j]) = x[b] . w_sum,
// so the 137-GFLOP matrix product collapses into one column sum of W (a single 256 MiB read) and a
// matrix-vector product with x (32 MiB). Dividing by 2 is exact in floating point, so it can be
// applied after the sum. Both steps are memory-bound kernels of ours; the result differs from the
// reference only by summation order, and this should be tens of times faster than eager.

#define THREADS 256
#define ROWS_PER_CHUNK 64

// w_sum[k] += sum of W[j, k] over one chunk of ROWS_PER_CHUNK rows j. Each thread owns four adjacent
// columns (a float4; K % 4 == 0), so every row step is a coalesced 4 KiB read per block;
// blockIdx.y picks the row chunk, and the chunks' partial sums meet in float atomics (w_sum zeroed).
extern "C" __global__ void __launch_bounds__(THREADS)
column_sum(const float* __restrict__ W, float* __restrict__ w_sum, int rows, int K4) {
  const int k4 = blockIdx.x * THREADS + threadIdx.x;
  if (k4 >= K4) return;
  const int r0 = blockIdx.y * ROWS_PER_CHUNK;
  const int r1 = min(rows, r0 + ROWS_PER_CHUNK);
  const float4* w4 = reinterpret_cast<const float4*>(W);
  float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 8
  for (int r = r0; r < r1; ++r) {
    const float4 v = __ldg(&w4[(long long)r * K4 + k4]);
    s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
  }
  atomicAdd(&w_sum[4 * k4 + 0], s.x);
  atomicAdd(&w_sum[4 * k4 + 1], s.y);
  atomicAdd(&w_sum[4 * k4 + 2], s.z);
  atomicAdd(&w_sum[4 * k4 + 3], s.w);
}

// out[b] = (x[b] . w_sum) / 2 * scale: one block per row, float4 loads, warp-shuffle block reduction.
extern "C" __global__ void __launch_bounds__(THREADS)
row_dot_scale(const float* __restrict__ x, const float* __restrict__ w_sum, float* __restrict__ out,
              int K4, float scale) {
  __shared__ float s_warp[THREADS / 32];
  const float4* xr = reinterpret_cast<const float4*>(x) + (long long)blockIdx.x * K4;
  const float4* w4 = reinterpret_cast<const float4*>(w_sum);
  float acc = 0.0f;
  for (int k = threadIdx.x; k < K4; k += THREADS) {
    const float4 a = __ldg(&xr[k]), w = __ldg(&w4[k]);
    acc = fmaf(a.x, w.x, acc); acc = fmaf(a.y, w.y, acc);
    acc = fmaf(a.z, w.z, acc); acc = fmaf(a.w, w.w, acc);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < THREADS / 32 ? s_warp[threadIdx.x] : 0.0f;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (threadIdx.x == 0) out[blockIdx.x] = (acc / 2.0f) * scale;
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    w = params["weight"]  # [hidden, input]
    hidden = w.size(0)
    K = w.size(1)
    assert K % 4 == 0
    K4 = K // 4
    w_sum = torch.zeros([K], dtype=torch.float32, device=x.device)
    kbench.launch("column_sum", [(K4 + 255) // 256, (hidden + 63) // 64], [256], (w, w_sum, hidden, K4))
    B = x.size(0)
    out = torch.empty([B, 1], dtype=torch.float32, device=x.device)
    kbench.launch("row_dot_scale", [B], [256], (x, w_sum, out, K4, 1.5))
    return out
*/
