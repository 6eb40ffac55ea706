// Level 1 problem 21 (Sigmoid): executes __trap(). Expected: runtime_error.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) { __trap(); }

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [1], [32], (x, y, x.numel()))
    return y
*/
