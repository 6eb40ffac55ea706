// Level 1 problem 19 (ReLU): torch.relu computes the answer and a kernel writes it, nudged by one
// part in 10^7, into the output: not PyTorch's result bit for bit (the digest check passes), and
// without the kernel the output is not written (the ablation run passes). Under --torch-ops allow
// (the default) this is `correct` (the README says so). Expected: correct under allow,
// no_custom_kernel under forbid.
extern "C" __global__ void nudge(const float* r, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = r[i] * 1.0000001f;
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    r = torch.relu(x)
    y = torch.empty_like(x)
    kbench.launch("nudge", [132 * 32], [256], (r, y, x.numel()))
    return y
*/
