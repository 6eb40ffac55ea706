// Level 2 problem 56: Linear -> sigmoid -> sum over features (keepdim).
//   x [128, 32768] -> Linear(32768 -> 32768) -> out[b] = sum_j sigmoid(y[b, j] + bias[j]), [128, 1]
// Two kernels: a shared-memory tiled fp32 GEMM writes the product y = x @ W^T (16 MiB), then bias,
// sigmoid and the row sum are one kernel that reads y once and writes 128 floats, where eager runs
// addmm (bias inside the GEMM), a sigmoid pass that writes a full-size tensor, then the sum. The GEMM
// (275 GFLOP, 4 GiB of weights) is all of the time; it uses plain fp32 FMAs (no TF32), as eager's
// does, and a SIMT kernel like this one is slower than cuBLAS's: expect below eager speed.

#define THREADS 256  // all kernels; the GEMM's as 16 x 16 threads, each owning a (BM / 16) x (BN / 16) tile
#define BK 8         // K slice per shared-memory stage
#define SMEM_PAD 4   // k-major tiles: padded rows keep the transposed stores conflict-free, float4 reads aligned

// y = epi(x @ W^T, column) for x [M, K] and W [N, K], both row-major (nn.Linear's layout, no transpose).
// A block computes a BM x BN tile of y; blockIdx.x walks M so that the blocks resident together share
// W's tile through L2. Each K slice of both operands is staged transposed (k-major) in shared memory,
// double-buffered with the next slice's global loads in flight in registers while the current one is
// multiplied. Thread (ty, tx) accumulates rows ty*TM .. ty*TM+TM-1 and TN/4 float4 column groups
// tx*4 + 64*g: consecutive tx read consecutive float4s of a B row (no bank conflicts) and store
// consecutive columns of y.
template <int BM, int BN, class Epilogue>
__device__ __forceinline__ void gemm_xwt(const float* __restrict__ x, const float* __restrict__ w,
                                         float* __restrict__ y, int M, int N, int K, Epilogue epi) {
  constexpr int TM = BM / 16, TN = BN / 16;
  constexpr int LA = BM * BK / THREADS, LB = BN * BK / THREADS;  // consecutive k each thread loads per slice
  static_assert(BM % 32 == 0 && BN % 64 == 0, "TN must be whole float4 groups, LA at least 1");
  __shared__ __align__(16) float As[2][BK][BM + SMEM_PAD];
  __shared__ __align__(16) float Bs[2][BK][BN + SMEM_PAD];

  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;

  // Global loads: thread takes LA (LB) consecutive k of one row, so a warp reads whole 32-byte
  // sectors. Rows past M (N) and k past K load as 0.
  const int a_row = tid / (BK / LA), a_k = tid % (BK / LA) * LA;
  const int b_row = tid / (BK / LB), b_k = tid % (BK / LB) * LB;
  const bool a_in = m0 + a_row < M, b_in = n0 + b_row < N;
  const float* a_src = x + (long long)(a_in ? m0 + a_row : 0) * K + a_k;
  const float* b_src = w + (long long)(b_in ? n0 + b_row : 0) * K + b_k;
  float a_reg[LA], b_reg[LB];
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < LA; ++i) a_reg[i] = a_in && k0 + a_k + i < K ? __ldg(a_src + k0 + i) : 0.0f;
#pragma unroll
    for (int i = 0; i < LB; ++i) b_reg[i] = b_in && k0 + b_k + i < K ? __ldg(b_src + k0 + i) : 0.0f;
  };
  auto store = [&](int stage) {
#pragma unroll
    for (int i = 0; i < LA; ++i) As[stage][a_k + i][a_row] = a_reg[i];
#pragma unroll
    for (int i = 0; i < LB; ++i) Bs[stage][b_k + i][b_row] = b_reg[i];
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  const int slices = (K + BK - 1) / BK;
  load(0);
  store(0);
  __syncthreads();
  for (int t = 0; t < slices; ++t) {
    const int s = t & 1;
    if (t + 1 < slices) load((t + 1) * BK);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[s][k][ty * TM + i];  // two rows per warp: broadcasts
#pragma unroll
      for (int g = 0; g < TN / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[s][k][64 * g + 4 * tx]);
        b[4 * g] = v.x; b[4 * g + 1] = v.y; b[4 * g + 2] = v.z; b[4 * g + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    // The other stage was last read before the previous barrier: it can take the next slice now.
    if (t + 1 < slices) store(s ^ 1);
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + ty * TM + i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + 64 * (j / 4) + 4 * tx + j % 4;
      if (n < N) y[(long long)m * N + n] = epi(acc[i][j], n);
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
linear_nobias(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M, int N, int K) {
  gemm_xwt<128, 128>(x, w, y, M, N, K, [](float v, int) { return v; });
}

// One block per row: float4 loads of the row and the bias, per-thread partial sums, then a
// warp-shuffle tree and one shared-memory step across the block's warps.
extern "C" __global__ void __launch_bounds__(THREADS)
bias_sigmoid_rowsum(const float* __restrict__ y, const float* __restrict__ bias, float* __restrict__ out,
                    int cols4) {
  __shared__ float s_warp[THREADS / 32];
  const float4* row = reinterpret_cast<const float4*>(y) + (long long)blockIdx.x * cols4;
  const float4* b4 = reinterpret_cast<const float4*>(bias);
  float acc = 0.0f;
  for (int j = threadIdx.x; j < cols4; j += THREADS) {
    const float4 v = __ldg(&row[j]), b = __ldg(&b4[j]);
    acc += 1.0f / (1.0f + expf(-(v.x + b.x)));
    acc += 1.0f / (1.0f + expf(-(v.y + b.y)));
    acc += 1.0f / (1.0f + expf(-(v.z + b.z)));
    acc += 1.0f / (1.0f + expf(-(v.w + b.w)));
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < THREADS / 32 ? s_warp[threadIdx.x] : 0.0f;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    w = params["linear.weight"]  # [N, K]: nn.Linear computes x @ w^T, bias added below
    M = x.size(0)
    K = x.size(1)
    N = w.size(0)
    assert N % 4 == 0
    y = torch.empty([M, N], dtype=torch.float32, device=x.device)
    kbench.launch("linear_nobias", [(M + 127) // 128, (N + 127) // 128], [256], (x, w, y, M, N, K))
    out = torch.empty([M, 1], dtype=torch.float32, device=x.device)
    kbench.launch("bias_sigmoid_rowsum", [M], [256], (y, params["linear.bias"], out, N // 4))
    return out
*/
