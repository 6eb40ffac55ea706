// Level 1 problem 21 (Sigmoid): the kernel is not extern "C", so its name is mangled and the
// launch finds no kernel called "sigmoid". Expected: launch_error.
__global__ void sigmoid(const float* x, float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [1], [32], (x, y, x.numel()))
    return y
*/
