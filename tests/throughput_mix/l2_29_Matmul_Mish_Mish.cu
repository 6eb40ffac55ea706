// Level 2 problem 29: Linear -> Mish -> Mish.
//   x [1024, 8192] -> Linear(8192 -> 8192) -> mish(mish(y + b))
// The matrix product goes to cuBLAS (torch.matmul against the transposed weight view, no copy);
// the bias add and both Mish activations are one in-place pass of our kernel over the 32 MiB
// product, where eager runs addmm (bias inside the GEMM) and then two Mish passes. The fp32 GEMM
// (137 GFLOP) dominates, so the gain is small: expect just above eager speed.
//
// blockIdx.y walks the rows, so a float4's column (and its bias float4) needs no division.

// Mish as PyTorch's CUDA kernel computes it: x * tanh(log1p(exp(x))). For large x, exp overflows
// to inf and the expression still yields x, as in PyTorch.
__device__ __forceinline__ float mish(float v) { return v * tanhf(log1pf(expf(v))); }

__device__ __forceinline__ float epilogue(float v, float bias) { return mish(mish(v + bias)); }

extern "C" __global__ void bias_mish_mish(float* __restrict__ y, const float* __restrict__ bias,
                                          long long rows, int cols4) {
  const float4* b4 = reinterpret_cast<const float4*>(bias);
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    float4* row = reinterpret_cast<float4*>(y) + r * cols4;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < cols4; j += gridDim.x * blockDim.x) {
      float4 v = row[j];
      const float4 b = __ldg(&b4[j]);
      v.x = epilogue(v.x, b.x); v.y = epilogue(v.y, b.y);
      v.z = epilogue(v.z, b.z); v.w = epilogue(v.w, b.w);
      row[j] = v;
    }
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.matmul(x, params["linear.weight"].t())  # nn.Linear: x @ W^T, bias added below
    rows = y.size(0)
    cols = y.size(1)
    assert cols % 4 == 0
    cols4 = cols // 4
    kbench.launch("bias_mish_mish", [(cols4 + 255) // 256, min(rows, 65535)], [256],
                  (y, params["linear.bias"], rows, cols4))
    return y
*/
