// Level 3 problem 4: LeNet-5 on a [4096, 1, 32, 32] batch.
//   conv1 5x5 (1 -> 6) + ReLU + 2x2 max-pool -> [6, 14, 14]
//   conv2 5x5 (6 -> 16) + ReLU + 2x2 max-pool -> [16, 5, 5] -> flatten 400
//   fc1 400 -> 120 + ReLU, fc2 120 -> 84 + ReLU, fc3 84 -> 20
// The whole network is one kernel: each block takes IMGS images through every layer with all
// intermediates in shared memory, so global memory sees only the input images (16 MiB), the 250 KB
// of weights (L2-resident) and the [4096, 20] logits. Eager mode launches about ten kernels and
// writes/reads every intermediate tensor through global memory.
// Two exact rewrites keep the work small: max-pool of ReLU(conv + b) equals ReLU(max(conv) + b)
// (rounding is monotonic), so each thread computes the four convolution sums of one pooling window
// and applies bias and ReLU once; and each fully connected layer is a warp per output neuron whose
// lanes stream the weight row coalesced and reuse every weight for all IMGS images of the block.

#define IMGS 4        // images per block: weights read from L2 are reused this many times
#define THREADS 256   // 8 warps

// One fully connected layer for the block's IMGS images: dst[i * OUT + n] = act(b[n] + W[n, :] . src[i, :]).
// Warp w handles neurons w, w + 8, ...; lanes split the IN inputs (consecutive k: coalesced global
// reads of W, conflict-free shared reads of src), then a shuffle tree sums the partial dot products.
template <int IN, int OUT, bool RELU>
__device__ void fc_layer(const float* __restrict__ W, const float* __restrict__ b, const float* src,
                         float* dst, int nimg) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int n = warp; n < OUT; n += THREADS / 32) {
    float acc[IMGS];
#pragma unroll
    for (int i = 0; i < IMGS; ++i) acc[i] = 0.0f;
    for (int k = lane; k < IN; k += 32) {
      const float w = __ldg(&W[n * IN + k]);
#pragma unroll
      for (int i = 0; i < IMGS; ++i) acc[i] = fmaf(w, src[i * IN + k], acc[i]);
    }
#pragma unroll
    for (int i = 0; i < IMGS; ++i) {
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], off);
    }
    if (lane < nimg) {  // lane i writes image i's result (all lanes hold every sum after the xor tree)
      float v = 0.0f;
#pragma unroll
      for (int i = 0; i < IMGS; ++i) if (lane == i) v = acc[i];
      v += __ldg(&b[n]);
      dst[lane * OUT + n] = RELU ? fmaxf(v, 0.0f) : v;
    }
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
lenet5_fused(const float* __restrict__ x,
             const float* __restrict__ c1w, const float* __restrict__ c1b,
             const float* __restrict__ c2w, const float* __restrict__ c2b,
             const float* __restrict__ f1w, const float* __restrict__ f1b,
             const float* __restrict__ f2w, const float* __restrict__ f2b,
             const float* __restrict__ f3w, const float* __restrict__ f3b,
             float* __restrict__ out, int batch) {
  // s_in holds the input images; once conv1 has consumed them it is reused for the later, smaller
  // activations (pool2: IMGS*400, fc1: IMGS*120, fc2: IMGS*84 floats).
  __shared__ __align__(16) float s_in[IMGS * 1024];
  __shared__ float s_p1[IMGS * 6 * 196];  // conv1 -> ReLU -> pool: [IMGS][6][14][14]
  __shared__ float s_c1w[6 * 25], s_c1b[6];
  __shared__ float s_c2w[16 * 150], s_c2b[16];
  float* s_p2 = s_in;                    // [IMGS][400], index c*25 + y*5 + x = PyTorch's flatten order
  float* s_f1 = s_in + IMGS * 400;       // [IMGS][120]
  float* s_f2 = s_f1 + IMGS * 120;       // [IMGS][84]

  const int tid = threadIdx.x;
  const long long img0 = (long long)blockIdx.x * IMGS;
  const int nimg = (int)min((long long)IMGS, batch - img0);

  // Stage 0: images (contiguous, 16-byte aligned since 1024 floats each) and conv weights into shared memory.
  {
    const float4* src = reinterpret_cast<const float4*>(x + img0 * 1024);
    float4* dst = reinterpret_cast<float4*>(s_in);
    const int n4 = nimg * 256;
    for (int i = tid; i < IMGS * 256; i += THREADS)
      dst[i] = i < n4 ? __ldg(&src[i]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int i = tid; i < 6 * 25; i += THREADS) s_c1w[i] = __ldg(&c1w[i]);
    for (int i = tid; i < 16 * 150; i += THREADS) s_c2w[i] = __ldg(&c2w[i]);
    if (tid < 6) s_c1b[tid] = __ldg(&c1b[tid]);
    if (tid < 16) s_c2b[tid] = __ldg(&c2b[tid]);
  }
  __syncthreads();

  // Stage 1: conv1 + ReLU + pool. One thread per pooled output: a 6x6 input patch covers the four
  // 5x5 windows of its 2x2 pooling cell.
  for (int t = tid; t < IMGS * 6 * 196; t += THREADS) {
    const int img = t / 1176, r = t % 1176;
    const int c = r / 196, q = r % 196, py = q / 14, px = q % 14;
    const float* in = s_in + img * 1024 + (2 * py) * 32 + 2 * px;
    float p[6][6];
#pragma unroll
    for (int i = 0; i < 6; ++i)
#pragma unroll
      for (int j = 0; j < 6; ++j) p[i][j] = in[i * 32 + j];
    float s00 = 0.0f, s01 = 0.0f, s10 = 0.0f, s11 = 0.0f;
    const float* w = s_c1w + c * 25;
#pragma unroll
    for (int ky = 0; ky < 5; ++ky)
#pragma unroll
      for (int kx = 0; kx < 5; ++kx) {
        const float wv = w[ky * 5 + kx];
        s00 = fmaf(wv, p[ky][kx], s00);
        s01 = fmaf(wv, p[ky][kx + 1], s01);
        s10 = fmaf(wv, p[ky + 1][kx], s10);
        s11 = fmaf(wv, p[ky + 1][kx + 1], s11);
      }
    s_p1[t] = fmaxf(fmaxf(fmaxf(s00, s01), fmaxf(s10, s11)) + s_c1b[c], 0.0f);
  }
  __syncthreads();

  // Stage 2: conv2 + ReLU + pool, same scheme over 6 input channels. Writes into s_in (images are dead).
  for (int t = tid; t < IMGS * 400; t += THREADS) {
    const int img = t / 400, r = t % 400;
    const int c = r / 25, q = r % 25, py = q / 5, px = q % 5;
    float s00 = 0.0f, s01 = 0.0f, s10 = 0.0f, s11 = 0.0f;
    for (int ci = 0; ci < 6; ++ci) {
      const float* in = s_p1 + img * 1176 + ci * 196 + (2 * py) * 14 + 2 * px;
      float p[6][6];
#pragma unroll
      for (int i = 0; i < 6; ++i)
#pragma unroll
        for (int j = 0; j < 6; ++j) p[i][j] = in[i * 14 + j];
      const float* w = s_c2w + c * 150 + ci * 25;
#pragma unroll
      for (int ky = 0; ky < 5; ++ky)
#pragma unroll
        for (int kx = 0; kx < 5; ++kx) {
          const float wv = w[ky * 5 + kx];
          s00 = fmaf(wv, p[ky][kx], s00);
          s01 = fmaf(wv, p[ky][kx + 1], s01);
          s10 = fmaf(wv, p[ky + 1][kx], s10);
          s11 = fmaf(wv, p[ky + 1][kx + 1], s11);
        }
    }
    s_p2[t] = fmaxf(fmaxf(fmaxf(s00, s01), fmaxf(s10, s11)) + s_c2b[c], 0.0f);
  }
  __syncthreads();

  // Stages 3-5: the fully connected layers; the last one writes the logits straight to global memory.
  fc_layer<400, 120, true>(f1w, f1b, s_p2, s_f1, IMGS);
  __syncthreads();
  fc_layer<120, 84, true>(f2w, f2b, s_f1, s_f2, IMGS);
  __syncthreads();
  fc_layer<84, 20, false>(f3w, f3b, s_f2, out + img0 * 20, nimg);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    batch = x.size(0)
    out = torch.empty([batch, 20], dtype=torch.float32, device=x.device)
    imgs_per_block = 4  # IMGS in the kernel
    kbench.launch("lenet5_fused", [(batch + imgs_per_block - 1) // imgs_per_block], [256],
                  (x, params["conv1.weight"], params["conv1.bias"], params["conv2.weight"], params["conv2.bias"],
                   params["fc1.weight"], params["fc1.bias"], params["fc2.weight"], params["fc2.bias"],
                   params["fc3.weight"], params["fc3.bias"], out, batch))
    return out
*/
