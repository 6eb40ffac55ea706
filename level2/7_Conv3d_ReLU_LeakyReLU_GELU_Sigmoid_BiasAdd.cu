// Level 2 problem 7: Conv3d -> ReLU -> LeakyReLU(0.01) -> GELU -> sigmoid -> + bias.
//   x [64, 8, 32, 64, 64] -> conv 3x3x3 (8 -> 32) -> [64, 32, 30, 62, 62] (~0.9 GiB),
//   then the activation chain and a per-channel bias[C, 1, 1, 1].
// One kernel: the convolution as an implicit GEMM (below) whose epilogue adds the conv bias and
// applies all five elementwise steps as it stores, so the output is written once, where eager makes
// six passes over cuDNN's convolution output. The convolution (102 GFLOP) is most of the time; it
// accumulates with fp32 FMAs, and this SIMT kernel is slower than cuDNN's: expect below eager speed.
// With 32 output channels a block's tile is 32 channels x 128 voxels.

#define THREADS 256  // 16 x 16 threads, each owning a (BM / 16) x (BN / 16) block of the output tile
#define BK 8         // K slice per shared-memory stage
#define SMEM_PAD 4   // k-major tiles: padded rows keep the transposed stores conflict-free, float4 reads aligned

// The 3-D convolution (stride 1, no padding) as a GEMM: y[co][p] = sum_k Wt[co][k] * X[k][p], with p
// an output voxel (image, od, oh, ow) and k = (kd, kh, kw, ci), tap-major. Wt is the weight permuted
// once by setup() to [COUT][KD][KH][KW][CIN], a row-major [COUT, K] matrix. X is never built: its
// elements, X[k][p] = x[image][ci][od + kd][oh + kh][ow + kw], are gathered from x as a tile is
// loaded. With CIN a multiple of BK, every K slice lies within one tap, so a slice's gather is one
// offset per voxel plus ci * D * H * W.
// A block computes BM output channels x BN voxels; blockIdx.x walks the voxels. Each K slice is staged
// k-major in shared memory, double-buffered with the next slice's global loads in flight in registers
// while the current one is multiplied. Thread (ty, tx) accumulates channels ty*TM .. ty*TM+TM-1 and
// TN/4 float4 voxel groups tx*4 + 64*g: consecutive tx read consecutive float4s of a B row (no bank
// conflicts) and store consecutive voxels of y.
template <int BM, int BN, class Epilogue>
__device__ __forceinline__ void conv3d_igemm(const float* __restrict__ x, const float* __restrict__ wt,
                                             float* __restrict__ y, int batch, int CIN, int D, int H, int W,
                                             int COUT, int KD, int KH, int KW, Epilogue epi) {
  constexpr int TM = BM / 16, TN = BN / 16;
  constexpr int LA = BM * BK / THREADS;  // consecutive k of one weight row each thread loads per slice
  constexpr int LB = BN * BK / THREADS;  // k rows of one voxel column each thread gathers per slice
  static_assert(BM % 32 == 0 && BN % 64 == 0 && THREADS % BN == 0, "tile shape");
  __shared__ __align__(16) float As[2][BK][BM + SMEM_PAD];
  __shared__ __align__(16) float Bs[2][BK][BN + SMEM_PAD];

  const int OD = D - KD + 1, OH = H - KH + 1, OW = W - KW + 1, OHW = OH * OW, ODHW = OD * OHW;
  const int HW = H * W, DHW = D * HW;
  const int P = batch * ODHW, K = KD * KH * KW * CIN;
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;

  // Weights: LA consecutive k of one output channel's row (rows past COUT load as 0).
  const int a_row = tid / (BK / LA), a_k = tid % (BK / LA) * LA;
  const bool a_in = m0 + a_row < COUT;
  const float* a_src = wt + (long long)(a_in ? m0 + a_row : 0) * K + a_k;
  // Input: one voxel per thread, k rows b_k, b_k + THREADS / BN, ... of it: for each k, consecutive
  // threads read consecutive voxels of a row of x (voxels past P load as 0).
  const int b_col = tid % BN, b_k = tid / BN;
  const int p = n0 + b_col;
  const bool b_in = p < P;
  const int img = b_in ? p / ODHW : 0, q = b_in ? p % ODHW : 0;
  const int od = q / OHW, oh = q % OHW / OW, ow = q % OW;
  const float* b_src = x + ((long long)img * CIN + b_k) * DHW + (od * H + oh) * W + ow;
  float a_reg[LA], b_reg[LB];
  auto load = [&](int k0) {
    const int tap = k0 / CIN, ci0 = k0 - tap * CIN;  // the slice's tap and its first channel
    const int kd = tap / (KH * KW), kh = tap / KW % KH, kw = tap % KW;
#pragma unroll
    for (int i = 0; i < LA; ++i) a_reg[i] = a_in ? __ldg(a_src + k0 + i) : 0.0f;
    const float* src = b_src + (long long)ci0 * DHW + (kd * H + kh) * W + kw;
#pragma unroll
    for (int r = 0; r < LB; ++r) b_reg[r] = b_in ? __ldg(src + (long long)r * (THREADS / BN) * DHW) : 0.0f;
  };
  auto store = [&](int stage) {
#pragma unroll
    for (int i = 0; i < LA; ++i) As[stage][a_k + i][a_row] = a_reg[i];
#pragma unroll
    for (int r = 0; r < LB; ++r) Bs[stage][b_k + r * (THREADS / BN)][b_col] = b_reg[r];
  };

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  const int slices = K / BK;
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

  // y[image][co][od][oh][ow]: one voxel's channels are ODHW apart.
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int pj = n0 + 64 * (j / 4) + 4 * tx + j % 4;
    if (pj >= P) continue;
    const int imgj = pj / ODHW;
    float* dst = y + (long long)imgj * COUT * ODHW + (pj - imgj * ODHW);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int co = m0 + ty * TM + i;
      if (co < COUT) dst[(long long)co * ODHW] = epi(acc[i][j], co);
    }
  }
}

__device__ __forceinline__ float epilogue(float v, float conv_bias, float bias) {
  v = fmaxf(v + conv_bias, 0.0f);                       // conv bias, ReLU
  v = v >= 0.0f ? v : 0.01f * v;                        // LeakyReLU (a no-op after ReLU, kept for fidelity)
  v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));  // exact (erf) GELU, F.gelu's default
  v = 1.0f / (1.0f + expf(-v));                         // sigmoid
  return v + bias;
}

extern "C" __global__ void __launch_bounds__(THREADS)
conv3d_act_chain(const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ conv_bias,
                 const float* __restrict__ bias, float* __restrict__ y, int batch, int CIN, int D, int H, int W,
                 int COUT, int KD, int KH, int KW) {
  conv3d_igemm<32, 128>(x, wt, y, batch, CIN, D, H, W, COUT, KD, KH, KW,
                        [=](float v, int co) { return epilogue(v, __ldg(&conv_bias[co]), __ldg(&bias[co])); });
}

/* kbench:host
def setup(params: Dict[str, Tensor]) -> Dict[str, Tensor]:
    # [COUT, CIN, KD, KH, KW] -> [COUT, KD, KH, KW, CIN]: the implicit GEMM's K runs tap-major (a copy, once).
    params["conv.weight_odhwi"] = params["conv.weight"].permute(0, 2, 3, 4, 1).contiguous()
    return params

def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    w = params["conv.weight_odhwi"]
    N = x.size(0)
    CIN = x.size(1)
    D = x.size(2)
    H = x.size(3)
    W = x.size(4)
    COUT = w.size(0)
    KD = w.size(1)
    KH = w.size(2)
    KW = w.size(3)
    assert CIN % 8 == 0, "a K slice (8 channels) must lie within one tap"
    OD = D - KD + 1
    OH = H - KH + 1
    OW = W - KW + 1
    y = torch.empty([N, COUT, OD, OH, OW], dtype=torch.float32, device=x.device)
    P = N * OD * OH * OW
    kbench.launch("conv3d_act_chain", [(P + 127) // 128, (COUT + 31) // 32], [256],
                  (x, w, params["conv.bias"], params["bias"], y, N, CIN, D, H, W, COUT, KD, KH, KW))
    return y
*/
