// Level 1 problem 21 (Sigmoid): passes a CPU tensor to a kernel. Expected: launch_error.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty([4], dtype=torch.float32)
    kbench.launch("sigmoid", [1], [32], (x, y, x.numel()))
    return x
*/
