// Level 1 problem 21 (Sigmoid): returns a tuple where the reference returns one tensor.
// Expected: shape_mismatch.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = 1.0f / (1.0f + __expf(-x[i]));
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tuple[Tensor, Tensor]:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [4096], [256], (x, y, x.numel()))
    return (y, y)
*/
