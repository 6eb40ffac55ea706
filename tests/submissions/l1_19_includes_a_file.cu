// Level 1 problem 19 (ReLU): includes a file of the machine that runs kbench, whose lines NVRTC's
// error log would quote (and the record, or kbench serve's answer, hand back). Expected:
// compile_error before NVRTC reads it.
#include "/etc/hostname"

extern "C" __global__ void relu(const float* x, float* y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("relu", [4096], [256], (x, y, x.numel()))
    return y
*/
