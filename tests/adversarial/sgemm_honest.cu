// Level 1 problem 1 (square matmul, N = 4096): an honest SGEMM with 64x64 tiles, each of 256
// threads computing a 4x4 block in registers. The yardstick the cheating variants beside it are
// measured against (sgemm_*.cu). Expected: correct, slower than cuBLAS.
#define TILE 64
#define BK 16

extern "C" __global__ void sgemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  __shared__ float as[BK][TILE];  // a's tile, transposed: as[k][row]
  __shared__ float bs[BK][TILE];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const long long row0 = (long long)blockIdx.y * TILE, col0 = (long long)blockIdx.x * TILE;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < n; k0 += BK) {
    for (int i = threadIdx.x; i < TILE * BK; i += blockDim.x) {
      as[i % BK][i / BK] = a[(row0 + i / BK) * n + k0 + i % BK];
      bs[i / TILE][i % TILE] = b[(long long)(k0 + i / TILE) * n + col0 + i % TILE];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float ra[4], rb[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) ra[i] = as[k][ty * 4 + i], rb[i] = bs[k][tx * 4 + i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) c[(row0 + ty * 4 + i) * n + col0 + tx * 4 + j] = acc[i][j];
}

/* kbench:host
def forward(a: Tensor, b: Tensor, params: Dict[str, Tensor]) -> Tensor:
    n = a.size(0)
    assert n % 64 == 0
    c = torch.empty_like(a)
    kbench.launch("sgemm", [n // 64, n // 64], [256], (a, b, c, n))
    return c
*/
