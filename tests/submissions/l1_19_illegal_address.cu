// Level 1 problem 19: writes through a wild pointer: an illegal-address fault on the GPU.
extern "C" __global__ void relu(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) ((float*)0x10)[i] = fmaxf(x[i], 0.0f);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("relu", [(x.numel() + 255) // 256], [256], (x, y, x.numel()))
    return y
*/
