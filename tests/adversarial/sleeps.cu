// Level 1 problem 21 (Sigmoid): sleeps on the GPU for minutes. Expected: timeout.
extern "C" __global__ void slow(const float* x, float* y, long long n) {
  for (int i = 0; i < 1000000; ++i) __nanosleep(1000000);
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("slow", [1], [1], (x, y, x.numel()))
    return y
*/
