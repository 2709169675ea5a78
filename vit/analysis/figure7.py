"""What the weights themselves show, before any image: Dosovitskiy et al. 2021, Fig. 7.

* Fig. 7 left: the principal components of the patch-embedding kernels, the
  "filters" the first linear map projects each P x P patch on.
* Fig. 7 centre: the cosine similarity between the patches' position embeddings;
  a trained model's show the 2-D grid (rows and columns) it has learned.

Pure functions take tensors and return new ones; the ``loaded`` wrappers read
the model as it was loaded (after a patch-size change: the PI-resized kernels
and the resampled position embeddings).
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
    """The first ``k`` principal components of a set of kernels: (D, C, P, P) -> (k', C, P, P).

    The D kernels are flattened to rows (D, C P^2), centred over the D of them, and
    decomposed with an SVD; the right singular vectors with the largest singular values
    are the principal directions. ``k`` is capped at the rank available, k' = min(k, rank)
    (at most min(D - 1, C P^2) once centred). Each component's sign is fixed so its
    largest-magnitude entry is positive (an SVD's signs are arbitrary).

    Returns:
        (k', C, P, P): orthonormal once flattened, strongest component first.
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
    """Cosine similarity between the patches' position embeddings, class token's excluded: (N, N).

    Patches in row-major order, as the tokens; of the model as loaded (resampled
    to the grid when the patch size was changed).
    """
    # The rows of the prefix tokens that have one (the class token; a distillation token, registers) go first.
    pos = loaded.module.embedding.pos_embed.weight.detach()[0, loaded.config.num_pos_prefix_tokens:]  # -> (N, D)
    return cosine_similarity_matrix(pos).cpu()


def patch_filters(loaded: LoadedModel, k: int = 28) -> Tensor:
    """The first ``k`` principal components of the patch embedding's D kernels: (k, 3, P, P).

    Fig. 7 left of the ViT paper shows the first 28 of ViT-L/32. ``k`` is capped at the
    rank available (see :func:`principal_filters`).
    """
    kernels = loaded.module.embedding.patch_embed.proj.weight.detach()  # (D, 3, P, P)
    return principal_filters(kernels.cpu(), k)
