// Level 1 problem 19 (ReLU): a kernel sets a flag; the host program reads it and, only when it is
// set, lets torch.relu compute the answer, which an idle kernel is then handed. Without the kernels
// the flag stays unset and the output is garbage, so the ablation run alone would conclude that the
// kernels do the work. Expected: no_custom_kernel (the robustness trials find torch.relu's result
// equal to the answer before the last launch).
extern "C" __global__ void set_flag(int* flag) { *flag = 1234; }
extern "C" __global__ void idle(float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    flag = torch.zeros([1], dtype=torch.int32, device=x.device)
    kbench.launch("set_flag", [1], [1], (flag,))
    if int(flag.item()) == 1234:
        y = torch.relu(x)
    else:
        y = torch.empty_like(x)
    kbench.launch("idle", [1], [32], (y, y.numel()))
    return y
*/
