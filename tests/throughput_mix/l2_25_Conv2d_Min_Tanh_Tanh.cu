// Level 2 problem 25: Conv2d -> min over channels (keepdim) -> tanh -> tanh.
//   x [128, 16, 256, 256] -> conv 3x3 (16 -> 64) -> [128, 64, 254, 254] (2 GiB)
//   -> min over dim 1 -> [128, 1, 254, 254] -> tanh(tanh(.)).
// cuDNN does the convolution without its bias; one kernel then reads the conv output once, adds the
// per-channel bias, keeps the running minimum over the 64 channels in registers and writes only
// the 64x smaller result. Eager adds the bias in a separate read+write pass over 2 GiB before its
// min reduction, so the tail here moves about a third of eager's bytes.
//
// Each thread owns four adjacent pixels (a float4) of one image and walks the channels: at every
// channel step a warp reads 512 contiguous bytes, so the reduction over the strided channel axis is
// still fully coalesced. blockIdx.y walks the images.

__device__ __forceinline__ float finish(float m) { return tanhf(tanhf(m)); }

extern "C" __global__ void channel_min_tanh_tanh(const float* __restrict__ y, const float* __restrict__ conv_bias,
                                                 float* __restrict__ out, int N, int C, long long HW) {
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
      m.x += b0; m.y += b0; m.z += b0; m.w += b0;
#pragma unroll 8  // independent loads: keep several in flight per thread
      for (int c = 1; c < C; ++c) {
        const float4 v = __ldg(p + c * HW4);
        const float b = __ldg(&conv_bias[c]);  // same address across the warp: a broadcast
        m.x = fminf(m.x, v.x + b); m.y = fminf(m.y, v.y + b);
        m.z = fminf(m.z, v.z + b); m.w = fminf(m.w, v.w + b);
      }
      reinterpret_cast<float4*>(o)[i] = make_float4(finish(m.x), finish(m.y), finish(m.z), finish(m.w));
    }
    for (long long i = 4 * HW4 + start; i < HW; i += stride) {  // scalar path when HW % 4 != 0
      float m = __ldg(&img[i]) + __ldg(&conv_bias[0]);
      for (int c = 1; c < C; ++c) m = fminf(m, __ldg(&img[c * HW + i]) + __ldg(&conv_bias[c]));
      o[i] = finish(m);
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
    kbench.launch("channel_min_tanh_tanh", [blocks_x, min(N, 65535)], [256],
                  (y, params["conv.bias"], out, N, C, HW))
    return out
*/
