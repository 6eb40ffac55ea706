// Level 2 problem 32: Conv2d -> * scale (2.0) -> min over channels (keepdim).
//   x [64, 64, 256, 256] -> conv 3x3 (64 -> 128) -> [64, 128, 254, 254] (~2 GiB)
//   -> (y + conv_bias) * 2.0 -> min over dim 1 -> [64, 1, 254, 254].
// Two kernels: the convolution as an implicit GEMM (below) writes the conv output without its bias;
// then one kernel reads it once, applies bias and scale per element (in the reference's order, so
// rounding matches), keeps the running minimum over the 128 channels in registers and writes only
// the 128x smaller result. Eager runs cuDNN's convolution, two read+write passes over the 2 GiB
// output (conv bias add, scaling) and its min reduction. The convolution (609 GFLOP) is most of the
// time; it accumulates with fp32 FMAs, and this SIMT kernel is slower than cuDNN's: expect below
// eager speed.
//
// The reduction: each thread owns four adjacent pixels (a float4) of one image and walks the
// channels: at every channel step a warp reads 512 contiguous bytes, so the reduction over the
// strided channel axis is still fully coalesced. blockIdx.y walks the images.

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

extern "C" __global__ void __launch_bounds__(THREADS, 2)
conv2d_nobias(const float* __restrict__ x, const float* __restrict__ wt, float* __restrict__ y, int batch, int CIN,
              int H, int W, int COUT, int KH, int KW) {
  conv2d_igemm<128, 128>(x, wt, y, batch, CIN, H, W, COUT, KH, KW, [](float v, int) { return v; });
}

extern "C" __global__ void scale_channel_min(const float* __restrict__ y, const float* __restrict__ conv_bias,
                                             float* __restrict__ out, float scale, int N, int C, long long HW) {
  const long long HW4 = (HW % 4 == 0) ? HW / 4 : 0;  // float4 part (planes stay 16-byte aligned)
  const long long start = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long n = blockIdx.y; n < N; n += gridDim.y) {
    const float* img = y + n * C * HW;  // channel c of this image starts at img + c * HW
    float* o = out + n * HW;
    for (long long i = start; i < HW4; i += stride) {
      const float4* p = reinterpret_cast<const float4*>(img) + i;
      const float b0 = __ldg(&conv_bias[0]);
      float4 m = __ldg(p);
      m.x = (m.x + b0) * scale; m.y = (m.y + b0) * scale;
      m.z = (m.z + b0) * scale; m.w = (m.w + b0) * scale;
#pragma unroll 8  // independent loads: keep several in flight per thread
      for (int c = 1; c < C; ++c) {
        const float4 v = __ldg(p + c * HW4);
        const float b = __ldg(&conv_bias[c]);  // same address across the warp: a broadcast
        m.x = fminf(m.x, (v.x + b) * scale); m.y = fminf(m.y, (v.y + b) * scale);
        m.z = fminf(m.z, (v.z + b) * scale); m.w = fminf(m.w, (v.w + b) * scale);
      }
      reinterpret_cast<float4*>(o)[i] = m;
    }
    for (long long i = 4 * HW4 + start; i < HW; i += stride) {  // scalar path when HW % 4 != 0
      float m = (__ldg(&img[i]) + __ldg(&conv_bias[0])) * scale;
      for (int c = 1; c < C; ++c) m = fminf(m, (__ldg(&img[c * HW + i]) + __ldg(&conv_bias[c])) * scale);
      o[i] = m;
    }
  }
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
    C = w.size(0)
    KH = w.size(1)
    KW = w.size(2)
    assert CIN % 8 == 0, "a K slice (8 channels) must lie within one tap"
    OH = H - KH + 1
    OW = W - KW + 1
    y = torch.empty([N, C, OH, OW], dtype=torch.float32, device=x.device)  # no bias: it is added inside the reduction
    kbench.launch("conv2d_nobias", [(N * OH * OW + 127) // 128, (C + 127) // 128], [256],
                  (x, w, y, N, CIN, H, W, C, KH, KW))
    HW = OH * OW
    out = torch.empty([N, 1, OH, OW], dtype=torch.float32, device=x.device)
    blocks_x = (HW + 1023) // 1024  # one float4 (4 pixels) per thread
    kbench.launch("scale_channel_min", [blocks_x, min(N, 65535)], [256],
                  (y, params["conv.bias"], out, 2.0, N, C, HW))
    return out
*/
