// Level 2 problem 2: ConvTranspose2d -> + bias -> clamp[0,1] -> * s -> clamp[0,1] -> / s  (s = 2.0)
//   x [128, 64, 128, 128] -> transposed conv 3x3, stride 2, pad 1, output_padding 1 (64 -> 64)
//   -> [128, 64, 256, 256] (2 GiB), then the elementwise chain above.
// cuDNN does the transposed convolution without its bias; the conv bias, the extra bias and the
// four elementwise steps are one in-place pass of our kernel, where eager makes six passes over the
// 2 GiB tensor (conv bias add, bias add, clamp, multiply, clamp, divide).
//
// Layout: NCHW, so each (n, c) plane shares one channel: blockIdx.y walks planes, blockIdx.x and
// threadIdx.x cover a plane with float4 accesses when H*W % 4 == 0.

__device__ __forceinline__ float epilogue(float v, float conv_bias, float bias, float s) {
  v = v + conv_bias;                    // the ConvTranspose2d's own bias
  v = v + bias;
  v = fminf(fmaxf(v, 0.0f), 1.0f);
  v = v * s;
  v = fminf(fmaxf(v, 0.0f), 1.0f);
  return v / s;                         // same rounding as the reference's divide
}

extern "C" __global__ void convt_bias_clamp_scale(float* __restrict__ y, const float* __restrict__ conv_bias,
                                                  const float* __restrict__ bias, float s, int C,
                                                  long long HW, long long planes) {
  const long long HW4 = (HW % 4 == 0) ? HW / 4 : 0;  // float4 part (planes stay 16-byte aligned)
  const long long start = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long plane = blockIdx.y; plane < planes; plane += gridDim.y) {
    const int c = (int)(plane % C);
    const float cb = __ldg(&conv_bias[c]), b = __ldg(&bias[c]);
    float* p = y + plane * HW;
    float4* p4 = reinterpret_cast<float4*>(p);
    for (long long i = start; i < HW4; i += stride) {
      float4 v = p4[i];
      v.x = epilogue(v.x, cb, b, s); v.y = epilogue(v.y, cb, b, s);
      v.z = epilogue(v.z, cb, b, s); v.w = epilogue(v.w, cb, b, s);
      p4[i] = v;
    }
    for (long long i = 4 * HW4 + start; i < HW; i += stride) p[i] = epilogue(p[i], cb, b, s);
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    # no bias here: it is added in the fused pass
    y = torch.conv_transpose2d(x, params["conv_transpose.weight"], None, [2, 2], [1, 1], [1, 1])
    C = y.size(1)
    planes = y.size(0) * C
    HW = y.numel() // planes
    blocks_x = (HW + 256 * 16 - 1) // (256 * 16)  # about 16 floats per thread per plane
    kbench.launch("convt_bias_clamp_scale", [blocks_x, min(planes, 65535)], [256],
                  (y, params["conv_transpose.bias"], params["bias"], 2.0, C, HW, planes))
    return y
*/
