# Level 3 problem 46 (NetVLAD with ghost clusters): a ModelNew that uses `math` without importing it,
# as model outputs do when they copy the reference's __init__. The reference imports math, and
# upstream's eval runs the reference's code and the submission's in one namespace, so there it
# works; kbench gives a submission the reference's imports too. A kernel does the last step (the
# final L2 normalisation of each row), PyTorch the rest. Expected: correct under every rule.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

// One block per row: y = x / max(||x||, 1e-12), as F.normalize.
__global__ void l2_normalize_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float partial[256];
    const float* row = x + blockIdx.x * cols;
    float sum = 0.0f;
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) sum += row[i] * row[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    const float scale = 1.0f / fmaxf(sqrtf(partial[0]), 1e-12f);
    for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) y[blockIdx.x * cols + i] = row[i] * scale;
}

torch::Tensor l2_normalize_rows(torch::Tensor x) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    l2_normalize_rows_kernel<<<(unsigned)x.size(0), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.size(1));
    return y;
}
"""

ext = load_inline(
    name="netvlad_l2_normalize_rows",
    cpp_sources="torch::Tensor l2_normalize_rows(torch::Tensor x);",
    cuda_sources=source,
    functions=["l2_normalize_rows"],
)


class ModelNew(nn.Module):
    def __init__(self, cluster_size, feature_size, ghost_clusters):
        super().__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        self.ghost_clusters = ghost_clusters
        init_sc = 1 / math.sqrt(feature_size)  # noqa: F821 (imported by the reference, not here)
        clusters = cluster_size + ghost_clusters
        self.clusters = nn.Parameter(init_sc * torch.randn(feature_size, clusters))
        self.batch_norm = nn.BatchNorm1d(clusters)
        self.clusters2 = nn.Parameter(init_sc * torch.randn(1, feature_size, cluster_size))
        self.out_dim = cluster_size * feature_size

    def forward(self, x):
        max_sample = x.size(1)
        x = x.view(-1, self.feature_size)
        assignment = self.batch_norm(torch.matmul(x, self.clusters))
        assignment = F.softmax(assignment, dim=1)[:, : self.cluster_size]
        assignment = assignment.view(-1, max_sample, self.cluster_size)
        a = torch.sum(assignment, dim=1, keepdim=True) * self.clusters2
        vlad = torch.matmul(assignment.transpose(1, 2), x.view(-1, max_sample, self.feature_size))
        vlad = F.normalize(vlad.transpose(1, 2) - a)
        return ext.l2_normalize_rows(vlad.reshape(-1, self.cluster_size * self.feature_size))
