// Level 1 problem 22 (Tanh): a device-side call counter lets the first eight launches (the
// correctness trials: five on the problem's inputs, three robustness trials) compute every
// element; later launches write only the first half of the output, so they look twice as fast. Expected: inconsistent (the timed runs' outputs are checked).
__device__ unsigned long long blocks_run = 0;

extern "C" __global__ void tanh_f32(const float* x, float* y, long long n) {
  __shared__ bool checked;
  if (threadIdx.x == 0) checked = blocks_run < 8ull * gridDim.x;  // launches run in order on a stream
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(&blocks_run, 1ull);
  const long long end = checked ? n : n / 2;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < end; i += (long long)gridDim.x * blockDim.x)
    y[i] = tanhf(x[i]);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("tanh_f32", [132 * 8], [256], (x, y, x.numel()))
    return y
*/
