// Level 1 problem 21 (Sigmoid): launches a do-nothing kernel and returns its input unchanged.
// Expected: no_custom_kernel (the output never passed through a kernel of the submission).
extern "C" __global__ void touch(const float* x) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    kbench.launch("touch", [1], [1], (x,))
    return x
*/
