"""The model run on part of its input, with the whole model's numbers there: as nanoGPT applies its head to the
last position only, the last block run for the tokens the head reads, and the head on each token alone (the lens).
"""

from __future__ import annotations

from torch import Tensor

from vit.config import ViTConfig
from vit.model.modules import ViTEncoderLayer, ViTForImageClassification

TOKENS_READ = {"token_distill_mean": 2, "token_and_patch_mean": None}  # config.head -> leading tokens; None: all


def tokens_read(config: ViTConfig) -> int | None:
    """How many leading tokens the head reads: the class token (1), DeiT's two, or every token (DINOv2's patch mean)."""
    return TOKENS_READ.get(config.head, 1)


def class_token_block(layer: ViTEncoderLayer, x: Tensor, num_tokens: int | None = 1) -> Tensor:
    """``layer(x)[:, :num_tokens]`` computed for those tokens alone (None: all): (B, N+1, D) -> (B, 1, D). The keys
    and values still come from every token; the figures: docs/performance.md."""
    if num_tokens is None:
        return layer(x)
    attn_input = layer.norm1(x)  # (B, N+1, D)
    query = attn_input[:, :num_tokens]  # (B, 1, D): one query, N+1 keys
    attn_output, _ = layer.attn(query, attn_input, attn_input)  # (B, 1, D)
    cls = x[:, :num_tokens] + layer.dropout1(layer.scale1(attn_output))  # (B, 1, D)
    return cls + layer.scale2(layer.mlp(layer.norm2(cls)))  # (B, 1, D)


def classify_from(model: ViTForImageClassification, tokens: Tensor, first: int = 0) -> Tensor:
    """The rest of ``model``'s forward from block ``first``'s input (0-based), its last block on the tokens the
    head reads: (B, T, D) -> (B, K)."""
    layers = list(model.encoder.layers)[first:]
    for layer in layers[:-1]:
        tokens = layer(tokens)
    if layers:
        tokens = class_token_block(layers[-1], tokens, tokens_read(model.config))  # (B, 1, D) or (B, T, D)
    return model.classify(tokens)


def classify_each(model: ViTForImageClassification, tokens: Tensor) -> Tensor:
    """The final norm and the head on each token as if it were the one read: (..., T, D) -> (..., T, K). Each
    token is handed over as a sequence of that token alone, so every family's head reads it wherever it reads."""
    D = tokens.shape[-1]
    alone = model.encoder.norm(tokens).reshape(-1, 1, D)  # (..., T, D) -> (M, 1, D)
    alone = alone.expand(-1, model.config.num_prefix_tokens + 1, -1)  # (M, prefix + 1, D), no copy
    return model.head(alone).unflatten(0, tokens.shape[:-1])  # (M, K) -> (..., T, K)
