// Level 1 problem 21 (Sigmoid): counts its calls in a CPU tensor kept in the params dict; past the
// five correctness trials it would hand back the last output through a no-op kernel. Each call gets
// a fresh copy of the dict, so the count never passes 1 and every call computes. Expected: correct.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = 1.0f / (1.0f + __expf(-x[i]));
}
extern "C" __global__ void touch(float* y) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    if "_calls" not in params:
        params["_calls"] = torch.zeros([1], dtype=torch.int64)
    calls = params["_calls"]
    calls.add_(1)
    if int(calls.item()) > 5:
        y = params["_cached"]
        kbench.launch("touch", [1], [1], (y,))
        return y
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [4096], [256], (x, y, x.numel()))
    params["_cached"] = y
    return y
*/
