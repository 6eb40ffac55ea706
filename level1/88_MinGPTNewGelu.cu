// Level 1 problem 88 (MinGPT "new GELU", tanh approximation), x is fp32 [8192, 8192] (256 MiB):
//   y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//
// PyTorch eager runs this as about eight separate elementwise kernels (pow, mul, add, mul, tanh,
// add, mul, mul), each reading and writing the whole tensor. Fused, it is one read and one write
// per element, so it should be several times faster. The kernel is bound by HBM bandwidth: each
// thread moves 16-byte float4s and issues ILP loads before it computes and stores any of them. A
// grid-stride loop with 64-bit indices covers any size; the first threads do the n % 4 leftovers.

constexpr int ILP = 4;  // float4s per thread in flight per loop iteration

__device__ __forceinline__ float new_gelu(float v) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}

extern "C" __global__ void __launch_bounds__(256)
new_gelu_f32(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long n4 = n / 4;
  const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
  float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
  const long long tile = (long long)blockDim.x * ILP;  // float4s one block covers per iteration

  for (long long base = blockIdx.x * tile + threadIdx.x; base < n4; base += gridDim.x * tile) {
    float4 v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; ++k) {  // all loads first, so ILP requests are outstanding at once
      const long long i = base + (long long)k * blockDim.x;
      if (i < n4) v[k] = x4[i];
    }
#pragma unroll
    for (int k = 0; k < ILP; ++k) {
      const long long i = base + (long long)k * blockDim.x;
      if (i < n4) y4[i] = make_float4(new_gelu(v[k].x), new_gelu(v[k].y), new_gelu(v[k].z), new_gelu(v[k].w));
    }
  }

  const long long t = n4 * 4 + blockIdx.x * (long long)blockDim.x + threadIdx.x;  // scalar tail
  if (t < n) y[t] = new_gelu(x[t]);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    # About one wave of 256-thread blocks on an H100's 132 SMs; the grid-stride loop does the rest.
    blocks = max(1, min((n // 4 + 1023) // 1024, 132 * 8))
    kbench.launch("new_gelu_f32", [blocks], [256], (x, y, n))
    return y
*/
