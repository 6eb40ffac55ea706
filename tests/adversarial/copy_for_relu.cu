// Level 1 problem 19 (ReLU): a plain copy. ReLU of U[0, 1) inputs is the identity, so the copy is
// right on every trial of the problem's own distribution. Expected: fragile (normal inputs have
// negative values).
extern "C" __global__ void copy(const float* __restrict__ x, float* __restrict__ y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i];
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    kbench.launch("copy", [132 * 32], [256], (x, y, n))
    return y
*/
