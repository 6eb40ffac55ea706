// Level 1 problem 1 (square matmul, N = 4096): multiplies on its first 12 calls only (the correctness
// trials and the warm-up), then writes a + b, one pass over the inputs that reads and writes as many
// bytes as the speedup audit's floor, so that the audit cannot flag it (9.2x under kbench's old
// timing, which checked only the last two timed calls). Expected: inconsistent (a random share of
// the timed calls is checked).
__device__ unsigned long long calls = 0;

extern "C" __global__ void count_call() { ++calls; }

extern "C" __global__ void matmul_or_sum(const float* a, const float* b, float* c, int n) {
  const long long count = (long long)n * n;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
    if (calls > 12) {
      c[i] = a[i] + b[i];
      continue;
    }
    const long long row = i / n, col = i % n;
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[(long long)k * n + col];
    c[i] = acc;
  }
}

/* kbench:host
def forward(a: Tensor, b: Tensor, params: Dict[str, Tensor]) -> Tensor:
    n = a.size(0)
    c = torch.empty_like(a)
    kbench.launch("count_call", [1], [1], ())
    kbench.launch("matmul_or_sum", [132 * 64], [256], (a, b, c, n))
    return c
*/
