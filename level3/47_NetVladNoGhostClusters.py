import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """NetVLAD pooling (ghost clusters: 0): soft-assign features to clusters (matmul + BatchNorm +
    softmax, ghost columns dropped), aggregate residuals, intra-normalise, flatten, L2-normalise."""

    def __init__(self, cluster_size: int, feature_size: int, ghost_clusters: int):
        super().__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        self.ghost_clusters = ghost_clusters
        init_sc = 1 / math.sqrt(feature_size)
        clusters = cluster_size + ghost_clusters
        # assignment weights (w, b in the paper; here a bias-free projection followed by BatchNorm)
        self.clusters = nn.Parameter(init_sc * torch.randn(feature_size, clusters))
        self.batch_norm = nn.BatchNorm1d(clusters)
        # visual words c_k
        self.clusters2 = nn.Parameter(init_sc * torch.randn(1, feature_size, cluster_size))
        self.out_dim = cluster_size * feature_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        max_sample = x.size(1)
        x = x.view(-1, self.feature_size)  # (B*N, D)
        assignment = torch.matmul(x, self.clusters)  # (B*N, K+G)
        assignment = self.batch_norm(assignment)
        assignment = F.softmax(assignment, dim=1)
        assignment = assignment[:, :self.cluster_size]  # drop ghost clusters
        assignment = assignment.view(-1, max_sample, self.cluster_size)  # (B, N, K)
        a_sum = torch.sum(assignment, dim=1, keepdim=True)  # (B, 1, K)
        a = a_sum * self.clusters2  # (B, D, K)
        assignment = assignment.transpose(1, 2)  # (B, K, N)
        x = x.view(-1, max_sample, self.feature_size)  # (B, N, D)
        vlad = torch.matmul(assignment, x)  # (B, K, D)
        vlad = vlad.transpose(1, 2)  # (B, D, K)
        vlad = vlad - a
        vlad = F.normalize(vlad)  # intra-normalisation over D
        vlad = vlad.reshape(-1, self.cluster_size * self.feature_size)
        vlad = F.normalize(vlad)
        return vlad


batch_size = 2048
num_features = 100
num_clusters = 32
feature_size = 512
ghost_clusters = 0


def get_inputs():
    x = torch.rand(batch_size, num_features, feature_size)
    return [x]


def get_init_inputs():
    return [num_clusters, feature_size, ghost_clusters]
