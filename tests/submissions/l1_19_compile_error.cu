// Level 1 problem 19: does not compile (undeclared identifier).
extern "C" __global__ void relu(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], zero);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("relu", [1], [256], (x, y, x.numel()))
    return y
*/
