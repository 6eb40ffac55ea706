// Level 2 problem 1 (Conv2d, ReLU, bias add): forward forgets the params argument, so it does not
// match the problem's inputs. Expected: host_error.
extern "C" __global__ void relu_bias(float* y, const float* bias, long long n, int hw, int channels) {}

/* kbench:host
def forward(x: Tensor) -> Tensor:
    return x
*/
