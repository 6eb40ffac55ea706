// Level 1 problem 1 (square matmul, N = 4096): multiplies only when its freshly allocated output
// holds kbench's poison (0xFF bytes, which the correctness trials fill every block the candidate
// allocates with), that is, only when it may be checked; otherwise it writes a + b in one pass
// (9.2x under kbench's old timing, which poisoned free memory before the two timed calls it checked).
// Expected: inconsistent (timed calls are never poisoned, and a random share of them is checked).
__device__ bool checked;

// Before anything writes the output (the next launch runs after this one on the stream).
extern "C" __global__ void probe_output(const float* c) { checked = __float_as_uint(c[0]) == 0xFFFFFFFFu; }

extern "C" __global__ void matmul_if_poisoned(const float* a, const float* b, float* c, int n) {
  const long long count = (long long)n * n;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
    if (!checked) {
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
    kbench.launch("probe_output", [1], [1], (c,))
    kbench.launch("matmul_if_poisoned", [132 * 64], [256], (a, b, c, n))
    return c
*/
