// Level 1 problem 21 (Sigmoid): the kernel takes a struct by value, which a host program cannot
// pass. Expected: launch_error.
struct Span { const float* data; long long n; };
extern "C" __global__ void sigmoid(Span x, float* y) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [1], [32], (x, y))
    return y
*/
