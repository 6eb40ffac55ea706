// Level 1 problem 47 (sum over dim 1, keepdim), x is fp32 [128, 4096, 4095] (8 GiB):
//   y[b, 0, k] = sum_r x[b, r, k]
//
// The reduced dim is the middle one, so consecutive k are consecutive in memory: a warp takes 32
// neighbouring k (one coalesced 128-byte load per row r) and walks down the rows. A block is 32 k
// wide and 8 rows deep (ty); each ty sums every 8th row with UNROLL loads in flight, and the 8
// partial sums meet in shared memory. One read of the tensor, like PyTorch eager's reduction, so
// this is expected to roughly tie it.

constexpr int TX = 32;     // k per block (one warp wide)
constexpr int TY = 8;      // row groups per block
constexpr int UNROLL = 8;  // loads in flight per thread

// grid = (ceil(inner / TX), outer), block = (TX, TY).
extern "C" __global__ void __launch_bounds__(TX * TY)
sum_dim1(const float* __restrict__ x, float* __restrict__ y, int rows, int inner) {
  const int k = blockIdx.x * TX + threadIdx.x;
  const long long b = blockIdx.y;
  const float* __restrict__ col = x + b * rows * inner + k;  // x[b, 0, k]

  float acc = 0.0f;
  if (k < inner) {
    for (int r0 = threadIdx.y; r0 < rows; r0 += UNROLL * TY) {
      float v[UNROLL];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {  // issue all loads before adding any
        const int r = r0 + u * TY;
        v[u] = r < rows ? col[(long long)r * inner] : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) acc += v[u];
    }
  }

  __shared__ float part[TY][TX];
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && k < inner) {
    float s = 0.0f;
#pragma unroll
    for (int t = 0; t < TY; ++t) s += part[t][threadIdx.x];
    y[b * inner + k] = s;
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    outer = x.size(0)
    rows = x.size(1)                # the reduced dim (reduce_dim = 1)
    inner = x.numel() // (outer * rows)
    y = torch.empty([outer, 1, inner], dtype=x.dtype, device=x.device)
    kbench.launch("sum_dim1", [(inner + 31) // 32, outer], [32, 8], (x, y, rows, inner))
    return y
*/
