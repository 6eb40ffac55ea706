// Level 2 problem 1: Conv2d -> ReLU -> + bias.
//   x [128, 64, 128, 128] -> conv 3x3 (64 -> 128, with its own bias) -> ReLU -> + bias[C, 1, 1]
// One kernel: the convolution as an implicit GEMM (below) whose epilogue adds the conv bias, applies
// the ReLU and adds the second bias as it stores, so the 1 GiB output is written once. Eager runs
// cuDNN's convolution and then a ReLU pass and a bias-add pass over that output. The convolution
// (300 GFLOP) is all of the time; it accumulates with fp32 FMAs, and this SIMT kernel is slower than
// cuDNN's: expect below eager speed.

#define THREADS 256  // 16 x 16 threads, each owning a (BM / 16) x (BN / 16) block of the output tile
#define BK 8         // K slice per shared-memory stage
#define SMEM_PAD 4   // k-major tiles: padded rows keep the transposed stores conflict-free, float4 reads aligned

// The convolution (stride 1, no padding) as a GEMM: y[co][p] = sum_k Wt[co][k] * X[k][p], with p an
// output pixel (image, oh, ow) and k = (kh, kw, ci), tap-major. Wt is the weight permuted once by
// setup() to [COUT][KH][KW][CIN], a row-major [COUT, K] matrix. X is never built: its elements,
// X[k][p] = x[image][ci][oh + kh][ow + kw], are gathered from x as a tile is loaded. With CIN a
// multiple of BK, every K slice lies within one tap, so a slice's gather is one offset per pixel plus
// ci * H * W.
// A block computes BM output channels x BN pixels; blockIdx.x walks the pixels. Each K slice is staged
// k-major in shared memory, double-buffered with the next slice's global loads in flight in registers
// while the current one is multiplied. Thread (ty, tx) accumulates channels ty*TM .. ty*TM+TM-1 and
// TN/4 float4 pixel groups tx*4 + 64*g: consecutive tx read consecutive float4s of a B row (no bank
// conflicts) and store consecutive pixels of y.
template <int BM, int BN, class Epilogue>
__device__ __forceinline__ void conv2d_igemm(const float* __restrict__ x, const float* __restrict__ wt,
                                             float* __restrict__ y, int batch, int CIN, int H, int W, int COUT,
                                             int KH, int KW, Epilogue epi) {
  constexpr int TM = BM / 16, TN = BN / 16;
  constexpr int LA = BM * BK / THREADS;  // consecutive k of one weight row each thread loads per slice
  constexpr int LB = BN * BK / THREADS;  // k rows of one pixel column each thread gathers per slice
  static_assert(BM % 32 == 0 && BN % 64 == 0 && THREADS % BN == 0, "tile shape");
  __shared__ __align__(16) float As[2][BK][BM + SMEM_PAD];
  __shared__ __align__(16) float Bs[2][BK][BN + SMEM_PAD];

  const int OH = H - KH + 1, OW = W - KW + 1, OHW = OH * OW, HW = H * W;
  const int P = batch * OHW, K = KH * KW * CIN;
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int n0 = blockIdx.x * BN, m0 = blockIdx.y * BM;

  // Weights: LA consecutive k of one output channel's row (rows past COUT load as 0).
  const int a_row = tid / (BK / LA), a_k = tid % (BK / LA) * LA;
  const bool a_in = m0 + a_row < COUT;
  const float* a_src = wt + (long long)(a_in ? m0 + a_row : 0) * K + a_k;
  // Input: one pixel per thread, k rows b_k, b_k + THREADS / BN, ... of it: for each k, consecutive
  // threads read consecutive pixels of a row of x (pixels past P load as 0).
  const int b_col = tid % BN, b_k = tid / BN;
  const int p = n0 + b_col;
  const bool b_in = p < P;
  const int img = b_in ? p / OHW : 0, q = b_in ? p % OHW : 0;
  const float* b_src = x + ((long long)img * CIN + b_k) * HW + (q / OW) * W + q % OW;
  float a_reg[LA], b_reg[LB];
  auto load = [&](int k0) {
    const int tap = k0 / CIN, ci0 = k0 - tap * CIN;  // the slice's tap and its first channel
    const int kh = tap / KW, kw = tap - kh * KW;
#pragma unroll
    for (int i = 0; i < LA; ++i) a_reg[i] = a_in ? __ldg(a_src + k0 + i) : 0.0f;
    const float* src = b_src + (long long)ci0 * HW + kh * W + kw;
#pragma unroll
    for (int r = 0; r < LB; ++r) b_reg[r] = b_in ? __ldg(src + (long long)r * (THREADS / BN) * HW) : 0.0f;
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

  // y[image][co][oh][ow]: one pixel's channels are OHW apart.
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int pj = n0 + 64 * (j / 4) + 4 * tx + j % 4;
    if (pj >= P) continue;
    const int imgj = pj / OHW;
    float* dst = y + (long long)imgj * COUT * OHW + (pj - imgj * OHW);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int co = m0 + ty * TM + i;
      if (co < COUT) dst[(long long)co * OHW] = epi(acc[i][j], co);
    }
  }
}

__device__ __forceinline__ float epilogue(float v, float conv_bias, float bias) {
  return fmaxf(v + conv_bias, 0.0f) + bias;
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
conv_relu_bias(const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ conv_bias,
               const float* __restrict__ bias, float* __restrict__ y, int batch, int CIN, int H, int W, int COUT,
               int KH, int KW) {
  conv2d_igemm<128, 128>(x, wt, y, batch, CIN, H, W, COUT, KH, KW,
                         [=](float v, int co) { return epilogue(v, __ldg(&conv_bias[co]), __ldg(&bias[co])); });
}

/* kbench:host
def setup(params: Dict[str, Tensor]) -> Dict[str, Tensor]:
    # [COUT, CIN, KH, KW] -> [COUT, KH, KW, CIN]: the implicit GEMM's K runs tap-major (a copy, once).
    params["conv.weight_ohwi"] = params["conv.weight"].permute(0, 2, 3, 1).contiguous()
    return params

def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    w = params["conv.weight_ohwi"]
    N = x.size(0)
    CIN = x.size(1)
    H = x.size(2)
    W = x.size(3)
    COUT = w.size(0)
    KH = w.size(1)
    KW = w.size(2)
    assert CIN % 8 == 0, "a K slice (8 channels) must lie within one tap"
    OH = H - KH + 1
    OW = W - KW + 1
    y = torch.empty([N, COUT, OH, OW], dtype=torch.float32, device=x.device)
    P = N * OH * OW
    kbench.launch("conv_relu_bias", [(P + 127) // 128, (COUT + 127) // 128], [256],
                  (x, w, params["conv.bias"], params["bias"], y, N, CIN, H, W, COUT, KH, KW))
    return y
*/
