"""The Vision Transformer of chapter 11.4, under the chapter's names.

Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words". The image is cut
into P x P patches, each patch becomes a token, a class token is prepended,
position embeddings are added, and a stack of pre-norm encoder layers lets the
tokens exchange information; the class token's output is classified:

    (B, C, H, W) -> (B, N, D) -> (B, N+1, D) -> ... -> (B, N+1, D) -> (B, D) -> (B, K)

This file holds the chapter's modules and nothing else: no tracing, no weights loading. The plain ViTs
of the Hub add a few pieces (more prefix tokens, LayerScale, a norm before the encoder, QuickGELU, other
heads): each is chosen here by its ``ViTConfig`` field from ``vit.model.hubmodules``, and is
``nn.Identity`` (no parameters) or the chapter's own module when the field is off, so the presets'
forward passes and state-dict keys are the chapter's.
As in nanoGPT, every composite module takes the one :class:`ViTConfig` whole, so
no module has defaults of its own that could disagree with it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from vit.config import ViTConfig
from vit.model.hubmodules import HUB_HEADS, LayerScale, NoClassifier, PartialPositionEmbedding, PrefixTokens, QuickGELU


class PatchEmbedding(nn.Module):
    """Cuts the image into P x P patches and projects each to D dimensions.

    A convolution with kernel = stride = P is a linear map applied to every
    patch independently.
    """

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
    """Image to token sequence (chapter 11.3): (B, C, H, W) -> (B, N+1, D), or (B, T, D) with more prefix tokens.

    With ``config.pre_norm`` a LayerNorm follows (CLIP's ln_pre, Radford et al. 2021): the tokens the
    first block receives are this module's output either way.
    """

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
    """softmax(q kᵀ / √d) over the keys: the attention weights of every head, (..., Tq, d), (..., T, d) -> (..., Tq, T).

    The one place they are computed: the attention module, the tracer's row blocks and the views of
    any query all call it. Without autograd the softmax runs in place on the scores (its ``out`` is
    its input): at 3,137 tokens one layer's weights are 472 MB for ViT-B, and a second copy is not made.
    In float32 whatever the model's precision: a score of 10 rounded to bfloat16 is off by up to 0.03,
    3 % of its weight (``vit.model.precision``).

    Args:
        q: queries, (..., Tq, d), d = D/h; k: keys, (..., T, d).
        out: a (..., Tq, T) buffer to compute them in (the tracer reuses one for every block of rows).
    """
    scores = torch.matmul(q.float() * q.shape[-1] ** -0.5, k.float().transpose(-2, -1), out=out)  # (..., Tq, T)
    if scores.requires_grad:
        return scores.softmax(dim=-1)
    return torch.softmax(scores, dim=-1, out=scores)  # in place: the fused kernel writes over the scores


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """(..., T, D) -> (..., h, T, D/h): each head's slice of a q, k or v projection.

    Head i takes features i*D/h .. (i+1)*D/h - 1, as ``nn.MultiheadAttention`` splits them;
    ``vit.analysis.rollout`` splits the queries and keys the tracer kept with this same function.
    """
    return x.unflatten(-1, (num_heads, -1)).transpose(-3, -2)


class ScaledDotProductAttention(nn.Module):
    """softmax(q kᵀ / √d) v for every head: (B, h, N+1, D/h) -> (B, h, N+1, D/h), no parameters.

    Returns ``(output, weights)``: without ``need_weights`` the fused ``scaled_dot_product_attention``
    kernel and no weights; with it the weights (B, h, N+1, N+1) of :func:`attention_weights`. A module
    of its own, as vit-pytorch names its softmax, so that what computes it can be watched or swapped.
    """

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
    """Batch-first multi-head self-attention (chapter 8) with separate q/k/v projections.

    Returns ``(output, weights)``: weights are ``None`` unless ``need_weights``, in which case the
    per-head weights (B, h, N+1, N+1) are returned. ``head_mask`` (h,) or (B, h) switches heads off
    (What if?): a head whose entry is 0 has its output, before ``out_proj``, set to zero (``ablation``
    "zero") or to its mean over the tokens ("mean"); a 1 keeps it (Michel et al. 2019).
    """

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
                head_mask: Tensor | None = None, ablation: str = "zero") -> tuple[Tensor, Tensor | None]:
        q = split_heads(self.q_proj(query), self.num_heads)  # (B, N+1, D) -> (B, h, N+1, D/h)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
        out, weights = self.attend(q, k, v, need_weights)  # (B, h, N+1, D/h), (B, h, N+1, N+1) or None
        if head_mask is not None:
            mask = head_mask.to(out.dtype).reshape(-1, self.num_heads, 1, 1)  # (B or 1, h, 1, 1)
            off = out.mean(dim=-2, keepdim=True) if ablation == "mean" else torch.zeros_like(out[..., :1, :])
            out = mask * out + (1 - mask) * off  # the heads switched off: zero, or their mean over the tokens
        out = out.transpose(1, 2).reshape(query.shape[0], -1, self.embed_dim)  # -> (B, N+1, D)
        return self.out_proj(out), weights


class ViTMLP(nn.Module):
    """Per-token MLP: (B, N+1, D) -> (B, N+1, 4D) -> (B, N+1, D)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        # Named so the hidden activations (B, N+1, 4D) can be watched as ``mlp.act``. It is
        # registered before ``net`` so that is the name ``named_modules()`` gives it; ``net``
        # holds the same module at index 1, keeping the state-dict keys ``net.0.*`` and
        # ``net.3.*`` that checkpoints are converted to (a GELU has no parameters of its own).
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
    """Pre-norm encoder block: H = X + MSA(LN(X)); Y = H + MLP(LN(H)).

    With ``config.layer_scale`` each branch is scaled by its LayerScale: H = X + diag(g1) MSA(LN(X)).
    """

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.embed_dim, eps=config.ln_eps)
        self.attn = MultiheadAttention(config)
        self.dropout1 = nn.Dropout(config.dropout)
        self.norm2 = nn.LayerNorm(config.embed_dim, eps=config.ln_eps)
        self.mlp = ViTMLP(config)
        self.scale1 = LayerScale(config.embed_dim) if config.layer_scale else nn.Identity()
        self.scale2 = LayerScale(config.embed_dim) if config.layer_scale else nn.Identity()

    def forward(self, x: Tensor) -> Tensor:
        attn_input = self.norm1(x)
        attn_output, _ = self.attn(attn_input, attn_input, attn_input, need_weights=False)
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
    """Classifies the class token: (B, N+1, D) -> (B, D) -> (B, K).

    A backbone (``config.head`` "none", K = 0) has a :class:`~vit.model.hubmodules.NoClassifier`
    for ``head``; the Hub's other heads are in ``vit.model.hubmodules``.
    """

    tokens_read = 1  # how many leading tokens the head reads (None: all of them)

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
        """The final norm and the head, from a block's output: (B, N+1, D) -> (B, K).

        What ``forward`` does after the encoder's layers, for code that runs the layers itself;
        ``model.classify(tokens)`` equals ``model(x)`` when ``tokens`` is the last layer's output, and is
        the early exit (what the model would predict if it stopped there) on any other block's.
        """
        return self.head(self.encoder.norm(tokens))  # (B, N+1, D) -> (B, K)

    def classify_tokens(self, tokens: Tensor) -> Tensor:
        """The logit lens: the final norm and head on each token as if it were the one read, (..., T, D) -> (..., T, K).

        Each token is handed to the head as a sequence made of that token alone, so the family's head
        reads it in every place it reads: the chapter's head on it; DeiT's the mean of its two heads;
        DINOv2's the token joined with itself as the patch mean.
        """
        D = tokens.shape[-1]
        alone = self.encoder.norm(tokens).reshape(-1, 1, D)  # (..., T, D) -> (M, 1, D)
        alone = alone.expand(-1, self.config.num_prefix_tokens + 1, -1)  # (M, prefix + 1, D), no copy
        return self.head(alone).unflatten(0, tokens.shape[:-1])  # (M, K) -> (..., T, K)
