// Level 1 problem 100 (HingeLoss): writes the constant 1.0 and reads no input. With predictions in
// [0, 1) and targets in {-1, +1}, mean(clamp(1 - p * t, 0)) is 1 on every seed of the problem's own
// distribution, so KernelBench's five trials pass it (and time it thousands of times faster than
// eager). Expected: fragile (wrong on normal inputs); under --compat kernelbench-v0.1: correct, with its
// speedup flagged by the audit (far under the time it takes to read 4 GiB of predictions).
extern "C" __global__ void write_one(float* out) { *out = 1.0f; }

/* kbench:host
def forward(predictions: Tensor, targets: Tensor, params: Dict[str, Tensor]) -> Tensor:
    scalar_shape: List[int] = []
    out = torch.empty(scalar_shape, dtype=torch.float32, device=predictions.device)
    kbench.launch("write_one", [1], [1], (out,))
    return out
*/
