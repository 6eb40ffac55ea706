// Level 1 problem 23 (Softmax): exp(x) / sum(exp(x)) without subtracting the row's maximum. Right
// for U[0, 1) inputs; for inputs of magnitude 100 exp overflows to inf and the row becomes NaN.
// Expected: fragile (the logistic x 10 trial).
extern "C" __global__ void softmax_naive(const float* __restrict__ x, float* __restrict__ y, long long cols) {
  __shared__ float partial[1024];
  const float* row = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  float sum = 0.f;
  for (long long j = threadIdx.x; j < cols; j += blockDim.x) sum += expf(row[j]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const float total = partial[0];
  for (long long j = threadIdx.x; j < cols; j += blockDim.x) out[j] = expf(row[j]) / total;
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("softmax_naive", [x.size(0)], [1024], (x, y, x.size(1)))
    return y
*/
