// Level 3 problem 3: DeepNarrowMLP.
// Computes a 17-layer MLP on a [1024, 8192] batch: 16 hidden Linear(->1024) + ReLU layers, then
// Linear(1024 -> 8192).
// Each layer is one kernel: a shared-memory tiled fp32 GEMM whose epilogue adds the bias and applies
// the ReLU as it stores, where eager runs cuBLAS's addmm and then a separate ReLU pass. The GEMMs
// (67 GFLOP) are all of the time; they use plain fp32 FMAs (no TF32), as eager's do, and a SIMT
// kernel like this one is slower than cuBLAS's: expect below eager speed.

#define THREADS 256  // 16 x 16 threads, each owning a (BM / 16) x (BN / 16) block of the output tile
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

// One nn.Linear layer, y = act(x @ W^T + b), at two tile sizes (the host picks one per layer).
template <int BM, int BN>
__device__ __forceinline__ void linear_layer(const float* __restrict__ x, const float* __restrict__ w,
                                             const float* __restrict__ bias, float* __restrict__ y,
                                             int M, int N, int K, int relu) {
  gemm_xwt<BM, BN>(x, w, y, M, N, K, [=](float v, int n) {
    v += __ldg(&bias[n]);
    return relu ? fmaxf(v, 0.0f) : v;
  });
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
linear_128x128(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
               float* __restrict__ y, int M, int N, int K, int relu) {
  linear_layer<128, 128>(x, w, bias, y, M, N, K, relu);
}

// Four blocks per SM: with no minimum given, ptxas spills at 48 registers here.
extern "C" __global__ void __launch_bounds__(THREADS, 4)
linear_64x64(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
             float* __restrict__ y, int M, int N, int K, int relu) {
  linear_layer<64, 64>(x, w, bias, y, M, N, K, relu);
}

/* kbench:host
def linear(h: Tensor, w: Tensor, b: Tensor, relu: int) -> Tensor:
    # nn.Linear computes h @ w^T + b with w [N, K], read as it is stored.
    M = h.size(0)
    K = h.size(1)
    N = w.size(0)
    y = torch.empty([M, N], dtype=torch.float32, device=h.device)
    # 128x128 tiles where there are enough of them for two blocks on each SM of an H100 (132 SMs),
    # else 64x64 tiles: four times as many blocks for the small batch (M = 128) or narrow (N = 1024) layers.
    if ((M + 127) // 128) * ((N + 127) // 128) >= 2 * 132:
        kbench.launch("linear_128x128", [(M + 127) // 128, (N + 127) // 128], [256], (h, w, b, y, M, N, K, relu))
    else:
        kbench.launch("linear_64x64", [(M + 63) // 64, (N + 63) // 64], [256], (h, w, b, y, M, N, K, relu))
    return y

def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    # nn.Sequential numbering: Linear layers at 0, 2, 4, ... (ReLUs between them hold no params).
    num_hidden = 16
    h = x.contiguous()
    for i in range(num_hidden):
        k = str(2 * i)
        h = linear(h, params["network." + k + ".weight"], params["network." + k + ".bias"], 1)
    k = str(2 * num_hidden)
    return linear(h, params["network." + k + ".weight"], params["network." + k + ".bias"], 0)
*/
