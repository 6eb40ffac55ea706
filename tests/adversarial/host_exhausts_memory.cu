// Level 1 problem 21 (Sigmoid): the host program keeps 64 CPU tensors of 4 GiB (256 GiB of host
// RAM, all of it touched by ones()) before the real kernel. Expected: runtime_error (the harness
// kills a worker whose host memory passes its budget; the parent survives and records it).
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = 1.0f / (1.0f + __expf(-x[i]));
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    hoard: List[Tensor] = []
    for i in range(64):
        hoard.append(torch.ones([1024, 1024, 1024]))
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [4096], [256], (x, y, x.numel() + len(hoard) * 0))
    return y
*/
