// Level 3 problem 4 (LeNet-5): the host program uses IMGS, a #define of the device code, which
// the TorchScript host program cannot see (undefined value). Expected: host_error, before any GPU work.
#define IMGS 4

extern "C" __global__ void lenet5(const float* x, float* out, int batch) {
  const int img = blockIdx.x * IMGS + threadIdx.x / 64;
  if (img < batch && threadIdx.x % 64 < 20) out[img * 20 + threadIdx.x % 64] = x[img * 1024];
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    batch = x.size(0)
    out = torch.empty([batch, 20], dtype=torch.float32, device=x.device)
    kbench.launch("lenet5", [(batch + IMGS - 1) // IMGS], [256], (x, out, batch))
    return out
*/
