"""The Vision Transformer of chapter 11.4 (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words"), under the
chapter's names, and nothing else:

    (B, C, H, W) -> (B, N, D) -> (B, N+1, D) -> ... -> (B, N+1, D) -> (B, D) -> (B, K)

The Hub's extra pieces (``vit.model.hubmodules``: prefix tokens, LayerScale, a pre-norm, QuickGELU, heads) are
``nn.Identity`` or the chapter's module when off, so the presets' forward and state-dict keys are the chapter's.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from vit.config import ViTConfig
from vit.model.hubmodules import HUB_HEADS, LayerScale, NoClassifier, PartialPositionEmbedding, PrefixTokens, QuickGELU


class PatchEmbedding(nn.Module):
    """Cuts the image into P x P patches and projects each to D dimensions: a convolution with kernel = stride = P
    is a linear map applied to every patch independently."""

    def __init__(self, patch_size: int, in_channels: int, embed_dim: int, bias: bool = True):
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size, bias=bias)

    def forward(self, x: Tensor) -> Tensor:
        x = self.proj(x)  # (B, C, H, W) -> (B, D, H/P, W/P)
        return x.flatten(2).transpose(1, 2)  # -> (B, N, D), patches in row-major order


class AddClassToken(nn.Module):
    """Prepends the learned class token to the patch tokens: (B, N, D) -> (B, N+1, D)."""

    def __init__(self, embed_dim: int):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))

    def forward(self, x: Tensor) -> Tensor:
        cls_token = self.cls_token.expand(x.shape[0], -1, -1)  # (1, 1, D) -> (B, 1, D)
        return torch.cat([cls_token, x], dim=1)  # (B, N, D) -> (B, N+1, D)


class PositionEmbedding(nn.Module):
    """Adds one learned vector per position (class token first, then patches row by row)."""

    def __init__(self, num_tokens: int, embed_dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(1, num_tokens, embed_dim).normal_(std=0.02))

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[1] != self.weight.shape[1]:
            raise ValueError(f"expected {self.weight.shape[1]} tokens (N + prefix) for this position embedding, "
                             f"got {x.shape[1]}")
        return x + self.weight  # (B, N+1, D)


class ViTEmbedding(nn.Module):
    """Image to token sequence (chapter 11.3): (B, C, H, W) -> (B, N+1, D), or (B, T, D) with more prefix tokens;
    with ``config.pre_norm``, CLIP's LayerNorm after it (Radford et al. 2021)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        D = config.embed_dim
        self.patch_embed = PatchEmbedding(config.patch_size, config.in_channels, D, bias=config.patch_bias)
        self.add_cls_token = AddClassToken(D) if config.num_prefix_tokens == 1 else PrefixTokens(config)
        if config.num_pos_prefix_tokens == config.num_prefix_tokens:
            self.pos_embed = PositionEmbedding(config.num_tokens, D)
        else:
            self.pos_embed = PartialPositionEmbedding(config)
        self.dropout = nn.Dropout(config.dropout)
        self.norm_pre = nn.LayerNorm(D, eps=config.ln_eps) if config.pre_norm else nn.Identity()
        self.grid = (config.grid_size, config.grid_size)  # (H/P, W/P) the position embedding is for

    def forward(self, x: Tensor) -> Tensor:
        x = self.patch_embed(x)  # (B, C, H, W) -> (B, N, D)
        x = self.add_cls_token(x)  # -> (B, N+1, D)
        x = self.pos_embed(x)  # -> (B, N+1, D)
        x = self.dropout(x)
        return self.norm_pre(x)  # CLIP's ln_pre; nn.Identity in the chapter


def attention_weights(q: Tensor, k: Tensor, out: Tensor | None = None) -> Tensor:
    """softmax(q kᵀ / √d) over the keys for every head: (..., Tq, d), (..., T, d) -> (..., Tq, T), the one place
    they are computed. Without autograd the softmax runs in place on the scores (in ``out`` if given); float32
    whatever the model's precision (docs/performance.md, "Attention weights: in place, in float32")."""
    scores = torch.matmul(q.float() * q.shape[-1] ** -0.5, k.float().transpose(-2, -1), out=out)  # (..., Tq, T)
    if scores.requires_grad:
        return scores.softmax(dim=-1)
    return torch.softmax(scores, dim=-1, out=scores)  # in place: the fused kernel writes over the scores


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """(..., T, D) -> (..., h, T, D/h): head i takes features i*D/h .. (i+1)*D/h - 1, as ``nn.MultiheadAttention``."""
    return x.unflatten(-1, (num_heads, -1)).transpose(-3, -2)


class ScaledDotProductAttention(nn.Module):
    """softmax(q kᵀ / √d) v for every head: (B, h, N+1, D/h) -> (B, h, N+1, D/h), and the weights (B, h, N+1, N+1)
    with ``need_weights`` (else the fused kernel, and None); a module, as vit-pytorch's softmax, to be watched."""

    def __init__(self, dropout: float):
        super().__init__()
        self.dropout = dropout

    def forward(self, q: Tensor, k: Tensor, v: Tensor, need_weights: bool = False) -> tuple[Tensor, Tensor | None]:
        dropout = self.dropout if self.training else 0.0
        if not need_weights:
            return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout), None  # (B, h, N+1, D/h)
        weights = attention_weights(q, k)  # (B, h, N+1, N+1)
        return F.dropout(weights, dropout, self.training).to(v.dtype) @ v, weights  # (B, h, N+1, D/h)


class MultiheadAttention(nn.Module):
    """Batch-first multi-head self-attention (chapter 8) with separate q/k/v projections; weights (B, h, N+1, N+1)
    only with ``need_weights``. ``head_mask``, (h,) or (B, h) of 0/1, multiplies each head's output before
    ``out_proj``: a 0 switches the head off (Michel et al. 2019)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        embed_dim = config.embed_dim  # D, divisible by h: ViTConfig checks it
        self.embed_dim = embed_dim
        self.num_heads = config.num_heads
        self.head_dim = config.head_dim
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=config.qkv_bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=config.qkv_bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=config.qkv_bias)
        self.attend = ScaledDotProductAttention(config.attn_dropout)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, need_weights: bool = False,
                head_mask: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        q = split_heads(self.q_proj(query), self.num_heads)  # (B, N+1, D) -> (B, h, N+1, D/h)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
        out, weights = self.attend(q, k, v, need_weights)  # (B, h, N+1, D/h), (B, h, N+1, N+1) or None
        if head_mask is not None:
            out = head_mask.to(out.dtype).reshape(-1, self.num_heads, 1, 1) * out  # (B or 1, h, 1, 1): heads off
        out = out.transpose(1, 2).reshape(query.shape[0], -1, self.embed_dim)  # -> (B, N+1, D)
        return self.out_proj(out), weights


class ViTMLP(nn.Module):
    """Per-token MLP: (B, N+1, D) -> (B, N+1, 4D) -> (B, N+1, D)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        # Registered before ``net`` so the hidden activations (B, N+1, 4D) are watched as ``mlp.act``; ``net`` holds
        # it too, at index 1 (a GELU has no parameters: the state-dict keys stay ``net.0.*`` and ``net.3.*``).
        self.act = QuickGELU() if config.activation == "quick_gelu" else nn.GELU()
        self.net = nn.Sequential(
            nn.Linear(config.embed_dim, config.mlp_dim),  # (B, N+1, D) -> (B, N+1, 4D)
            self.act,
            nn.Dropout(config.dropout),
            nn.Linear(config.mlp_dim, config.embed_dim),  # (B, N+1, 4D) -> (B, N+1, D)
            nn.Dropout(config.dropout),
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


class ViTEncoderLayer(nn.Module):
    """Pre-norm encoder block: H = X + MSA(LN(X)); Y = H + MLP(LN(H)). With ``config.layer_scale`` each branch is
    scaled by its LayerScale: H = X + diag(g1) MSA(LN(X))."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.embed_dim, eps=config.ln_eps)
        self.attn = MultiheadAttention(config)
        self.dropout1 = nn.Dropout(config.dropout)
        self.norm2 = nn.LayerNorm(config.embed_dim, eps=config.ln_eps)
        self.mlp = ViTMLP(config)
        self.scale1 = LayerScale(config.embed_dim) if config.layer_scale else nn.Identity()
        self.scale2 = LayerScale(config.embed_dim) if config.layer_scale else nn.Identity()

    def forward(self, x: Tensor, head_mask: Tensor | None = None) -> Tensor:
        attn_input = self.norm1(x)
        attn_output, _ = self.attn(attn_input, attn_input, attn_input, need_weights=False, head_mask=head_mask)
        x = x + self.dropout1(self.scale1(attn_output))  # (B, N+1, D)
        x = x + self.scale2(self.mlp(self.norm2(x)))  # (B, N+1, D)
        return x


class ViTEncoder(nn.Module):
    """L encoder layers and a final LayerNorm: (B, N+1, D) -> (B, N+1, D)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.layers = nn.ModuleList([ViTEncoderLayer(config) for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.embed_dim, eps=config.ln_eps)

    def forward(self, x: Tensor) -> Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class ViTClassificationHead(nn.Module):
    """Classifies the class token: (B, N+1, D) -> (B, D) -> (B, K); a backbone (K = 0) has a ``NoClassifier``."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.head = nn.Linear(config.embed_dim, config.num_classes) if config.num_classes else NoClassifier()

    def forward(self, x: Tensor) -> Tensor:
        cls_token = x[:, 0]  # (B, N+1, D) -> (B, D)
        logits = self.head(cls_token)  # (B, D) -> (B, K)
        return logits


class ViTForImageClassification(nn.Module):
    """The whole model of section 11.4.7, built from one :class:`ViTConfig`."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.config = config
        self.embedding = ViTEmbedding(config)
        self.encoder = ViTEncoder(config)
        self.head = HUB_HEADS[config.head](config) if config.head in HUB_HEADS else ViTClassificationHead(config)

    def forward(self, x: Tensor) -> Tensor:
        x = self.embedding(x)  # (B, C, H, W) -> (B, N+1, D)
        x = self.encoder(x)  # -> (B, N+1, D)
        logits = self.head(x)  # -> (B, K)
        return logits

    def classify(self, tokens: Tensor) -> Tensor:
        """The final norm and the head on a block's output, (B, N+1, D) -> (B, K): the early exit, or ``forward``'s
        end for code that runs the layers itself (timm's ``forward_head``)."""
        return self.head(self.encoder.norm(tokens))  # (B, N+1, D) -> (B, K)
