// Level 2 problem 12 (Linear, * 2.0, LeakyReLU(0.1)) with the matrix product left to cuBLAS
// (torch.matmul against the transposed weight view, no copy) and the bias add, the multiply and the
// LeakyReLU as one in-place pass of its own kernel over the product. Expected: correct (under
// --torch-ops allow, the default; forbid refuses it for aten::matmul). The profile tests use it for a
// candidate whose profile shows a PyTorch op (the GEMM, most of the time) beside its kernel, which no
// reference kernel's does: those do all their work in their own kernels.
//
// blockIdx.y walks the rows, so a float4's column (and its bias float4) needs no division.

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
    y = torch.matmul(x, params["gemm.weight"].t())  # nn.Linear: x @ W^T, bias added below
    rows = y.size(0)
    cols = y.size(1)
    assert cols % 4 == 0
    cols4 = cols // 4
    kbench.launch("bias_mul_leaky_relu", [(cols4 + 255) // 256, min(rows, 65535)], [256],
                  (y, params["gemm.bias"], 2.0, 0.1, rows, cols4))
    return y
*/
