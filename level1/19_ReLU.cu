// Level 1 problem 19 (ReLU): one thread per element, grid-stride so any size fits.
extern "C" __global__ void relu(const float* __restrict__ x, float* __restrict__ y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    kbench.launch("relu", [min((n + 255) // 256, 132 * 32)], [256], (x, y, n))
    return y
*/
