// Level 1 problem 21 (Sigmoid): asks PyTorch for 200 GB on the GPU. Expected: runtime_error (out of memory).
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty([50000000000], dtype=torch.float32, device=x.device)
    kbench.launch("sigmoid", [1], [32], (x, y, x.numel()))
    return y
*/
