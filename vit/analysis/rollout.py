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

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from torch import Tensor

from vit.model.modules import split_heads
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

    The ``int(ratio * (T - 1))`` smallest patch entries of every row are zeroed; where several
    entries equal the largest one dropped, they share its drop alike (see :func:`_discard_lowest_`).

    Args:
        attention: (..., T, T) head-fused attention.
        ratio: fraction in [0, 1) of the T-1 patch columns to drop per row.

    Returns:
        A new tensor of the same shape.
    """
    count = int(ratio * (attention.shape[-1] - num_prefix))
    if count <= 0:
        return attention.clone()
    dtype = attention.dtype if attention.dtype in (torch.float32, torch.float64) else torch.float32
    out = attention.detach().to("cpu", dtype).numpy().copy()  # (..., T, T), discarded in numpy (one thread)
    _discard_lowest_(out.reshape(-1, out.shape[-1]), count, num_prefix)  # every row of every map: (..., T) rows
    return torch.from_numpy(out).to(attention.device, attention.dtype)


def _discard_lowest_(rows: np.ndarray, count: int, num_prefix: int = 1, order: np.ndarray | None = None) -> None:
    """:func:`discard_lowest` in place on (R, T) float rows of attention, ``count`` patch entries per row.

    The row's count-th smallest patch entry is the threshold t: entries below it are zeroed,
    and the n entries equal to it share what is still to drop, m: each becomes t (1 - m / n).
    Without ties (n = 1, m = 1) that zeroes exactly the count-th; with ties the result does not
    depend on the order of the columns, and it changes little when rounding (float16 maps) makes
    near-equal entries equal. numpy's introselect takes ~20 ms for a (3,137, 3,136) map on one
    core, where ``torch.kthvalue`` takes ~120 ms and ``topk`` ~200 ms on two; the rest is a few
    passes of comparisons and masked arithmetic (assigning through a boolean mask, or finding the
    ties' positions, is ~5-10x slower).

    ``order``: the same rows as float16 maps kept them, viewed as int16 (for values >= 0 the bit patterns
    sort as the values do): the threshold and the comparisons are made on these, half the bytes (an
    int16 introselect takes ~8 ms for that map).
    """
    patches = rows[:, num_prefix:]  # (R, N), a view: writes land in ``rows``
    keys = patches if order is None else order[:, num_prefix:]
    at = np.partition(keys, count - 1, axis=-1)[:, count - 1 : count]  # (R, 1): the threshold, as a key
    below = keys < at
    tied = keys == at  # a few per row, the threshold among them
    still = count - np.count_nonzero(below, axis=-1)[:, None]  # (R, 1) >= 1: what the ties drop
    threshold = at if order is None else at.view(np.float16).astype(rows.dtype)
    each = (threshold * (still / np.count_nonzero(tied, axis=-1)[:, None])).astype(rows.dtype)  # (R, 1)
    np.logical_not(below, out=below)  # now: kept
    np.multiply(patches, below, out=patches)
    np.subtract(patches, each, out=patches, where=tied)


def discard_lowest_on_device(rows: Tensor, count: int, num_prefix: int = 1) -> Tensor:
    """:func:`_discard_lowest_` in torch, for maps on an accelerator: (R, T) rows -> a new (R, T) tensor.

    The same rule (the count-th smallest patch entry of a row is the threshold; those below it are zeroed, the
    ties share what is still to drop), with ``torch.kthvalue``, which a GPU takes in one kernel where the CPU
    prefers numpy's introselect (~6x faster there).
    """
    patches = rows[:, num_prefix:]  # (R, N)
    threshold = patches.kthvalue(count, dim=-1, keepdim=True).values  # (R, 1)
    below, tied = patches < threshold, patches == threshold
    still = count - below.sum(dim=-1, keepdim=True)  # (R, 1) >= 1: what the ties drop
    each = threshold * still / tied.sum(dim=-1, keepdim=True)  # (R, 1)
    out = rows.clone()
    out[:, num_prefix:] = torch.where(below, 0.0, torch.where(tied, patches - each, patches))
    return out


def rollout_factors(fused: Tensor, discard_ratio: float = 0.0, num_prefix: int = 1) -> Tensor:
    """Per-layer rollout matrices A_l = rownorm(discard(fused_l) + I): (..., T, T) -> (..., T, T)."""
    a = discard_lowest(fused, discard_ratio, num_prefix) if discard_ratio > 0 else fused.clone()
    a.diagonal(dim1=-2, dim2=-1).add_(1.0)  # the residual connection
    return a / a.sum(dim=-1, keepdim=True)


def attention_rollout(fused: Sequence[Tensor] | Tensor, discard_ratio: float = 0.0, num_prefix: int = 1) -> Tensor:
    """The full rollout matrix R_L = A_L ... A_1 from L head-fused maps (each (T, T)) -> (T, T).

    O(L T^3), every (T, T) product built: the plain reference that the row functions the app
    uses (:func:`rollout_rows` for the views, :func:`rollout_row_from_fused` for explanations)
    are tested against, and handy for small T.
    """
    result = None
    for layer_map in fused:
        a = rollout_factors(layer_map, discard_ratio, num_prefix)
        result = a if result is None else a @ result
    return result


def rollout_row_from_fused(fused: Sequence[Tensor] | Tensor, query: int = 0, upto: int | None = None) -> Tensor:
    """Row ``query`` of the rollout after ``upto`` layers, e_q^T A_upto ... A_1, without discarding: (T,).

    Straight from the head-fused maps F_l (L, T, T): with A_l = diag(1/s_l) (F_l + I) and
    s_l = rowsum(F_l) + 1, a row times A_l is (row / s_l) F_l + row / s_l: one vector-matrix
    product per layer, and no (T, T) matrix is built (at patch size 4 each would be 39 MB).
    """
    upto = len(fused) if upto is None else upto
    if not 1 <= upto <= len(fused):
        raise ValueError(f"upto must be from 1 to {len(fused)}, got {upto}")
    row = torch.zeros(fused[0].shape[-1], dtype=fused[0].dtype, device=fused[0].device)
    row[query] = 1.0
    for layer in range(upto - 1, -1, -1):
        f = fused[layer]
        scaled = row / (f.sum(dim=-1) + 1.0)
        row = scaled @ f + scaled
    return row


DISCARD_CHUNK = 256  # rows of a layer's map made float32, discarded and multiplied at once (3.2 MB at T = 3,137)
_chunk_threads: list = []  # two threads that take a layer's chunks side by side (numpy and torch free the GIL)


def _chunk_pool() -> ThreadPoolExecutor:
    if not _chunk_threads:
        _chunk_threads.append(ThreadPoolExecutor(max_workers=2, thread_name_prefix="rollout"))
    return _chunk_threads[0]


def rollout_rows(fused: Sequence[Tensor] | Tensor, query: int = 0, discard_ratio: float = 0.0,
                 num_prefix: int = 1) -> Tensor:
    """Row ``query`` of the rollout after every depth, in one pass down the layers: (L, T).

    Row u-1 is e_q^T A_u ... A_1 (u = 1..L), A_l = rownorm(discard(F_l) + I): row ``query`` of
    :func:`attention_rollout` over the first u layers, in O(L T^2). Going down from layer L to 1, the rows of
    every depth u >= l are multiplied by A_l together (:func:`times_layer`). Only rows of the kept maps are ever
    made float32 (maps kept in float16), a chunk at a time, never a whole (T, T) map.

    Args:
        fused: head-fused maps F_l, (L, T, T), any float dtype (float16 is computed in float32).
        query: the token whose row is wanted (0: the class token).
        discard_ratio: as :func:`discard_lowest`, per layer.
        num_prefix: the prefix tokens (class, distillation, registers), whose columns are never discarded.

    Returns:
        (L, T) float32 (float64 for float64 maps), computed on the maps' device and copied to the CPU (what the views
        draw); each row non-negative, summing to 1.
    """
    L, T = len(fused), fused[0].shape[-1]
    dtype = torch.float64 if fused[0].dtype == torch.float64 else torch.float32
    rows = torch.zeros(L, T, dtype=dtype, device=fused[0].device)  # on the maps' device; to the CPU at the end
    rows[:, query] = 1.0
    count = int(discard_ratio * (T - num_prefix))
    for layer in range(L - 1, -1, -1):
        rows[layer:] = times_layer(rows[layer:], fused[layer], count, num_prefix)  # the depths layer+1..L
    return rows.cpu()


def times_layer(rows: Tensor, kept: Tensor, count: int = 0, num_prefix: int = 1) -> Tensor:
    """(R, T) rows times A = rownorm(discard(F) + I), for a layer's head-fused map F = ``kept`` (T, T): (R, T).

    r A = (r / s) D + r / s with D the discarded map (``count`` patch entries of each row: :func:`discard_lowest`)
    and s = rowsum(D) + 1, so D is needed a few rows at a time: :data:`DISCARD_CHUNK` rows of it are made float32,
    discarded and multiplied while in the cache, two chunks side by side, and their products summed. A float16
    map's threshold is found on its bits. On the CPU: the discard in numpy (an introselect per row), the rest in
    torch (MKL takes the products ~4x faster than numpy's OpenBLAS).
    """
    kept = kept.detach()
    if kept.device.type != "cpu":  # on an accelerator: in torch, on its device
        return times_whole_layer(rows, kept, count, num_prefix)
    T = kept.shape[-1]
    order = kept.view(torch.int16).numpy() if count > 0 and kept.dtype == torch.float16 else None

    def chunk(start: int) -> tuple[Tensor, Tensor]:
        d = kept[start : start + DISCARD_CHUNK].to(rows.dtype, copy=True)  # (c, T): D's rows, float32
        if count > 0:
            _discard_lowest_(d.numpy(), count, num_prefix, None if order is None else order[start : start + len(d)])
        scaled = rows[:, start : start + len(d)] / (d.sum(dim=-1) + 1.0)  # (R, c)
        return scaled, scaled @ d  # (R, c), (R, T)

    parts = list(_chunk_pool().map(chunk, range(0, T, DISCARD_CHUNK)))
    out = torch.cat([scaled for scaled, _ in parts], dim=-1)  # r / s: the identity, the residual path
    for _, product in parts:
        out += product
    return out


def times_whole_layer(rows: Tensor, kept: Tensor, count: int = 0, num_prefix: int = 1) -> Tensor:
    """:func:`times_layer` as an accelerator takes it: the whole map at once, in torch, on the map's device."""
    d = kept.detach().to(rows.dtype)  # (T, T)
    if count > 0:
        d = discard_lowest_on_device(d, count, num_prefix)
    scaled = rows.to(d.device) / (d.sum(dim=-1) + 1.0)  # (R, T)
    return scaled @ d + scaled


def attention_from_qk(
    queries: Tensor, keys: Tensor, num_heads: int, query: int | None = None, head: int | None = None
) -> Tensor:
    """softmax(q k^T / sqrt(d)) per head from a layer's projected queries and keys.

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
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (h, T or 1, T)
    weights = scores.softmax(dim=-1)
    weights = weights[:, 0] if query is not None else weights
    return weights[0] if head is not None else weights


def patch_distances(grid: tuple[int, int], patch_size: int, device=None) -> Tensor:
    """d_ij = P * ||(r_i, c_i) - (r_j, c_j)||_2 between the patches of a grid, in pixels: (N, N)."""
    rows, cols = grid
    r, c = torch.meshgrid(torch.arange(rows, device=device), torch.arange(cols, device=device), indexing="ij")
    centres = torch.stack([r.flatten(), c.flatten()], dim=-1).float()  # (N, 2), row-major as the tokens
    return torch.cdist(centres, centres) * patch_size  # (N, N)


def mean_attention_distance(weights: Tensor, distances: Tensor) -> Tensor:
    """Mean attention distance of every head (ViT paper, Fig. 7 right): (..., h, T, T) -> (..., h).

    Among the patch tokens only (the prefix tokens' rows and columns dropped: the class token's, and
    any distillation token's or registers'; the prefix is the T - N tokens before the patches), each row of the
    attention is renormalised to sum to 1; a query patch i's distance is sum_j A_ij d_ij
    and a head's value is the mean over the N query patches.

    One (N, N) map at a time (a head of an image), each row's sum_j A_ij d_ij as a batched
    dot product (no (N, N) temporary), so the extra memory is the (N, N) distances alone
    whatever h and the batch are: at patch size 4 on ViT-B, 39 MB beside a layer's 470 MB
    of weights. Cost: 3 N^2 flops per head, against the 2 T^2 D/h the scores and the
    weighted values each cost: 1/40 of the attention's for ViT-B (measured on 2 CPU cores
    at patch size 4: ~0.2 s per layer against ~2 s for the layer).

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
        patches = w[prefix:, prefix:].float()  # (N, N): patch rows, patch columns
        weighted = (patches.unsqueeze(1) @ distances.unsqueeze(2)).flatten()  # (N, 1, N) @ (N, N, 1) -> (N,)
        out[i] = (weighted / patches.sum(dim=-1)).mean()
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
