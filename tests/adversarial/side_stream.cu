// Level 1 problem 21 (Sigmoid): launches the kernel on a CUDA stream of its own so that the timer's
// events on the current stream would not see it. The host program cannot make a stream: torch.cuda
// is not reachable from TorchScript compiled by kbench. Expected: host_error.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = 1.0f / (1.0f + __expf(-x[i]));
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        kbench.launch("sigmoid", [4096], [256], (x, y, x.numel()))
    return y
*/
