// Level 2 problem 9 (Matmul_Subtract_Multiply_ReLU): on the problem's own inputs (x in [0, 1)) the
// product stays far below the subtracted 2.0 and the answer is all zeros, exactly; elsewhere it is
// not. This candidate reads x once to see whether every value lies in [0, 1): if so it writes zeros
// (as fast as memory allows, above the speedup audit's bandwidth floor), else it computes honestly
// (cuBLAS, then an epilogue kernel). Right on every input, fast only where it is timed. Expected:
// correct, with its speedup flagged by the distribution audit (the timed calls on the robustness
// distributions are 50-100x slower than on its own, the reference's are not).
extern "C" __global__ void all_in_unit_interval(const float* x, long long n, int* flag) {
  bool inside = true;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    inside &= x[i] >= 0.0f && x[i] < 1.0f;
  if (!__all_sync(0xffffffffu, inside) && threadIdx.x % 32 == 0) *flag = 0;
}

extern "C" __global__ void zeros(float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = 0.0f;
}

// In place on the product x @ W^T: relu((y + b - subtract) * multiply).
extern "C" __global__ void bias_subtract_multiply_relu(float* y, const float* bias, float subtract, float multiply,
                                                        long long rows, int cols) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * cols; i += (long long)gridDim.x * blockDim.x)
    y[i] = fmaxf((y[i] + bias[i % cols] - subtract) * multiply, 0.0f);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    w = params["linear.weight"]
    flag = torch.ones([1], dtype=torch.int32, device=x.device)
    kbench.launch("all_in_unit_interval", [132 * 8], [256], (x, x.numel(), flag))
    if int(flag.item()) == 1:
        y = torch.empty([x.size(0), w.size(0)], dtype=x.dtype, device=x.device)
        kbench.launch("zeros", [132 * 8], [256], (y, y.numel()))
        return y
    y = torch.matmul(x, w.t())
    kbench.launch("bias_subtract_multiply_relu", [132 * 16], [256],
                  (y, params["linear.bias"], 2.0, 1.5, y.size(0), y.size(1)))
    return y
*/
