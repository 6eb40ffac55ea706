// Level 1 problem 21 (Sigmoid): writes 8 GiB past the end of its output, into whatever lies beyond.
// Expected: runtime_error, either from an illegal address or because free GPU memory changed (it is
// poisoned before the candidate runs and checked after), or input_mutated if the writes hit an input.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n + (1ll << 31); i += (long long)gridDim.x * blockDim.x)
    y[i] = 1.0f / (1.0f + __expf(-x[i % n]));
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [4096], [256], (x, y, x.numel()))
    return y
*/
