"""What the weights themselves show, before any image: Dosovitskiy et al. 2021, Fig. 7 left (the principal
components of the patch-embedding kernels) and centre (the cosine similarity of the patches' position embeddings,
where a trained model shows the grid it has learned), of the model as loaded (after a patch-size change: the
PI-resized kernels and the resampled position embeddings).
"""

from __future__ import annotations

import torch
from torch import Tensor

from vit.model.loaded import LoadedModel


def cosine_similarity_matrix(vectors: Tensor) -> Tensor:
    """(N, D) -> (N, N): cos(v_i, v_j) = v_i . v_j / (||v_i|| ||v_j||)."""
    unit = vectors.float() / torch.linalg.vector_norm(vectors.float(), dim=-1, keepdim=True).clamp_min(1e-12)
    return unit @ unit.T  # (N, D) @ (D, N) -> (N, N)


def principal_filters(kernels: Tensor, k: int) -> Tensor:
    """The first ``k`` principal components of a set of kernels: (D, C, P, P) -> (k', C, P, P), orthonormal once
    flattened, strongest first; k' = min(k, rank). Each component's sign is fixed so its largest-magnitude entry is
    positive (an SVD's signs are arbitrary).
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    D, C, P, Q = kernels.shape
    # float32: the top components agree with a float64 decomposition to ~1e-7, and LAPACK's
    # float64 SVD of ViT-B/32's (768, 3072) is several times slower on a CPU.
    rows = kernels.reshape(D, C * P * Q).float()  # (D, C, P, P) -> (D, 3 P^2)
    centred = rows - rows.mean(dim=0, keepdim=True)
    _, s, vh = torch.linalg.svd(centred, full_matrices=False)  # vh: (min(D, 3P^2), 3P^2)
    tol = s.max() * max(centred.shape) * torch.finfo(s.dtype).eps if len(s) else 0.0
    rank = int((s > tol).sum())
    comps = vh[: min(k, rank)]  # (k', 3 P^2)
    peak = comps.gather(1, comps.abs().argmax(dim=1, keepdim=True))  # (k', 1)
    comps = comps * torch.where(peak < 0, -1.0, 1.0).to(comps)
    return comps.to(kernels.dtype).reshape(-1, C, P, Q)


def position_similarity(loaded: LoadedModel) -> Tensor:
    """Cosine similarity between the patches' position embeddings, the prefix tokens' excluded: (N, N)."""
    # The rows of the prefix tokens that have one (the class token; a distillation token, registers) go first.
    pos = loaded.module.embedding.pos_embed.weight.detach()[0, loaded.config.num_pos_prefix_tokens:]  # -> (N, D)
    return cosine_similarity_matrix(pos).cpu()


def patch_filters(loaded: LoadedModel, k: int = 28) -> Tensor:
    """The first ``k`` principal components of the patch embedding's D kernels: (k, 3, P, P) (the paper shows
    ViT-L/32's first 28)."""
    kernels = loaded.module.embedding.patch_embed.proj.weight.detach()  # (D, 3, P, P)
    return principal_filters(kernels.cpu(), k)
