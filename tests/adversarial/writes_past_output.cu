// Level 1 problem 21 (Sigmoid): writes far past the end of its output, into whatever lies beyond.
// Expected: runtime_error (illegal address) or input_mutated when the stray writes hit unmapped
// memory, an input or the reference's weights. Writes that land only in free memory change nothing
// kbench compares, and the verdict is then correct: a known limit (compute-sanitizer would catch it).
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
