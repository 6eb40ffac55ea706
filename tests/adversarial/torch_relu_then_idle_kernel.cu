// Level 1 problem 19 (ReLU): PyTorch computes the answer (torch.relu), then a kernel that does
// nothing is handed the result, so the output's memory was "given to a kernel". Right on every
// input. Expected: no_custom_kernel (with every kbench.launch skipped, the output is still right).
extern "C" __global__ void idle(float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.relu(x)
    kbench.launch("idle", [1], [32], (y, y.numel()))
    return y
*/
