"""Plain references the package's fast paths are tested against, built on the package's own pieces.

Attention rollout as the whole product R_L = A_L ... A_1 (O(L T^3), every (T, T) product built), against which
``vit.analysis.rollout.rollout_rows`` (O(L T^2), one pass down the layers) is checked; the discard on a whole map;
the mean attention distance of whole maps, which the tracer sums a block of rows at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from vit.analysis import rollout


def discard_lowest(attention: Tensor, ratio: float, num_prefix: int = 1) -> Tensor:
    """Zero the lowest ``ratio`` of each row's T - prefix patch columns (``rollout.discard_``), never a prefix
    token's column: (..., T, T) -> a new tensor of the same shape and dtype."""
    T = attention.shape[-1]
    count = int(ratio * (T - num_prefix))
    if count <= 0:
        return attention.clone()
    computed = torch.float64 if attention.dtype == torch.float64 else torch.float32
    rows = attention.detach().reshape(-1, T).to(computed, copy=True)  # (R, T)
    return rollout.discard_(rows, count, num_prefix).reshape(attention.shape).to(attention.dtype)


def rollout_factors(fused: Tensor, discard_ratio: float = 0.0, num_prefix: int = 1) -> Tensor:
    """Per-layer rollout matrices A_l = rownorm(discard(fused_l) + I): (..., T, T) -> (..., T, T)."""
    a = discard_lowest(fused, discard_ratio, num_prefix) if discard_ratio > 0 else fused.clone()
    a.diagonal(dim1=-2, dim2=-1).add_(1.0)  # the residual connection
    return a / a.sum(dim=-1, keepdim=True)


def attention_rollout(fused: Sequence[Tensor] | Tensor, discard_ratio: float = 0.0, num_prefix: int = 1) -> Tensor:
    """The full rollout matrix R_L = A_L ... A_1 from L head-fused maps (each (T, T)) -> (T, T)."""
    result = None
    for layer_map in fused:
        a = rollout_factors(layer_map, discard_ratio, num_prefix)
        result = a if result is None else a @ result
    return result


def mean_attention_distance(weights: Tensor, distances: Tensor) -> Tensor:
    """Mean attention distance of every head (ViT paper, Fig. 7 right): (..., h, T, T), (N, N) -> (..., h), pixels.

    Among the patch tokens only (the prefix's rows and columns dropped, rows renormalised), query patch i's
    distance is sum_j A_ij d_ij; a head's value is the mean over the N query patches.
    """
    N, T = distances.shape[-1], weights.shape[-1]
    if T <= N or weights.shape[-2] != T:
        raise ValueError(f"expected weights over {N + 1} tokens (N+1) for {N} patches, got {tuple(weights.shape)}")
    prefix = T - N
    maps = weights.reshape(-1, T, T)  # (B h, T, T)
    distances = distances.to(device=weights.device, dtype=torch.float32)
    out = torch.empty(maps.shape[0], dtype=torch.float32, device=weights.device)
    for i, w in enumerate(maps):
        out[i] = rollout.distance_sums(w[prefix:, prefix:].float(), distances) / N  # (N, N): patch rows, columns
    return out.reshape(weights.shape[:-2])
