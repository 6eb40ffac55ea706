// Level 2 problem 56: Linear -> sigmoid -> sum over features (keepdim).
//   x [128, 32768] -> Linear(32768 -> 32768) -> out[b] = sum_j sigmoid(y[b, j] + bias[j]), [128, 1]
// The matrix product goes to cuBLAS (torch.matmul against the transposed weight view, no copy);
// bias, sigmoid and the row sum are one kernel that reads the product once and writes 128 floats,
// where eager runs addmm (bias inside the GEMM), a sigmoid pass that writes a full-size tensor, then
// the sum. The fp32 GEMM (275 GFLOP, 4 GiB of weights) dominates, so expect about eager speed.

#define THREADS 256

// One block per row: float4 loads of the row and the bias, per-thread partial sums, then a
// warp-shuffle tree and one shared-memory step across the block's warps.
extern "C" __global__ void __launch_bounds__(THREADS)
bias_sigmoid_rowsum(const float* __restrict__ y, const float* __restrict__ bias, float* __restrict__ out,
                    int cols4) {
  __shared__ float s_warp[THREADS / 32];
  const float4* row = reinterpret_cast<const float4*>(y) + (long long)blockIdx.x * cols4;
  const float4* b4 = reinterpret_cast<const float4*>(bias);
  float acc = 0.0f;
  for (int j = threadIdx.x; j < cols4; j += THREADS) {
    const float4 v = __ldg(&row[j]), b = __ldg(&b4[j]);
    acc += 1.0f / (1.0f + expf(-(v.x + b.x)));
    acc += 1.0f / (1.0f + expf(-(v.y + b.y)));
    acc += 1.0f / (1.0f + expf(-(v.z + b.z)));
    acc += 1.0f / (1.0f + expf(-(v.w + b.w)));
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0) s_warp[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = threadIdx.x < THREADS / 32 ? s_warp[threadIdx.x] : 0.0f;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
  }
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.matmul(x, params["linear.weight"].t())  # nn.Linear: x @ W^T, bias added below
    rows = y.size(0)
    cols = y.size(1)
    assert cols % 4 == 0
    out = torch.empty([rows, 1], dtype=torch.float32, device=y.device)
    kbench.launch("bias_sigmoid_rowsum", [rows], [256], (y, params["linear.bias"], out, cols // 4))
    return out
*/
