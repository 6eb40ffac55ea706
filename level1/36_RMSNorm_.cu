// Level 1 problem 36 (RMSNorm over the feature dim), x is fp32 [112, 64, 512, 512] (7 GiB):
//   y[b, c, h, w] = x[b, c, h, w] / sqrt(mean_c x[b, :, h, w]^2 + eps),  eps = 1e-5
//
// PyTorch eager makes five passes over the tensor (x**2 written out, the mean reads it back, the
// division reads x and writes y). Here one thread owns one (b, h, w) position: it loads its 64
// features into registers, reduces them, and writes the 64 outputs: one read and one write.
// Features are 512*512 floats apart, but neighbouring threads take neighbouring positions, so
// every load and store of a warp is a fully coalesced 128-byte access, and the 64 independent
// loads per thread keep plenty of bytes in flight.

constexpr int C = 64;  // features, a compile-time constant so the values stay in registers

extern "C" __global__ void __launch_bounds__(256)
rms_norm_features(const float* __restrict__ x, float* __restrict__ y, long long spatial, long long positions,
                  float eps) {
  for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < positions;
       p += (long long)gridDim.x * blockDim.x) {
    const long long b = p / spatial, s = p - b * spatial;
    const long long offset = b * C * spatial + s;  // element (b, 0, s)
    const float* __restrict__ xp = x + offset;
    float* __restrict__ yp = y + offset;

    float v[C];
#pragma unroll
    for (int c = 0; c < C; ++c) v[c] = xp[c * spatial];
    float sum_sq = 0.0f;
#pragma unroll
    for (int c = 0; c < C; ++c) sum_sq = fmaf(v[c], v[c], sum_sq);
    const float inv_rms = rsqrtf(sum_sq * (1.0f / C) + eps);
#pragma unroll
    for (int c = 0; c < C; ++c) yp[c * spatial] = v[c] * inv_rms;
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    assert x.size(1) == 64, "the kernel is compiled for 64 features"
    y = torch.empty_like(x)
    positions = x.numel() // 64          # (b, h, w) positions, one thread each
    spatial = positions // x.size(0)     # h * w
    eps = 1e-5                           # the Model's default
    blocks = min((positions + 255) // 256, 2147483647)
    kbench.launch("rms_norm_features", [blocks], [256], (x, y, spatial, positions, eps))
    return y
*/
