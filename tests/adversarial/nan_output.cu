// Level 1 problem 21 (Sigmoid): right almost everywhere, NaN in one element. Expected: value_mismatch.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = i == 12345 ? __int_as_float(0x7fc00000) : 1.0f / (1.0f + __expf(-x[i]));
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [4096], [256], (x, y, x.numel()))
    return y
*/
