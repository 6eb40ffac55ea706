// Level 3 problem 3: DeepNarrowMLP.
// Computes a 17-layer MLP on a [1024, 8192] batch: 16 hidden Linear(->1024) + ReLU layers, then
// Linear(1024 -> 8192).
// Each layer's matrix product goes to cuBLAS (torch.matmul against the transposed weight view, no
// copy); the bias add and ReLU that follow it run as one pass of our own kernel, in place over the
// product. Eager runs addmm (bias folded into the GEMM) and then a separate ReLU pass, so the memory
// traffic is about the same, and the fp32 matmuls dominate the time: expect roughly eager speed. The
// point of this example is the pattern: vendor GEMM + a vectorized, fused epilogue kernel.

// y[r, c] = act(y[r, c] + bias[c]) over a row-major [rows, cols] matrix (cols % 4 == 0), one float4
// per thread step. blockIdx.y walks the rows, so a float4's bias slice needs no index division.
extern "C" __global__ void bias_act_inplace(float* __restrict__ y, const float* __restrict__ bias,
                                            long long rows, int cols4, int relu) {
  const float4* b4 = reinterpret_cast<const float4*>(bias);
  for (long long r = blockIdx.y; r < rows; r += gridDim.y) {
    float4* row = reinterpret_cast<float4*>(y) + r * cols4;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < cols4; j += gridDim.x * blockDim.x) {
      float4 v = row[j];
      const float4 b = __ldg(&b4[j]);
      v.x += b.x; v.y += b.y; v.z += b.z; v.w += b.w;
      if (relu) {
        v.x = fmaxf(v.x, 0.0f); v.y = fmaxf(v.y, 0.0f); v.z = fmaxf(v.z, 0.0f); v.w = fmaxf(v.w, 0.0f);
      }
      row[j] = v;
    }
  }
}

/* kbench:host
def linear(h: Tensor, w: Tensor, b: Tensor, relu: int) -> Tensor:
    # nn.Linear computes h @ w^T; w.t() is a view, cuBLAS reads it transposed.
    y = torch.matmul(h, w.t())
    rows = y.size(0)
    cols = y.size(1)
    assert cols % 4 == 0
    cols4 = cols // 4
    kbench.launch("bias_act_inplace", [(cols4 + 255) // 256, min(rows, 65535)], [256], (y, b, rows, cols4, relu))
    return y

def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    # nn.Sequential numbering: Linear layers at 0, 2, 4, ... (ReLUs between them hold no params).
    num_hidden = 16
    h = x.contiguous()
    for i in range(num_hidden):
        k = str(2 * i)
        h = linear(h, params["network." + k + ".weight"], params["network." + k + ".bias"], 1)
    k = str(2 * num_hidden)
    return linear(h, params["network." + k + ".weight"], params["network." + k + ".bias"], 0)
*/
