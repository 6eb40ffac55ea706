// Level 2 problem 7: Conv3d -> ReLU -> LeakyReLU(0.01) -> GELU -> sigmoid -> + bias.
//   x [64, 8, 32, 64, 64] -> conv 3x3x3 (8 -> 32) -> [64, 32, 30, 62, 62] (~0.9 GiB),
//   then the activation chain and a per-channel bias[C, 1, 1, 1].
// cuDNN does the convolution without its bias; the conv bias and all five elementwise steps are one
// in-place pass of our kernel, where eager makes six passes over the conv output.
//
// Layout: NCDHW, so each (n, c) volume of D*H*W floats shares one channel: blockIdx.y walks the
// volumes, blockIdx.x and threadIdx.x cover one with float4 accesses when D*H*W % 4 == 0.

__device__ __forceinline__ float epilogue(float v, float conv_bias, float bias) {
  v = fmaxf(v + conv_bias, 0.0f);                       // conv bias, ReLU
  v = v >= 0.0f ? v : 0.01f * v;                        // LeakyReLU (a no-op after ReLU, kept for fidelity)
  v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));  // exact (erf) GELU, F.gelu's default
  v = 1.0f / (1.0f + expf(-v));                         // sigmoid
  return v + bias;
}

extern "C" __global__ void conv3d_act_chain(float* __restrict__ y, const float* __restrict__ conv_bias,
                                            const float* __restrict__ bias, int C, long long DHW,
                                            long long planes) {
  const long long n4 = (DHW % 4 == 0) ? DHW / 4 : 0;  // float4 part (volumes stay 16-byte aligned)
  const long long start = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long plane = blockIdx.y; plane < planes; plane += gridDim.y) {
    const int c = (int)(plane % C);
    const float cb = __ldg(&conv_bias[c]), b = __ldg(&bias[c]);
    float* p = y + plane * DHW;
    float4* p4 = reinterpret_cast<float4*>(p);
    for (long long i = start; i < n4; i += stride) {
      float4 v = p4[i];
      v.x = epilogue(v.x, cb, b); v.y = epilogue(v.y, cb, b);
      v.z = epilogue(v.z, cb, b); v.w = epilogue(v.w, cb, b);
      p4[i] = v;
    }
    for (long long i = 4 * n4 + start; i < DHW; i += stride) p[i] = epilogue(p[i], cb, b);
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.conv3d(x, params["conv.weight"])  # no bias: it is added in the fused pass
    C = y.size(1)
    planes = y.size(0) * C
    DHW = y.numel() // planes
    blocks_x = (DHW + 256 * 16 - 1) // (256 * 16)  # about 16 floats per thread per volume
    kbench.launch("conv3d_act_chain", [blocks_x, min(planes, 65535)], [256],
                  (y, params["conv.bias"], params["bias"], C, DHW, planes))
    return y
*/
