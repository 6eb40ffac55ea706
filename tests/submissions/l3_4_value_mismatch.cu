// Level 3 problem 4 (LeNet-5): a plain one-thread-per-image version of the whole network that
// forgets fc3's bias. The 20 biases are U(-0.11, 0.11), so logits are off by up to ~0.1, far past
// the 1e-2 tolerance. Expected: value_mismatch.

// One conv (valid, stride 1, KxK) + bias + ReLU + 2x2 max-pool: in [CI][H][H] -> out [CO][(H-K+1)/2]^2.
template <int CI, int CO, int H, int K>
__device__ void conv_relu_pool(const float* in, const float* w, const float* b, float* out) {
  constexpr int P = (H - K + 1) / 2;
  for (int co = 0; co < CO; ++co)
    for (int py = 0; py < P; ++py)
      for (int px = 0; px < P; ++px) {
        float best = 0.0f;  // ReLU outputs are >= 0
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) {
            float s = b[co];
            for (int ci = 0; ci < CI; ++ci)
              for (int ky = 0; ky < K; ++ky)
                for (int kx = 0; kx < K; ++kx)
                  s += w[((co * CI + ci) * K + ky) * K + kx] * in[(ci * H + 2 * py + dy + ky) * H + 2 * px + dx + kx];
            best = fmaxf(best, s);
          }
        out[(co * P + py) * P + px] = best;
      }
}

template <int IN, int OUT>
__device__ void linear(const float* in, const float* w, const float* b, float* out, bool relu) {
  for (int o = 0; o < OUT; ++o) {
    float s = b ? b[o] : 0.0f;
    for (int i = 0; i < IN; ++i) s += w[o * IN + i] * in[i];
    out[o] = relu ? fmaxf(s, 0.0f) : s;
  }
}

extern "C" __global__ void lenet5(const float* x, const float* c1w, const float* c1b, const float* c2w,
                                  const float* c2b, const float* f1w, const float* f1b, const float* f2w,
                                  const float* f2b, const float* f3w, float* out, int batch) {
  const int img = blockIdx.x * blockDim.x + threadIdx.x;
  if (img >= batch) return;
  float p1[6 * 14 * 14], p2[400], h1[120], h2[84];
  conv_relu_pool<1, 6, 32, 5>(x + img * 1024, c1w, c1b, p1);
  conv_relu_pool<6, 16, 14, 5>(p1, c2w, c2b, p2);
  linear<400, 120>(p2, f1w, f1b, h1, true);
  linear<120, 84>(h1, f2w, f2b, h2, true);
  linear<84, 20>(h2, f3w, nullptr, out + img * 20, false);  // the bug: no fc3.bias
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    x = x.contiguous()
    batch = x.size(0)
    out = torch.empty([batch, 20], dtype=torch.float32, device=x.device)
    kbench.launch("lenet5", [(batch + 127) // 128], [128],
                  (x, params["conv1.weight"], params["conv1.bias"], params["conv2.weight"], params["conv2.bias"],
                   params["fc1.weight"], params["fc1.bias"], params["fc2.weight"], params["fc2.bias"],
                   params["fc3.weight"], out, batch))
    return out
*/
