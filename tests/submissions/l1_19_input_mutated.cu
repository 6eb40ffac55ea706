// Level 1 problem 19: computes ReLU in place and returns its input.
extern "C" __global__ void relu_inplace(float* x, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] > 0.5f ? x[i] : 0.0f;
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    kbench.launch("relu_inplace", [(x.numel() + 255) // 256], [256], (x, x.numel()))
    return x
*/
