"""What if? The encoder run on a subset of its tokens, with chosen heads switched off: pure torch functions.

A ViT, unlike a CNN, can run on any subset of its tokens: the kept patch tokens keep their own position
embeddings (added before the selection), the prefix tokens (class, distillation, registers) always stay,
and attention simply has fewer keys. No grey fill, no new pixels (the insight behind MAE, He et al. 2022).

A head switched off has its slice of the attention output, softmax(QKᵀ/√d) V (B, h, T, D/h), set to zero
("zero") or to its mean over the tokens ("mean") before the output projection: with the block's names,

    H = X + W_o concat_i( m_i head_i(LN(X)) ),   m_i = 0 for a head switched off,

the attention module's own ``head_mask``. The last block can also run for the class token alone (a subset of
the queries, every key): :func:`class_token_block`. Every function takes the chapter's modules
(``vit.model.modules``) and leaves them untouched.
"""

from __future__ import annotations

import torch
from torch import Tensor

from vit.model.modules import ViTEncoderLayer, ViTForImageClassification

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


def block(layer: ViTEncoderLayer, x: Tensor, on: Tensor | None = None, ablation: str = "zero",
          need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
    """One pre-norm block with some heads off: H = X + MSA'(LN(X)); Y = H + MLP(LN(H)). (B, T, D) -> (B, T, D).

    The block's own modules in the block's order, its attention given the head mask; with every head
    on it is ``layer(x)`` (eval mode: no dropout).

    Args:
        layer: one encoder block.
        x: (B, T, D), the block's input.
        on: (B, h) or (h,): 1 for a head kept, 0 for one switched off; None: every head.
        ablation: "zero" (the head's output is 0) or "mean" (its mean over the T tokens).
        need_weights: also return the softmax weights (B, h, T, T).

    Returns:
        (the block's output (B, T, D), the weights or None).
    """
    attn_input = layer.norm1(x)  # (B, T, D)
    attn_output, weights = layer.attn(attn_input, attn_input, attn_input, need_weights=need_weights,
                                      head_mask=on, ablation=ablation)
    x = x + layer.dropout1(layer.scale1(attn_output))  # (B, T, D)
    x = x + layer.scale2(layer.mlp(layer.norm2(x)))  # (B, T, D)
    return x, weights


def class_token_block(layer: ViTEncoderLayer, x: Tensor, num_tokens: int | None = 1) -> Tensor:
    """The block's output for the class token alone: (B, N+1, D) -> (B, 1, D), equal to ``layer(x)[:, :1]``.

    As nanoGPT applies its head to the last position only: a head that reads the class token
    needs, in the last block, only its query, its row of attention, its output projection and
    its MLP (the keys and values still come from every token). ~83 % of the block's work is
    skipped: 7 % of ViT-B's forward pass, 21 % of the 4-layer shapes model's. ``num_tokens``
    leading tokens instead (DeiT's head reads 2: ``model.head.tokens_read``); None: all.
    """
    if num_tokens is None:
        return layer(x)
    attn_input = layer.norm1(x)  # (B, N+1, D)
    query = attn_input[:, :num_tokens]  # (B, 1, D): one query, N+1 keys
    attn_output, _ = layer.attn(query, attn_input, attn_input)  # (B, 1, D)
    cls = x[:, :num_tokens] + layer.dropout1(layer.scale1(attn_output))  # (B, 1, D)
    return cls + layer.scale2(layer.mlp(layer.norm2(cls)))  # (B, 1, D)


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
