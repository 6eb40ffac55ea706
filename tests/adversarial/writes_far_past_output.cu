// Level 1 problem 21 (Sigmoid): computes every output, then keeps writing 4 MiB past the end of
// it, into the free memory the allocator carved the output from. Expected: runtime_error (free
// GPU memory is poisoned before the candidate runs and checked after it), or input_mutated.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  const long long end = n + (4ll << 20) / 4;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < end; i += (long long)gridDim.x * blockDim.x)
    y[i] = 1.0f / (1.0f + __expf(-x[i % n]));
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [4096], [256], (x, y, x.numel()))
    return y
*/
