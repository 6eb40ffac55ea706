// Level 2 problem 32: Conv2d -> * scale (2.0) -> min over channels (keepdim).
//   x [64, 64, 256, 256] -> conv 3x3 (64 -> 128) -> [64, 128, 254, 254] (~2 GiB)
//   -> (y + conv_bias) * 2.0 -> min over dim 1 -> [64, 1, 254, 254].
// cuDNN does the convolution without its bias; one kernel then reads the conv output once, applies
// bias and scale per element (in the reference's order, so rounding matches), keeps the running
// minimum over the 128 channels in registers and writes only the 128x smaller result. Eager spends
// two extra read+write passes over the 2 GiB tensor (conv bias add, scaling) before its reduction.
//
// Each thread owns four adjacent pixels (a float4) of one image and walks the channels: at every
// channel step a warp reads 512 contiguous bytes, so the reduction over the strided channel axis is
// still fully coalesced. blockIdx.y walks the images.

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
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.conv2d(x, params["conv.weight"])  # no bias: it is added inside the reduction
    N = y.size(0)
    C = y.size(1)
    H = y.size(2)
    W = y.size(3)
    HW = H * W
    out = torch.empty([N, 1, H, W], dtype=y.dtype, device=y.device)
    blocks_x = (HW + 1023) // 1024  # one float4 (4 pixels) per thread
    kbench.launch("scale_channel_min", [blocks_x, min(N, 65535)], [256],
                  (y, params["conv.bias"], out, 2.0, N, C, HW))
    return out
*/
