// Level 1 problem 21 (Sigmoid): reads float4 from an address that is not 16-byte aligned, and
// writes only 32 outputs. Expected: runtime_error (a misaligned-address fault) or value_mismatch
// (the compiler split the load; the unwritten outputs are wrong either way).
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {
  const float4 v = *reinterpret_cast<const float4*>(x + 1 + 4 * threadIdx.x);
  y[threadIdx.x] = v.x;
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [1], [32], (x, y, x.numel()))
    return y
*/
