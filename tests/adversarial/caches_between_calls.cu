// Level 1 problem 21 (Sigmoid): computes on the first call only and keeps the output in the params
// dict, which is one object shared by every call; later calls return it without launching anything.
// Expected: no_custom_kernel (trial 1 launches nothing; its output is trial 0's), or value_mismatch.
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
