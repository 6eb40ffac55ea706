// Level 1 problem 39 (L2 normalization over dim 1), x is fp32 [32768, 65535] (8 GiB):
//   y[r, j] = x[r, j] / sqrt(sum_j x[r, :]^2)
//
// PyTorch eager makes three passes over the tensor (the norm reads x, the division reads x and
// writes y). The row sum has to be known before any output, so the row must be read twice or kept
// on chip; a 256 KiB row is too big for one SM's shared memory, so a thread block cluster of 4
// CTAs (sm_90) owns each row, each keeping a quarter (64 KiB) in shared memory. The 4 partial
// sums are combined through distributed shared memory, and the outputs are written from shared
// memory: one read and one write of the tensor. 65535 columns make rows start at every 4-byte
// offset, so loads are scalar (still coalesced) rather than float4.

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

constexpr int CLUSTER = 4;    // CTAs per row
constexpr int THREADS = 512;  // three 64 KiB CTAs fit on an SM, so loads and stores of rows overlap
constexpr int UNROLL = 8;     // loads in flight per thread

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// grid = rows * CLUSTER CTAs; dynamic shared memory = chunk floats (the slice of each CTA).
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(THREADS)
l2_normalize_rows(const float* __restrict__ x, float* __restrict__ y, long long cols, int chunk) {
  extern __shared__ float slice[];
  __shared__ float warp_sums[THREADS / 32];
  __shared__ float cta_sum;  // read by the other CTAs of the cluster

  cg::cluster_group cluster = cg::this_cluster();
  const int rank = (int)cluster.block_rank();
  const long long row = blockIdx.x / CLUSTER;
  const long long begin = (long long)rank * chunk;
  const int len = begin < cols ? (int)(min(begin + chunk, cols) - begin) : 0;
  const float* __restrict__ src = x + row * cols + begin;
  float* __restrict__ dst = y + row * cols + begin;

  // Pass 1: HBM -> shared memory, summing x^2 on the way.
  float acc = 0.0f;
  for (int base = threadIdx.x; base < len; base += UNROLL * THREADS) {
    float v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {  // issue all loads before using any
      const int i = base + k * THREADS;
      v[k] = i < len ? src[i] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < UNROLL; ++k) {
      const int i = base + k * THREADS;
      if (i < len) slice[i] = v[k];
      acc = fmaf(v[k], v[k], acc);
    }
  }

  // CTA sum: shuffle within warps, then warp 0 over the warp sums.
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  acc = warp_sum(acc);
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = warp_sum(lane < THREADS / 32 ? warp_sums[lane] : 0.0f);
    if (lane == 0) cta_sum = acc;
  }

  // Row sum through distributed shared memory. The first sync publishes every CTA's cta_sum; the
  // second keeps each CTA (and its shared memory) alive until all have read it.
  cluster.sync();
  float row_sum = 0.0f;
  for (int r = 0; r < CLUSTER; ++r) row_sum += *cluster.map_shared_rank(&cta_sum, r);
  cluster.sync();

  // Pass 2: shared memory -> HBM.
  const float inv_norm = rsqrtf(row_sum);
  for (int i = threadIdx.x; i < len; i += THREADS) dst[i] = slice[i] * inv_norm;
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    rows = x.size(0)
    cols = x.size(1)
    cluster = 4
    chunk = (cols + cluster - 1) // cluster  # floats per CTA
    assert chunk * 4 <= 200 * 1024, "a row slice must fit in one CTA's shared memory"
    y = torch.empty_like(x)
    kbench.launch("l2_normalize_rows", [rows * cluster], [512], (x, y, cols, chunk), chunk * 4)
    return y
*/
