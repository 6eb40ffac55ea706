// Level 1 problem 21 (Sigmoid): computes on the first call only and keeps the output in the params
// dict, to return it later without launching anything. Each call gets a fresh copy of the dict, so
// the cache is never found and every call computes. Expected: correct (the attack achieves nothing).
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = 1.0f / (1.0f + __expf(-x[i]));
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    if "_cached" in params:
        return params["_cached"]
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [4096], [256], (x, y, x.numel()))
    params["_cached"] = y
    return y
*/
