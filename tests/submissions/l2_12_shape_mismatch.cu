// Level 2 problem 12 (Gemm, * 2.0, LeakyReLU(0.1)): right values, but returns the transpose,
// [8192, 1024] where the reference returns [1024, 8192]. Expected: shape_mismatch.
extern "C" __global__ void bias_mul_leaky_relu(float* y, const float* bias, float multiplier, float slope,
                                               long long rows, int cols) {
  for (long long r = blockIdx.y; r < rows; r += gridDim.y)
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += gridDim.x * blockDim.x) {
      const float v = (y[r * cols + j] + bias[j]) * multiplier;
      y[r * cols + j] = v > 0.0f ? v : v * slope;
    }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.matmul(x, params["gemm.weight"].t())
    rows = y.size(0)
    cols = y.size(1)
    kbench.launch("bias_mul_leaky_relu", [(cols + 255) // 256, min(rows, 65535)], [256],
                  (y, params["gemm.bias"], 2.0, 0.1, rows, cols))
    return y.t()
*/
