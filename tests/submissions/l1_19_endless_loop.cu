// Level 1 problem 19: a kernel that never finishes. The worker is killed at its budget.
// (The loop reads memory through a volatile pointer: a loop without side effects may be deleted.)
extern "C" __global__ void relu(const float* x, float* y, long long n) {
  while (*(volatile const float*)x >= -1.0f) {}
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("relu", [1], [32], (x, y, x.numel()))
    return y
*/
