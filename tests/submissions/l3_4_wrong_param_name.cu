// Level 3 problem 4 (LeNet-5): asks for params["fc1.weights"] (the state_dict name is
// "fc1.weight"). The program compiles; the lookup fails when forward runs. Expected: host_error,
// found only on a GPU machine (a CPU-only check answers not_checked).
extern "C" __global__ void first_layer_sum(const float* x, const float* w, float* out, int batch) {
  const int img = blockIdx.x * blockDim.x + threadIdx.x;
  if (img < batch)
    for (int o = 0; o < 20; ++o) out[img * 20 + o] = w[o] * x[img * 1024];
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    batch = x.size(0)
    out = torch.empty([batch, 20], dtype=torch.float32, device=x.device)
    kbench.launch("first_layer_sum", [(batch + 255) // 256], [256], (x, params["fc1.weights"], out, batch))
    return out
*/
