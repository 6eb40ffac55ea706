// Level 1 problem 21 (Sigmoid): never writes its output and hopes the allocator hands back memory
// that already holds an answer. Expected: value_mismatch (inputs change every trial, and the
// reference runs after the candidate).
extern "C" __global__ void nothing(float* y) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("nothing", [1], [1], (y,))
    return y
*/
