// Level 1 problem 21 (Sigmoid): asks for 300 KiB of dynamic shared memory (an H100 block gets at
// most 227 KiB). Expected: launch_error.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [1], [32], (x, y, x.numel()), 300 * 1024)
    return y
*/
