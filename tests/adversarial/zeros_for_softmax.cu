// Level 1 problem 23 (Softmax over 393216 columns): writes zeros and reads no input. The outputs
// are near 2.5e-6, far below atol = 1e-2, so KernelBench's comparison passes zeros. Expected:
// value_mismatch (atol scaled to the output's magnitude); KernelBench's verdict: correct.
extern "C" __global__ void zeros(float4* y, long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x)
    y[i] = make_float4(0.f, 0.f, 0.f, 0.f);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("zeros", [132 * 32], [256], (y, y.numel() // 4))
    return y
*/
