// Level 2 problem 12 (Gemm, * 2.0, LeakyReLU(0.1)): the epilogue uses LeakyReLU's default slope
// 0.01 instead of the problem's 0.1, so every negative output is ten times too small (errors of
// order 0.1 against a 1e-2 tolerance). Expected: value_mismatch.
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
                  (y, params["gemm.bias"], 2.0, 0.01, rows, cols))
    return y
*/
