// Level 1 problem 21 (Sigmoid): tries to read a file from the host program. Expected: host_error
// (file operators are refused before anything runs).
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    leaked = torch.from_file("/etc/hostname", False, 16, dtype=torch.uint8)
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [1], [32], (x, y, leaked.numel()))
    return y
*/
