// Level 3 problem 4 (LeNet-5): a kernel with a type error. Expected: compile_error.
extern "C" __global__ void lenet(const float* x, float* out) {
  float* p = 3.0f;
  out[0] = x[0] + *p;
}

/* kbench:host
def forward(x: Tensor, params: Dict[str, Tensor]) -> Tensor:
    out = torch.empty([x.size(0), 10], dtype=x.dtype, device=x.device)
    kbench.launch("lenet", [1], [1], (x, out))
    return out
*/
