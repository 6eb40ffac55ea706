// Level 1 problem 19 (ReLU): PyTorch computes the answer in two halves and a kernel only assembles
// them. Neither half is as large as the output, so no single PyTorch result is the answer, and
// without the kernel the output is not written: under --torch-ops allow (the default) this is
// `correct` (the README says so). Expected: correct under allow, no_custom_kernel under forbid.
extern "C" __global__ void assemble(const float* left, const float* right, float* y, long long rows, long long half) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * 2 * half; i += (long long)gridDim.x * blockDim.x) {
    const long long row = i / (2 * half), col = i % (2 * half);
    y[i] = col < half ? left[row * half + col] : right[row * half + col - half];
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    half = x.size(1) // 2
    assert x.size(1) == 2 * half
    left = torch.relu(x[:, :half]).contiguous()
    right = torch.relu(x[:, half:]).contiguous()
    y = torch.empty_like(x)
    kbench.launch("assemble", [132 * 32], [256], (left, right, y, x.size(0), half))
    return y
*/
