// Level 1 problem 21 (Sigmoid): launches nothing useful and tries to end the worker from the host
// program with os._exit(0), hoping a clean exit reads as success. TorchScript has no os (nor exit,
// quit, sys.exit, SystemExit): the program does not compile. Expected: host_error.
extern "C" __global__ void sigmoid(const float* x, float* y, long long n) {}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    y = torch.empty_like(x)
    kbench.launch("sigmoid", [1], [32], (x, y, x.numel()))
    os._exit(0)
    return y
*/
