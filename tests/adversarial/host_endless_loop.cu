// Level 1 problem 21 (Sigmoid): the host program never returns. Expected: timeout.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    i = 0
    while i >= 0:
        i = (i + 1) % 1000
    kbench.launch("sigmoid", [1], [32], (x, y, x.numel()))
    return y
*/
