// Level 3 problem 13: DenseNet121 transition layer on x = [128, 32, 256, 256].
//   BatchNorm2d(32) in training mode (batch statistics) -> ReLU -> 1x1 conv (32 -> 64, no bias)
//   -> AvgPool2d(2, 2)  => [128, 64, 128, 128]
// A 1x1 convolution mixes channels per pixel and average pooling averages pixels per channel: both
// are linear, so they commute, and pooling first is exact (up to rounding) and makes the
// convolution 4x smaller. The pipeline is:
//   1. bn_partial_stats: one pass over x, per-channel sums of (x - K) and (x - K)^2 (K = a sample of
//      the channel, which keeps E[d^2] - E[d]^2 well conditioned), block-reduced, then double atomics.
//   2. bn_finalize: per-channel scale = gamma / sqrt(var + eps) and shift = beta - mean * scale.
//   3. bn_relu_avgpool: second pass over x, fused normalize + ReLU + 2x2 average, writing a 4x
//      smaller tensor.
//   4. torch.conv2d (cuDNN) for the 1x1 convolution on the pooled tensor.
// Eager mode moves about 10 GB (BN write, in-place ReLU, a 2 GB conv output, pooling over it); this
// moves about 3 GB, so it should be roughly 3x faster.

#define THREADS 256

// Sum of v over the block (all threads must call it); the result is valid in thread 0.
__device__ __forceinline__ float block_sum(float v, float* smem /* [THREADS / 32] */) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = threadIdx.x < THREADS / 32 ? smem[threadIdx.x] : 0.0f;
  if (warp == 0) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  }
  return v;
}

// One block per (n, c) plane of HW contiguous floats (HW % 4 == 0). acc[c] += sum(x - K_c),
// acc[C + c] += sum((x - K_c)^2), with K_c = x[0, c, 0, 0]. Float partials per thread/block
// (at most a few hundred values each), double across blocks.
extern "C" __global__ void __launch_bounds__(THREADS)
bn_partial_stats(const float* __restrict__ x, double* __restrict__ acc, int C, long long HW) {
  __shared__ float s_red[2][THREADS / 32];
  const long long plane = blockIdx.x;
  const int c = (int)(plane % C);
  const float K = __ldg(&x[(long long)c * HW]);
  const float4* p = reinterpret_cast<const float4*>(x + plane * HW);
  float s = 0.0f, ss = 0.0f;
  for (long long i = threadIdx.x; i < HW / 4; i += THREADS) {
    const float4 v = __ldg(&p[i]);
    const float d0 = v.x - K, d1 = v.y - K, d2 = v.z - K, d3 = v.w - K;
    s += (d0 + d1) + (d2 + d3);
    ss += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
  }
  s = block_sum(s, s_red[0]);
  ss = block_sum(ss, s_red[1]);
  if (threadIdx.x == 0) {
    atomicAdd(&acc[c], (double)s);
    atomicAdd(&acc[C + c], (double)ss);
  }
}

// Per channel: mean = K + E[d], biased var = E[d^2] - E[d]^2 (what training-mode BatchNorm
// normalizes with), folded with the affine parameters into y = x * scale + shift.
extern "C" __global__ void bn_finalize(const float* __restrict__ x, const double* __restrict__ acc,
                                       const float* __restrict__ gamma, const float* __restrict__ beta,
                                       float* __restrict__ scale, float* __restrict__ shift,
                                       int C, long long HW, long long count, float eps) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C) return;
  const double md = acc[c] / (double)count;
  const double var = fmax(acc[C + c] / (double)count - md * md, 0.0);
  const double mean = (double)x[(long long)c * HW] + md;
  const double sc = (double)gamma[c] / sqrt(var + (double)eps);
  scale[c] = (float)sc;
  shift[c] = (float)((double)beta[c] - mean * sc);
}

// z[n, c, i, j] = mean of ReLU(x * scale[c] + shift[c]) over the 2x2 window at (2i, 2j).
// Each thread makes two adjacent outputs from one float4 of each of the two input rows (W % 4 == 0).
extern "C" __global__ void __launch_bounds__(THREADS)
bn_relu_avgpool(const float* __restrict__ x, const float* __restrict__ scale, const float* __restrict__ shift,
                float* __restrict__ z, int C, int H, int W, long long npairs) {
  const int Ho = H / 2, Wo = W / 2, qpr = W / 4;  // qpr: output pairs per output row
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < npairs; idx += stride) {
    const int q = (int)(idx % qpr);
    const long long rest = idx / qpr;
    const int i = (int)(rest % Ho);
    const long long plane = rest / Ho;
    const int c = (int)(plane % C);
    const float sc = __ldg(&scale[c]), sh = __ldg(&shift[c]);
    const float* r0 = x + plane * H * W + (long long)(2 * i) * W + 4 * q;
    const float4 a = __ldg(reinterpret_cast<const float4*>(r0));
    const float4 b = __ldg(reinterpret_cast<const float4*>(r0 + W));
    float2 o;
    o.x = 0.25f * ((fmaxf(fmaf(a.x, sc, sh), 0.0f) + fmaxf(fmaf(a.y, sc, sh), 0.0f)) +
                   (fmaxf(fmaf(b.x, sc, sh), 0.0f) + fmaxf(fmaf(b.y, sc, sh), 0.0f)));
    o.y = 0.25f * ((fmaxf(fmaf(a.z, sc, sh), 0.0f) + fmaxf(fmaf(a.w, sc, sh), 0.0f)) +
                   (fmaxf(fmaf(b.z, sc, sh), 0.0f) + fmaxf(fmaf(b.w, sc, sh), 0.0f)));
    *reinterpret_cast<float2*>(z + plane * Ho * Wo + (long long)i * Wo + 2 * q) = o;
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    N = x.size(0)
    C = x.size(1)
    H = x.size(2)
    W = x.size(3)
    assert W % 4 == 0 and H % 2 == 0
    HW = H * W
    acc = torch.zeros([2 * C], dtype=torch.float64, device=x.device)
    kbench.launch("bn_partial_stats", [N * C], [256], (x, acc, C, HW))

    scale = torch.empty([C], dtype=torch.float32, device=x.device)
    shift = torch.empty([C], dtype=torch.float32, device=x.device)
    kbench.launch("bn_finalize", [(C + 127) // 128], [128],
                  (x, acc, params["transition.0.weight"], params["transition.0.bias"], scale, shift,
                   C, HW, N * HW, 1e-5))

    z = torch.empty([N, C, H // 2, W // 2], dtype=torch.float32, device=x.device)
    npairs = N * C * (H // 2) * (W // 4)
    kbench.launch("bn_relu_avgpool", [min((npairs + 255) // 256, 132 * 16)], [256],
                  (x, scale, shift, z, C, H, W, npairs))
    return torch.conv2d(z, params["transition.2.weight"])
*/
