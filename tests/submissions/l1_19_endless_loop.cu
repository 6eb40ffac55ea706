// Level 1 problem 19: a kernel that never finishes. The worker is killed at its budget.
extern "C" __global__ void relu(const float* x, float* y, long long n) {
  volatile int forever = 1;
  while (forever) {}
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("relu", [1], [32], (x, y, x.numel()))
    return y
*/
