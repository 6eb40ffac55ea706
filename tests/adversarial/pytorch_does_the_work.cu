// Level 1 problem 21 (Sigmoid): the answer comes from torch.sigmoid; a dummy kernel is launched
// to look busy. Expected: no_custom_kernel (the output was made by PyTorch, not by the submission).
extern "C" __global__ void touch(const float* x) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    kbench.launch("touch", [1], [1], (x,))
    return torch.sigmoid(x)
*/
