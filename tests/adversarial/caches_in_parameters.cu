// Level 2 problem 12 (Gemm_Multiply_LeakyReLU): a correct kernel whose host program keeps state
// between calls in a parameter tensor, nudging gemm.weight[0, 0] by 1e-6 per call (far inside the
// tolerance, so the outputs still match). Expected: input_mutated (parameters are fingerprinted).
__device__ __forceinline__ float epilogue(float v, float bias, float multiplier, float slope) {
  v = (v + bias) * multiplier;
  return v > 0.0f ? v : v * slope;
}

extern "C" __global__ void bias_mul_leaky_relu(float* __restrict__ y, const float* __restrict__ bias,
                                               float multiplier, float slope, long long rows, int cols4) {
  const float4* b4 = reinterpret_cast<const float4*>(bias);
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    float4* row = reinterpret_cast<float4*>(y) + r * cols4;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < cols4; j += gridDim.x * blockDim.x) {
      float4 v = row[j];
      const float4 b = __ldg(&b4[j]);
      v.x = epilogue(v.x, b.x, multiplier, slope); v.y = epilogue(v.y, b.y, multiplier, slope);
      v.z = epilogue(v.z, b.z, multiplier, slope); v.w = epilogue(v.w, b.w, multiplier, slope);
      row[j] = v;
    }
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    w = params["gemm.weight"]
    w[0, 0] += 1e-6  # the call counter an attacker would read back to switch to a cached answer
    y = torch.matmul(x, w.t())
    rows = y.size(0)
    cols = y.size(1)
    cols4 = cols // 4
    kbench.launch("bias_mul_leaky_relu", [(cols4 + 255) // 256, min(rows, 65535)], [256],
                  (y, params["gemm.bias"], 2.0, 0.1, rows, cols4))
    return y
*/
