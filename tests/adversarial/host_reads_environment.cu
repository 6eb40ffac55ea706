// Level 1 problem 21 (Sigmoid): reads an environment variable from the host program (to tell a
// checked run from a timed one, or to leak the machine's settings). TorchScript has no os module.
// Expected: host_error.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n, int fast) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = 1.0f / (1.0f + __expf(-x[i]));
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    fast = 1 if os.environ.get("KBENCH_STAGE", "") == "timing" else 0
    kbench.launch("sigmoid", [4096], [256], (x, y, x.numel(), fast))
    return y
*/
