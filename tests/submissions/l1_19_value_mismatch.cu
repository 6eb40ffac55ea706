// Level 1 problem 19: scales values below 0.5 by 0.9 instead of passing them through — off by up
// to 0.05, beyond the 1e-2 tolerance.
extern "C" __global__ void relu(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.5f ? x[i] : 0.9f * x[i];
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    kbench.launch("relu", [(n + 255) // 256], [256], (x, y, n))
    return y
*/
