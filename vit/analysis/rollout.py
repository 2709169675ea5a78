"""Attention rollout and the other maps read off attention: pure functions (tensors in, new tensors out).

Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): R_l = A_l R_{l-1}, R_0 = I,
A_l = rownorm(discard(fuse_heads(W_l)) + I). Also the mean attention distance (Dosovitskiy et al. 2021, Fig. 7
right) and a decoder's causal mask (chapter 11.4.2). Token 0 is the class token; the patches follow the prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from torch import Tensor

from vit.model.modules import attention_weights, split_heads
from vit.validate import HEAD_FUSIONS


def fuse_heads(weights: Tensor, mode: str = "mean") -> Tensor:
    """(..., h, T, T) -> (..., T, T) by the mean, max or min over the heads."""
    if mode == "mean":
        return weights.mean(dim=-3)
    if mode == "max":
        return weights.amax(dim=-3)
    if mode == "min":
        return weights.amin(dim=-3)
    raise ValueError(f"head_fusion must be one of {', '.join(HEAD_FUSIONS)}, got {mode!r}")


def discard_(rows: Tensor, count: int, num_prefix: int = 1, kept: Tensor | None = None) -> Tensor:
    """The discard, in place on (R, T) rows: ``count`` patch entries of each row go. Entries below the count-th
    smallest t are zeroed; the n equal to it share the m still to drop, each becoming t (1 - m / n), so ties do not
    depend on the columns' order. ``kept``: the rows as a float16 map kept them."""
    patches = rows[:, num_prefix:]  # (R, N), a view: writes land in ``rows``
    threshold = _kth_smallest(patches if kept is None else kept[:, num_prefix:], count).to(rows.dtype)  # (R, 1)
    below, tied = patches < threshold, patches == threshold  # the threshold is among the tied
    still = count - torch.count_nonzero(below, dim=-1).unsqueeze(-1)  # (R, 1) >= 1: what the ties drop
    each = threshold * (still / torch.count_nonzero(tied, dim=-1).unsqueeze(-1))  # (R, 1)
    patches.mul_(below.logical_not_())  # below: now the kept
    patches.sub_(tied * each)
    return rows


def _kth_smallest(rows: Tensor, k: int) -> Tensor:
    """Each row's k-th smallest entry: (R, N) -> (R, 1). On the CPU numpy's introselect (docs/performance.md), a
    float16 map's on its bits viewed as int16 (for values >= 0 they sort as the values do)."""
    if rows.device.type != "cpu":
        return rows.kthvalue(k, dim=-1, keepdim=True).values
    keys = rows.view(torch.int16) if rows.dtype == torch.float16 else rows
    at = np.partition(keys.numpy(), k - 1, axis=-1)[:, k - 1 : k]
    return torch.from_numpy(at).view(rows.dtype)


def _computed(dtype: torch.dtype) -> torch.dtype:
    """What rollout computes a map in: float64 maps in float64, every other (float16, bfloat16, float32) in float32."""
    return torch.float64 if dtype == torch.float64 else torch.float32


DISCARD_CHUNK = 256  # rows of a layer's map made float32, discarded and multiplied at once (3.2 MB at T = 3,137)


def rollout_rows(fused: Sequence[Tensor] | Tensor, query: int = 0, discard_ratio: float = 0.0,
                 num_prefix: int = 1, every_depth: bool = True) -> Tensor:
    """Row ``query`` of the rollout after every depth: (L, T, T) maps -> (L, T), row u-1 = e_q^T A_u ... A_1, on
    the CPU, rows summing to 1. Going down from layer L, every depth's rows are multiplied by A_l together: O(L T^2),
    no (T, T) product. ``discard_ratio``: of the patch columns; ``every_depth`` False: (1, T) after all L only."""
    L, T = len(fused), fused[0].shape[-1]
    rows = torch.zeros(L if every_depth else 1, T, dtype=_computed(fused[0].dtype), device=fused[0].device)
    rows[:, query] = 1.0
    count = int(discard_ratio * (T - num_prefix))
    for layer in range(L - 1, -1, -1):
        live = rows[layer:] if every_depth else rows  # the depths layer+1..L
        live[:] = times_layer(live, fused[layer], count, num_prefix)
    return rows.cpu()


def times_layer(rows: Tensor, kept: Tensor, count: int = 0, num_prefix: int = 1) -> Tensor:
    """(R, T) rows times A = rownorm(discard(F) + I), F = ``kept`` (T, T): (R, T). As r A = (r / s) D + r / s with
    s = rowsum(D) + 1, D is made :data:`DISCARD_CHUNK` rows at a time (on the CPU two chunks side by side)."""
    kept = kept.detach()

    def chunk(start: int) -> tuple[Tensor, Tensor]:
        k = kept[start : start + DISCARD_CHUNK]  # (c, T), as kept
        d = k.to(rows.dtype, copy=True)  # D's rows
        if count > 0:
            discard_(d, count, num_prefix, k if k.dtype == torch.float16 else None)
        scaled = rows[:, start : start + len(d)] / (d.sum(dim=-1) + 1.0)  # (R, c): r / s
        return scaled, scaled @ d  # and (R, T): (r / s) D over these rows

    starts = range(0, kept.shape[-1], DISCARD_CHUNK)
    parts = list(_chunk_pool().map(chunk, starts) if kept.device.type == "cpu" else map(chunk, starts))
    out = torch.cat([scaled for scaled, _ in parts], dim=-1)  # r / s: the identity, the residual path
    for _, product in parts:
        out += product
    return out


_chunk_threads: list[ThreadPoolExecutor] = []  # made at the first rollout on the CPU


def _chunk_pool() -> ThreadPoolExecutor:
    if not _chunk_threads:
        _chunk_threads.append(ThreadPoolExecutor(max_workers=2, thread_name_prefix="rollout"))
    return _chunk_threads[0]


def attention_from_qk(
    queries: Tensor, keys: Tensor, num_heads: int, query: int | None = None, head: int | None = None
) -> Tensor:
    """softmax(q k^T / sqrt(d)) per head from one image's ``q_proj`` and ``k_proj`` outputs, (T, D) each:
    (h, T, T), or (h, T) for one ``query`` token; without the h for one ``head`` (0-based)."""
    q = split_heads(queries, num_heads)  # (T, D) -> (h, T, D/h), as the attention module splits them
    k = split_heads(keys, num_heads)
    if head is not None:
        if not 0 <= head < num_heads:
            raise ValueError(f"head must be from 0 to {num_heads - 1}, got {head}")
        q, k = q[head : head + 1], k[head : head + 1]  # (1, T, D/h)
    if query is not None:
        q = q[:, query : query + 1]  # (h, 1, D/h)
    weights = attention_weights(q, k)  # (h, T or 1, T)
    weights = weights[:, 0] if query is not None else weights
    return weights[0] if head is not None else weights


def patch_distances(grid: tuple[int, int], patch_size: int, device=None) -> Tensor:
    """d_ij = P * ||(r_i, c_i) - (r_j, c_j)||_2 between the patches of a grid, in pixels: (N, N)."""
    rows, cols = grid
    r, c = torch.meshgrid(torch.arange(rows, device=device), torch.arange(cols, device=device), indexing="ij")
    centres = torch.stack([r.flatten(), c.flatten()], dim=-1).float()  # (N, 2), row-major as the tokens
    return torch.cdist(centres, centres) * patch_size  # (N, N)


def distance_sums(rows: Tensor, distances: Tensor) -> Tensor:
    """sum_i (sum_j A_ij d_ij / sum_j A_ij) over query patches i: rows (..., R, N) of attention from R patches to the
    N patches, ``distances`` (R, N) between them -> (...,)."""
    weighted = torch.einsum("...rn,rn->...r", rows, distances)  # (..., R): no (R, N) temporary per head
    return (weighted / rows.sum(dim=-1)).sum(dim=-1)


def patch_grid(row: Tensor, grid: tuple[int, int], num_prefix: int = 1) -> Tensor:
    """A (T,) row over the tokens -> (rows, cols) over the patches: T = N + ``num_prefix``, whose columns go."""
    rows, cols = grid
    if row.shape[-1] != rows * cols + num_prefix:
        raise ValueError(f"expected {rows * cols + num_prefix} tokens for a {rows}x{cols} grid"
                         f"{'' if num_prefix == 1 else f' and {num_prefix} prefix tokens'}, got {row.shape[-1]}")
    return row[..., num_prefix:].reshape(*row.shape[:-1], rows, cols)


def causal(matrix: Tensor) -> Tensor:
    """What a decoder's causal mask leaves of an attention map: (..., T, T), above the diagonal zeroed, rows
    renormalised (softmax over j <= i is the encoder's row restricted and renormalised)."""
    kept = torch.tril(matrix)
    return kept / kept.sum(dim=-1, keepdim=True).clamp_min(1e-12)


def downsample_matrix(matrix: Tensor, factor: int, prefix: int = 1) -> Tensor:
    """Block max of a (T, T) attention map over ``factor`` x ``factor`` blocks of patch tokens: (p + n, p + n),
    n = ceil((T - p) / factor); the prefix tokens keep their rows. The max keeps a single strong link visible."""
    if factor <= 1:
        return matrix.clone()
    T, p = matrix.shape[-1], prefix
    n = -(-(T - p) // factor)
    pad = n * factor - (T - p)
    padded = torch.nn.functional.pad(matrix, (0, pad, 0, pad), value=float("-inf"))  # (T + pad, T + pad)
    patches = padded[p:, p:].reshape(n, factor, n, factor).amax(dim=(1, 3))  # (n, n)
    prefix_rows = padded[:p, p:].reshape(p, n, factor).amax(dim=-1)  # (p, n)
    prefix_cols = padded[p:, :p].reshape(n, factor, p).amax(dim=1)  # (n, p)
    out = matrix.new_empty(p + n, p + n)
    out[:p, :p] = matrix[:p, :p]
    out[:p, p:], out[p:, :p], out[p:, p:] = prefix_rows, prefix_cols, patches
    return out
