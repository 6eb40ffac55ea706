// Level 1 problem 21 (Sigmoid): a block of 2048 threads (the limit is 1024). Expected: launch_error.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [1], [2048], (x, y, x.numel()))
    return y
*/
