// Level 2 problem 1: Conv2d -> ReLU -> + bias.
//   x [128, 64, 128, 128] -> conv 3x3 (64 -> 128, with its own bias) -> ReLU -> + bias[C, 1, 1]
// The convolution runs in cuDNN without its bias (torch.conv2d(x, w)); everything after it, the
// conv bias included, is one in-place pass of our kernel over the 1 GiB conv output. Eager mode
// makes three passes after the convolution (conv bias add, ReLU, bias add), each reading and
// writing the whole tensor, so the tail costs a third of eager's.
//
// Layout: NCHW, so every (n, c) plane of H*W floats shares one channel. blockIdx.y walks the
// planes (the channel is then one modulo per plane, not a 64-bit division per element) and
// blockIdx.x / threadIdx.x cover the plane with float4 accesses when H*W % 4 == 0.

__device__ __forceinline__ float epilogue(float v, float conv_bias, float bias) {
  return fmaxf(v + conv_bias, 0.0f) + bias;
}

extern "C" __global__ void conv_bias_relu_bias(float* __restrict__ y, const float* __restrict__ conv_bias,
                                               const float* __restrict__ bias, int C, long long HW,
                                               long long planes) {
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
      v.x = epilogue(v.x, cb, b); v.y = epilogue(v.y, cb, b);
      v.z = epilogue(v.z, cb, b); v.w = epilogue(v.w, cb, b);
      p4[i] = v;
    }
    for (long long i = 4 * HW4 + start; i < HW; i += stride) p[i] = epilogue(p[i], cb, b);
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.conv2d(x, params["conv.weight"])  # no bias: it is added in the fused pass
    C = y.size(1)
    planes = y.size(0) * C
    HW = y.numel() // planes
    blocks_x = (HW + 256 * 16 - 1) // (256 * 16)  # about 16 floats per thread per plane
    kbench.launch("conv_bias_relu_bias", [blocks_x, min(planes, 65535)], [256],
                  (y, params["conv.bias"], params["bias"], C, HW, planes))
    return y
*/
