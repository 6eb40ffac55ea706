// Level 1 problem 22 (Tanh): y = tanh(x) elementwise, x is fp32 [4096, 393216] (6 GiB).
// tanhf is the accurate CUDA math-library version; its cost hides under the memory traffic.
//
// One read and one write per element, so the kernel is bound by HBM bandwidth and the job is to
// keep enough bytes in flight: each thread moves 16-byte float4s and issues ILP loads before it
// computes and stores any of them. A grid-stride loop with 64-bit indices covers any size; the
// n % 4 leftover elements are done by the first threads. PyTorch eager is also a single
// vectorized pass, so this is expected to roughly tie it.

constexpr int ILP = 4;  // float4s per thread in flight per loop iteration

extern "C" __global__ void __launch_bounds__(256)
tanh_f32(const float* __restrict__ x, float* __restrict__ y, long long n) {
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
      if (i < n4) y4[i] = make_float4(tanhf(v[k].x), tanhf(v[k].y), tanhf(v[k].z), tanhf(v[k].w));
    }
  }

  const long long t = n4 * 4 + blockIdx.x * (long long)blockDim.x + threadIdx.x;  // scalar tail
  if (t < n) y[t] = tanhf(x[t]);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    # About one wave of 256-thread blocks on an H100's 132 SMs; the grid-stride loop does the rest.
    blocks = max(1, min((n // 4 + 1023) // 1024, 132 * 8))
    kbench.launch("tanh_f32", [blocks], [256], (x, y, n))
    return y
*/
