// Level 1 problem 19 (ReLU): PyTorch computes the answer (torch.relu) and a kernel copies it into
// the output. Right on every input, and the copy is needed: skipping the kernels leaves the output
// unwritten, so the ablation run alone would call it correct. Expected: no_custom_kernel (the
// robustness trials find torch.relu's result equal to the answer before the copy kernel ran).
extern "C" __global__ void copy(const float* __restrict__ x, float* __restrict__ y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i];
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.relu(x)
    out = torch.empty_like(x)
    kbench.launch("copy", [132 * 32], [256], (y, out, y.numel()))
    return out
*/
