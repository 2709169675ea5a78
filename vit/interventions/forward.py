"""What if? The encoder run on a subset of its tokens, with chosen heads switched off.

A ViT can run on any subset of its tokens (the insight behind MAE, He et al. 2022): the kept patches keep their
position embeddings, the prefix tokens stay, attention has fewer keys. A head switched off has its slice of the
attention output set to zero or its mean: H = X + W_o concat_i( m_i head_i(LN(X)) ), m_i = 0 when off.
"""

from __future__ import annotations

import torch
from torch import Tensor

from vit.model.modules import ViTEncoderLayer, ViTForImageClassification

ABLATIONS = ("zero", "mean")


def kept_tokens(kept_patches: Tensor, num_prefix: int) -> Tensor:
    """Token indices of the prefix tokens and the kept patches: (n,) patch indices -> (P + n,) token indices; patch i
    (row-major, 0 = top-left) is token P + i."""
    prefix = torch.arange(num_prefix, device=kept_patches.device)
    return torch.cat([prefix, num_prefix + kept_patches])


def heads_on(ablate, num_layers: int, num_heads: int) -> Tensor:
    """(L, h) of ones, with zeros at the (layer, head) pairs switched off (1-based, as the app numbers them)."""
    on = torch.ones(num_layers, num_heads)
    for layer, head in ablate:
        on[layer - 1, head - 1] = 0.0
    return on


def heads_off(layer: ViTEncoderLayer, x: Tensor, on: Tensor | None, ablation: str = "zero") -> Tensor:
    """``layer(x)`` with the heads whose ``on`` entry, (h,) or (B, h), is 0 switched off: (B, T, D) -> (B, T, D).
    "zero": the block's own head mask; "mean": a hook on ``attend`` sets each such head to its mean over T."""
    if on is None or ablation == "zero":
        return layer(x, head_mask=on)

    def at_mean(_attend, _inputs, output):
        out, weights = output  # (B, h, T, D/h)
        mask = on.to(out.dtype).reshape(-1, out.shape[1], 1, 1)  # (B or 1, h, 1, 1)
        return mask * out + (1 - mask) * out.mean(dim=-2, keepdim=True), weights

    handle = layer.attn.attend.register_forward_hook(at_mean)
    try:
        return layer(x)
    finally:
        handle.remove()


def embed(model: ViTForImageClassification, x: Tensor, kept_patches: Tensor | None = None) -> Tensor:
    """The encoder's input tokens for the kept patches only: (B, C, H, W) -> (B, P + n, D). The removed patches'
    tokens are dropped after the position embeddings (and CLIP's pre-norm): each kept patch keeps its position."""
    tokens = model.embedding(x)  # (B, C, H, W) -> (B, N+1, D)
    if kept_patches is None:
        return tokens
    return tokens[:, kept_tokens(kept_patches.to(tokens.device), model.config.num_prefix_tokens)]  # (B, P+n, D)


def fused_over_heads_on(weights: Tensor, on: Tensor | None) -> Tensor:
    """One layer's map for rollout, the mean of the heads still on (one off passes nothing on): (h, T, T) -> (T, T).
    With every head off only the residual path is left (zeros: rollout's A + I is then I)."""
    if on is None:
        return weights.mean(dim=0)
    m = on.to(weights.dtype).reshape(-1, 1, 1)  # (h, 1, 1)
    count = float(m.sum())
    return (weights * m).sum(dim=0) / count if count else torch.zeros_like(weights[0])
