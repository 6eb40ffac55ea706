// Level 1 problem 21 (Sigmoid): passes a float where the kernel takes a pointer. Expected: launch_error.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [1], [32], (1.5, y, x.numel()))
    return y
*/
