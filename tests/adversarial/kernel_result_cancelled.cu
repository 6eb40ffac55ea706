// Level 1 problem 21 (Sigmoid): torch.sigmoid computes the answer, and the output only pretends to
// depend on the kernel: it adds the kernel's result minus itself. Expected: no_custom_kernel. With
// the kernel skipped, what it would have written is NaN poison first (NaN - NaN spoils the answer),
// then a finite poison, under which the output is right: the kernel does none of the work.
extern "C" __global__ void scratch(float* s, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    s[i] = 1.0f;
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    s = torch.empty_like(x)
    n = x.numel()
    kbench.launch("scratch", [1024], [256], (s, n))
    return torch.sigmoid(x) + (s - s)
*/
