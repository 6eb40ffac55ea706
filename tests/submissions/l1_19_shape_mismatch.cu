// Level 1 problem 19: right values, but returns them flattened.
extern "C" __global__ void relu(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty([x.numel()], dtype=x.dtype, device=x.device)
    kbench.launch("relu", [(x.numel() + 255) // 256], [256], (x, y, x.numel()))
    return y
*/
