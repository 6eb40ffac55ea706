// Level 1 problem 21 (Sigmoid): a cubic Taylor polynomial, 0.5 + x/4 - x^3/48, within 2e-3 of the
// sigmoid on [0, 1) (the problem's own inputs) and far off elsewhere. Expected: fragile.
extern "C" __global__ void sigmoid_cubic(const float* __restrict__ x, float* __restrict__ y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const float v = x[i];
    y[i] = 0.5f + 0.25f * v - v * v * v / 48.0f;
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid_cubic", [132 * 32], [256], (x, y, x.numel()))
    return y
*/
