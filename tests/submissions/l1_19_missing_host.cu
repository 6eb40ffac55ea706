// Level 1 problem 19: the kernel is fine but there is no kbench:host block.
extern "C" __global__ void relu(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
