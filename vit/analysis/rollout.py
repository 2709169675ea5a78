"""Attention rollout and the other maps read off attention: pure functions (tensors in, new tensors out).

* Attention rollout: Abnar & Zuidema 2020, "Quantifying Attention Flow in
  Transformers". Per layer the heads are fused (mean, max or min), optionally
  the weakest links of each row are discarded (never the class-token column),
  the identity is added for the residual path and rows are re-normalised to
  sum to 1; the layers are then multiplied: R_l = A_l R_{l-1}, R_0 = I.
* Raw attention of any query token (class token or a patch) at any layer and
  head, recomputed exactly from that layer's queries and keys.
* Mean attention distance: Dosovitskiy et al. 2021, "An Image is Worth 16x16
  Words", Fig. 7 right: how far, in pixels, each head looks on average.
* A whole attention matrix under a decoder's causal mask (chapter 11.4.2), and a
  block-max downsampling that keeps the class token's row and column, for display.

Token 0 is the class token; tokens 1..N are the patches in row-major order.
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


def discard_lowest(attention: Tensor, ratio: float, num_prefix: int = 1) -> Tensor:
    """Zero the lowest ``ratio`` of each row's patch columns; column 0 (class token) is never dropped.

    Nor are the other prefix tokens' columns (``num_prefix``: DeiT's distillation token, registers).
    The ``int(ratio * (T - prefix))`` smallest patch entries of every row go (:func:`discard_`).

    Args:
        attention: (..., T, T) head-fused attention.
        ratio: fraction in [0, 1) of the T - prefix patch columns to drop per row.

    Returns:
        A new tensor of the same shape and dtype.
    """
    T = attention.shape[-1]
    count = int(ratio * (T - num_prefix))
    if count <= 0:
        return attention.clone()
    rows = attention.detach().reshape(-1, T).to(_computed(attention.dtype), copy=True)  # (R, T)
    return discard_(rows, count, num_prefix).reshape(attention.shape).to(attention.dtype)


def discard_(rows: Tensor, count: int, num_prefix: int = 1, kept: Tensor | None = None) -> Tensor:
    """The discard, in place on (R, T) rows of attention: ``count`` patch entries of each row go. Returns ``rows``.

    The row's count-th smallest patch entry is the threshold t: entries below it are zeroed,
    and the n entries equal to it share what is still to drop, m: each becomes t (1 - m / n).
    Without ties (n = 1, m = 1) that zeroes exactly the count-th; with ties the result does not
    depend on the order of the columns, and it changes little when rounding (float16 maps) makes
    near-equal entries equal. ``kept``: the same rows as a float16 map kept them, where the threshold is found.
    """
    patches = rows[:, num_prefix:]  # (R, N), a view: writes land in ``rows``
    threshold = _kth_smallest(patches if kept is None else kept[:, num_prefix:], count).to(rows.dtype)  # (R, 1)
    below, tied = patches < threshold, patches == threshold  # the threshold is among the tied
    still = count - torch.count_nonzero(below, dim=-1).unsqueeze(-1)  # (R, 1) >= 1: what the ties drop
    each = threshold * (still / torch.count_nonzero(tied, dim=-1).unsqueeze(-1))  # (R, 1)
    patches.mul_(below.logical_not_())  # below: now the kept
    patches.sub_(tied * each)
    return rows


def _kth_smallest(rows: Tensor, k: int) -> Tensor:
    """Each row's k-th smallest entry: (R, N) -> (R, 1), in the rows' dtype.

    On the CPU numpy's introselect, ~6x faster there than ``torch.kthvalue`` (~20 ms for a float32
    (3,137, 3,136) map on one core); a float16 map's on its bits viewed as int16 (for values >= 0 they
    sort as the values do: half the bytes, ~8 ms). Elsewhere ``torch.kthvalue``, one kernel on a GPU.
    """
    if rows.device.type != "cpu":
        return rows.kthvalue(k, dim=-1, keepdim=True).values
    keys = rows.view(torch.int16) if rows.dtype == torch.float16 else rows
    at = np.partition(keys.numpy(), k - 1, axis=-1)[:, k - 1 : k]
    return torch.from_numpy(at).view(rows.dtype)


def _computed(dtype: torch.dtype) -> torch.dtype:
    """What rollout computes a map in: float64 maps in float64, every other (float16, bfloat16, float32) in float32."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def rollout_factors(fused: Tensor, discard_ratio: float = 0.0, num_prefix: int = 1) -> Tensor:
    """Per-layer rollout matrices A_l = rownorm(discard(fused_l) + I): (..., T, T) -> (..., T, T)."""
    a = discard_lowest(fused, discard_ratio, num_prefix) if discard_ratio > 0 else fused.clone()
    a.diagonal(dim1=-2, dim2=-1).add_(1.0)  # the residual connection
    return a / a.sum(dim=-1, keepdim=True)


def attention_rollout(fused: Sequence[Tensor] | Tensor, discard_ratio: float = 0.0, num_prefix: int = 1) -> Tensor:
    """The full rollout matrix R_L = A_L ... A_1 from L head-fused maps (each (T, T)) -> (T, T).

    O(L T^3), every (T, T) product built: the plain reference that :func:`rollout_rows`, the rollout the
    app uses, is tested against, and handy for small T.
    """
    result = None
    for layer_map in fused:
        a = rollout_factors(layer_map, discard_ratio, num_prefix)
        result = a if result is None else a @ result
    return result


DISCARD_CHUNK = 256  # rows of a layer's map made float32, discarded and multiplied at once (3.2 MB at T = 3,137)


def rollout_rows(fused: Sequence[Tensor] | Tensor, query: int = 0, discard_ratio: float = 0.0,
                 num_prefix: int = 1, every_depth: bool = True) -> Tensor:
    """Row ``query`` of the rollout after every depth, in one pass down the layers: (L, T).

    Row u-1 is e_q^T A_u ... A_1 (u = 1..L), A_l = rownorm(discard(F_l) + I): row ``query`` of
    :func:`attention_rollout` over the first u layers, in O(L T^2). Going down from layer L to 1, the rows of
    every depth u >= l are multiplied by A_l together (:func:`times_layer`); no (T, T) product is built, and
    only :data:`DISCARD_CHUNK` rows of a map are made float32 at a time (maps may be kept in float16).

    Args:
        fused: head-fused maps F_l, (L, T, T), any float dtype (float16 is computed in float32).
        query: the token whose row is wanted (0: the class token).
        discard_ratio: as :func:`discard_lowest`, per layer.
        num_prefix: the prefix tokens (class, distillation, registers), whose columns are never discarded.
        every_depth: False: the row after all L layers only, (1, T) (L times fewer products).

    Returns:
        (L, T), or (1, T), float32 (float64 for float64 maps), computed on the maps' device and copied to the CPU
        (what the views draw); each row non-negative, summing to 1.
    """
    L, T = len(fused), fused[0].shape[-1]
    rows = torch.zeros(L if every_depth else 1, T, dtype=_computed(fused[0].dtype), device=fused[0].device)
    rows[:, query] = 1.0
    count = int(discard_ratio * (T - num_prefix))
    for layer in range(L - 1, -1, -1):
        live = rows[layer:] if every_depth else rows  # the depths layer+1..L
        live[:] = times_layer(live, fused[layer], count, num_prefix)
    return rows.cpu()


def times_layer(rows: Tensor, kept: Tensor, count: int = 0, num_prefix: int = 1) -> Tensor:
    """(R, T) rows times A = rownorm(discard(F) + I), for a layer's head-fused map F = ``kept`` (T, T): (R, T).

    r A = (r / s) D + r / s with D the discarded map (``count`` patch entries of each row: :func:`discard_`) and
    s = rowsum(D) + 1, so D is needed a few rows at a time: :data:`DISCARD_CHUNK` rows of it are made float32 (or
    float64), discarded and multiplied while in the cache, on the CPU two chunks side by side (numpy and torch
    free the GIL), and their products summed.
    """
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
    """softmax(q k^T / sqrt(d)) per head from a layer's projected queries and keys (the model's own
    :func:`~vit.model.modules.attention_weights`).

    Args:
        queries, keys: (T, D) outputs of ``q_proj`` and ``k_proj`` for one image.
        num_heads: h.
        query: a token index for one row, or None for the whole map.
        head: one head (0-based), or None for all h; one head's whole map costs T^2
            floats instead of h T^2 (at patch size 4: 39 MB instead of 470 MB).

    Returns:
        (h, T) for one query token, or (h, T, T); without the h when ``head`` is given.
    """
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
    N patches, ``distances`` (R, N) between them -> (...,). The tracer adds these up a block of rows at a time."""
    weighted = torch.einsum("...rn,rn->...r", rows, distances)  # (..., R): no (R, N) temporary per head
    return (weighted / rows.sum(dim=-1)).sum(dim=-1)


def mean_attention_distance(weights: Tensor, distances: Tensor) -> Tensor:
    """Mean attention distance of every head (ViT paper, Fig. 7 right): (..., h, T, T) -> (..., h).

    Among the patch tokens only (the prefix tokens' rows and columns dropped: the class token's, and
    any distillation token's or registers'; the prefix is the T - N tokens before the patches), each row of the
    attention is renormalised to sum to 1; a query patch i's distance is sum_j A_ij d_ij
    and a head's value is the mean over the N query patches.

    One (N, N) map at a time (a head of an image), :func:`distance_sums` of its rows, so the extra memory is
    the (N, N) distances alone whatever h and the batch are. Cost: 3 N^2 flops per head, against the 2 T^2 D/h the
    scores and the weighted values each cost: 1/40 of the attention's for ViT-B.

    Args:
        weights: attention weights (..., h, T, T), T = N + prefix, rows summing to 1.
        distances: (N, N) from :func:`patch_distances`.

    Returns:
        (..., h) distances in pixels (float32).
    """
    N, T = distances.shape[-1], weights.shape[-1]
    if T <= N or weights.shape[-2] != T:
        raise ValueError(f"expected weights over {N + 1} tokens (N+1) for {N} patches, got {tuple(weights.shape)}")
    prefix = T - N
    maps = weights.reshape(-1, T, T)  # (B h, T, T), a view for contiguous weights
    distances = distances.to(device=weights.device, dtype=torch.float32)
    out = torch.empty(maps.shape[0], dtype=torch.float32, device=weights.device)
    for i, w in enumerate(maps):
        out[i] = distance_sums(w[prefix:, prefix:].float(), distances) / N  # (N, N): patch rows, patch columns
    return out.reshape(weights.shape[:-2])


def patch_grid(row: Tensor, grid: tuple[int, int], num_prefix: int = 1) -> Tensor:
    """A (T,) row over the tokens -> (rows, cols) over the patches (the prefix tokens' columns dropped).

    T = N + num_prefix: the class token's column, and DeiT's distillation token's and the registers'.
    """
    rows, cols = grid
    if row.shape[-1] != rows * cols + num_prefix:
        raise ValueError(f"expected {rows * cols + num_prefix} tokens for a {rows}x{cols} grid"
                         f"{'' if num_prefix == 1 else f' and {num_prefix} prefix tokens'}, got {row.shape[-1]}")
    return row[..., num_prefix:].reshape(*row.shape[:-1], rows, cols)


def causal(matrix: Tensor) -> Tensor:
    """What a decoder's causal mask leaves of an attention map: (..., T, T) -> (..., T, T), a new tensor.

    Entries above the diagonal (token i looking at a later token j > i) are zeroed and each
    row renormalised to sum to 1 over what remains: softmax over j <= i is exactly the
    encoder's row restricted to j <= i and renormalised.
    """
    kept = torch.tril(matrix)
    return kept / kept.sum(dim=-1, keepdim=True).clamp_min(1e-12)


def downsample_matrix(matrix: Tensor, factor: int, prefix: int = 1) -> Tensor:
    """Block max of a (T, T) attention map over ``factor`` x ``factor`` blocks of patch tokens.

    The ``prefix`` tokens (the class token; a distillation token, registers) keep their own rows and
    columns: the result is (prefix + n, prefix + n) with n = ceil((T - prefix) / factor); a prefix
    token's row has its patch columns block-maxed, and the prefix-by-prefix corner is unchanged. The max
    keeps a single strong link visible.
    """
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
