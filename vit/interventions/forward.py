"""What if? The encoder run on a subset of its tokens, with chosen heads switched off: pure torch functions.

A ViT, unlike a CNN, can run on any subset of its tokens: the kept patch tokens keep their own position
embeddings (added before the selection), the prefix tokens (class, distillation, registers) always stay,
and attention simply has fewer keys. No grey fill, no new pixels (the insight behind MAE, He et al. 2022).

A head switched off has its slice of the attention output, softmax(QKᵀ/√d) V (B, h, T, D/h), set to zero
("zero") or to its mean over the tokens ("mean") before the output projection: with the block's names,

    H = X + W_o concat_i( m_i head_i(LN(X)) ),   m_i = 0 for a head switched off.

Every function takes the chapter's modules (``vit.model.modules``) and leaves them untouched.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from vit.model.modules import ViTEncoderLayer, ViTForImageClassification, split_heads

ABLATIONS = ("zero", "mean")


def kept_tokens(kept_patches: Tensor, num_prefix: int) -> Tensor:
    """Token indices of the prefix tokens and the kept patches: (n,) patch indices -> (P + n,) token indices.

    Patch i (row-major, 0 = top-left) is token P + i: the prefix tokens come first (chapter 11.4's order).
    """
    prefix = torch.arange(num_prefix, device=kept_patches.device)
    return torch.cat([prefix, num_prefix + kept_patches])


def heads_on(ablate, num_layers: int, num_heads: int) -> Tensor:
    """(L, h) of ones, with zeros at the (layer, head) pairs switched off (1-based, as the app numbers them)."""
    on = torch.ones(num_layers, num_heads)
    for layer, head in ablate:
        on[layer - 1, head - 1] = 0.0
    return on


def attention(layer: ViTEncoderLayer, x: Tensor, on: Tensor | None = None, ablation: str = "zero",
              need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
    """The block's attention branch, MSA(LN(X)), with some heads' outputs switched off.

    Args:
        layer: one encoder block.
        x: (B, T, D), the block's input.
        on: (B, h) or (h,): 1 for a head kept, 0 for one switched off; None: every head.
        ablation: "zero" (the head's output is 0) or "mean" (its mean over the T tokens).
        need_weights: also return the softmax weights (B, h, T, T).

    Returns:
        (branch (B, T, D), weights or None); the branch before the block's LayerScale and residual add.
    """
    mha = layer.attn
    a = layer.norm1(x)  # (B, T, D)
    q = split_heads(mha.q_proj(a), mha.num_heads)  # (B, T, D) -> (B, h, T, D/h)
    k = split_heads(mha.k_proj(a), mha.num_heads)
    v = split_heads(mha.v_proj(a), mha.num_heads)
    weights = None
    if need_weights:
        weights = (q @ k.transpose(-2, -1) / math.sqrt(mha.head_dim)).softmax(dim=-1)  # (B, h, T, T)
        out = weights @ v  # (B, h, T, D/h)
    else:
        out = F.scaled_dot_product_attention(q, k, v)  # (B, h, T, D/h)
    if on is not None:
        m = on.to(out.dtype).reshape(-1, mha.num_heads, 1, 1)  # (B or 1, h, 1, 1)
        off = out.mean(dim=-2, keepdim=True) if ablation == "mean" else torch.zeros_like(out[..., :1, :])
        out = m * out + (1 - m) * off  # the heads switched off: 0, or their mean over the tokens
    out = out.transpose(1, 2).reshape(x.shape[0], -1, mha.embed_dim)  # (B, h, T, D/h) -> (B, T, D)
    return mha.out_proj(out), weights


def block(layer: ViTEncoderLayer, x: Tensor, on: Tensor | None = None, ablation: str = "zero",
          need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
    """One pre-norm block with some heads off: H = X + MSA'(LN(X)); Y = H + MLP(LN(H)). (B, T, D) -> (B, T, D).

    With every head on it is ``layer(x)`` (eval mode: no dropout).
    """
    branch, weights = attention(layer, x, on, ablation, need_weights)
    h = x + layer._scaled(1, branch)  # (B, T, D)
    return h + layer._scaled(2, layer.mlp(layer.norm2(h))), weights  # (B, T, D)


def encode(model: ViTForImageClassification, tokens: Tensor, on: Tensor | None = None, ablation: str = "zero",
           need_weights: bool = False, start: int = 0) -> tuple[Tensor, list[Tensor]]:
    """Blocks ``start``..L-1 on a token sequence, heads switched off where ``on`` says: (B, T, D) -> (B, T, D).

    Args:
        on: (L, h) for every image, or (L, B, h) per image; None: every head on.
        start: the first block run (0-based): ``tokens`` are that block's input.

    Returns:
        (the last block's output (B, T, D), each block's weights (B, h, T, T) if ``need_weights``).
    """
    weights = []
    for l in range(start, len(model.encoder.layers)):
        tokens, w = block(model.encoder.layers[l], tokens, None if on is None else on[l], ablation, need_weights)
        if need_weights:
            weights.append(w)
    return tokens, weights


def embed(model: ViTForImageClassification, x: Tensor, kept_patches: Tensor | None = None) -> Tensor:
    """The encoder's input tokens for the kept patches only: (B, C, H, W) -> (B, P + n, D).

    Position embeddings (and CLIP's pre-norm, per token) are applied to all N+1 tokens first, then
    the removed patches' tokens are dropped: each kept patch keeps its own position.
    """
    tokens = model.embedding(x)  # (B, C, H, W) -> (B, N+1, D)
    if kept_patches is None:
        return tokens
    return tokens[:, kept_tokens(kept_patches.to(tokens.device), model.config.num_prefix_tokens)]  # (B, P+n, D)


def fused_over_heads_on(weights: Tensor, on: Tensor | None) -> Tensor:
    """One layer's map for rollout from the heads still on: their mean, (h, T, T) -> (T, T).

    A head switched off passes nothing on, so it has no place in the flow rollout estimates; with every
    head of a layer off only the residual path is left (a map of zeros: rollout's A + I is then I).
    """
    if on is None:
        return weights.mean(dim=0)
    m = on.to(weights.dtype).reshape(-1, 1, 1)  # (h, 1, 1)
    count = float(m.sum())
    return (weights * m).sum(dim=0) / count if count else torch.zeros_like(weights[0])
