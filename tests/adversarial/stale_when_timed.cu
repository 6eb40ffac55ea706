// Level 1 problem 21 (Sigmoid): computes only on its first eight calls (the correctness trials:
// five on the problem's inputs, three robustness trials),
// then returns without writing: right when checked, stale when timed. Expected: inconsistent.
__device__ unsigned long long calls = 0;

extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  __shared__ bool work;
  if (threadIdx.x == 0) work = calls < 8 * gridDim.x;
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(&calls, 1ull);
  if (!work) return;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = 1.0f / (1.0f + __expf(-x[i]));
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [4096], [256], (x, y, x.numel()))
    return y
*/
