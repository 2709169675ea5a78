"""The Vision Transformer of chapter 11.4, under the chapter's names.

Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words". The image is cut
into P x P patches, each patch becomes a token, a class token is prepended,
position embeddings are added, and a stack of pre-norm encoder layers lets the
tokens exchange information; the class token's output is classified:

    (B, C, H, W) -> (B, N, D) -> (B, N+1, D) -> ... -> (B, N+1, D) -> (B, D) -> (B, K)

The plain ViTs of the Hub need a few generalisations, each off unless its ``ViTConfig`` field turns it
on (so the presets' modules and state-dict keys are the chapter's): more prefix tokens (DeiT's
distillation token, registers), position embeddings that skip some of them, LayerScale, a norm before
the encoder (CLIP), q/k/v without bias, QuickGELU, and other heads. With P prefix tokens the sequence
is T = N + P tokens long; shape comments write (B, T, D) where the chapter's (B, N+1, D) is that case.

This file holds the modules and nothing else: no tracing, no weights loading (the one
seam for another patch size, ``ViTEmbedding.forward_at_patch_size``, takes its math from
the pure functions of ``vit.model.resample``).
As in nanoGPT, every composite module takes the one :class:`ViTConfig` whole, so
no module has defaults of its own that could disagree with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from vit.config import ROW_BLOCK_BYTES, ViTConfig
from vit.model.resample import pi_resize_kernel, resample_pos_embed


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
    """Prepends the learned class token to the patch tokens, and the other prefix tokens the config asks for.

    In the order timm and transformers use: the class token, DeiT's distillation token (Touvron et al.
    2021), then the registers (Darcet et al. 2024): (B, N, D) -> (B, T, D), T = N + prefix.
    """

    def __init__(self, embed_dim: int, distilled: bool = False, num_register_tokens: int = 0):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        if distilled:  # only then: the chapter's model keeps its state-dict keys
            self.dist_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        if num_register_tokens:
            self.register_tokens = nn.Parameter(torch.zeros(1, num_register_tokens, embed_dim))

    def forward(self, x: Tensor) -> Tensor:
        prefix = [self.cls_token]  # (1, 1, D)
        if hasattr(self, "dist_token"):
            prefix.append(self.dist_token)  # (1, 1, D)
        if hasattr(self, "register_tokens"):
            prefix.append(self.register_tokens)  # (1, R, D)
        prefix = [t.expand(x.shape[0], -1, -1) for t in prefix]
        return torch.cat([*prefix, x], dim=1)  # (B, N, D) -> (B, N+1, D), or (B, T, D)


class PositionEmbedding(nn.Module):
    """Adds one learned vector per position (class token first, then patches row by row).

    ``num_prefix`` tokens come before the patches; the first ``num_covered`` of them have a position
    of their own (all of them in the chapter; none in DeiT III's, the class token only in DINOv2's with
    registers in transformers): the weight is (1, covered + N, D).
    """

    def __init__(self, num_tokens: int, embed_dim: int, num_prefix: int = 1, num_covered: int = 1):
        super().__init__()
        self.num_prefix, self.num_covered = num_prefix, num_covered
        uncovered = num_prefix - num_covered
        self.weight = nn.Parameter(torch.empty(1, num_tokens - uncovered, embed_dim).normal_(std=0.02))

    def forward(self, x: Tensor) -> Tensor:
        return add_pos_embed(x, self.weight, self.num_prefix, self.num_covered)


def add_pos_embed(x: Tensor, pos: Tensor, num_prefix: int, num_covered: int) -> Tensor:
    """x + pos where pos has a row: (B, T, D) + (1, covered + N, D) -> (B, T, D), uncovered prefix rows as they are."""
    uncovered = num_prefix - num_covered
    if x.shape[1] != pos.shape[1] + uncovered:
        raise ValueError(f"expected {pos.shape[1] + uncovered} tokens (N + {num_prefix} prefix) for this "
                         f"position embedding, got {x.shape[1]}")
    if not uncovered:
        return x + pos  # (B, N+1, D), or (B, T, D)
    covered = x[:, :num_covered] + pos[:, :num_covered]  # (B, covered, D)
    patches = x[:, num_prefix:] + pos[:, num_covered:]  # (B, N, D)
    return torch.cat([covered, x[:, num_covered:num_prefix], patches], dim=1)  # (B, T, D)


class ViTEmbedding(nn.Module):
    """Image to token sequence (chapter 11.3): (B, C, H, W) -> (B, N+1, D), or (B, T, D) with more prefix tokens.

    With ``config.pre_norm`` a LayerNorm follows (CLIP's ln_pre, Radford et al. 2021): the tokens the
    first block receives are this module's output either way.
    """

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.patch_embed = PatchEmbedding(config.patch_size, config.in_channels, config.embed_dim,
                                          bias=config.patch_bias)
        self.add_cls_token = AddClassToken(config.embed_dim, config.distilled, config.num_register_tokens)
        self.pos_embed = PositionEmbedding(config.num_tokens, config.embed_dim, config.num_prefix_tokens,
                                           config.num_pos_prefix_tokens)
        self.dropout = nn.Dropout(config.dropout)
        if config.pre_norm:
            self.norm_pre = nn.LayerNorm(config.embed_dim, eps=config.ln_eps)
        self.grid = (config.grid_size, config.grid_size)  # (H/P, W/P) the position embedding is for

    def forward(self, x: Tensor) -> Tensor:
        x = self.patch_embed(x)  # (B, C, H, W) -> (B, N, D)
        x = self.add_cls_token(x)  # -> (B, N+1, D)
        x = self.pos_embed(x)  # -> (B, N+1, D)
        return self._pre_norm(self.dropout(x))

    def _pre_norm(self, x: Tensor) -> Tensor:
        return self.norm_pre(x) if hasattr(self, "norm_pre") else x  # (B, T, D)

    def forward_at_patch_size(self, x: Tensor, patch_size: int) -> Tensor:
        """The embedding at another patch size p, from these weights, inside the autograd graph (FlexiViT).

        As timm's ``PatchEmbed.set_input_size``, with the pure functions of ``vit.model.resample``: the
        kernel is PI-resized P -> p and the position embedding resampled from this module's grid to
        (H/p, W/p), what ``load_model(..., patch_size=p)`` does to the weights, here without copying
        them, so training at random patch sizes trains what that knob uses. At p = P it is ``self(x)``.

        Args:
            x: (B, C, H, W), H and W multiples of p.
            patch_size: p.

        Returns:
            (B, N+1, D) with N = (H/p) (W/p).
        """
        if patch_size == self.patch_embed.patch_size:
            return self(x)
        proj = self.patch_embed.proj
        kernel = pi_resize_kernel(proj.weight, (patch_size, patch_size))  # (D, C, P, P) -> (D, C, p, p)
        tokens = F.conv2d(x, kernel, proj.bias, stride=patch_size)  # (B, C, H, W) -> (B, D, H/p, W/p)
        grid = tuple(tokens.shape[-2:])
        tokens = self.add_cls_token(tokens.flatten(2).transpose(1, 2))  # -> (B, N, D) -> (B, N+1, D)
        covered = self.pos_embed.num_covered  # the prefix rows are kept as they are
        pos = resample_pos_embed(self.pos_embed.weight, self.grid, grid, covered)  # (1, N+1, D) at the new grid
        tokens = add_pos_embed(tokens, pos, self.pos_embed.num_prefix, covered)  # (B, N+1, D)
        return self._pre_norm(self.dropout(tokens))


class MultiheadAttention(nn.Module):
    """Batch-first multi-head self-attention (chapter 8) with separate q/k/v projections.

    Returns ``(output, weights)``: weights are ``None`` unless ``need_weights``,
    in which case the softmax is computed explicitly and the per-head weights
    (B, h, N+1, N+1) are returned. Without weights the fused
    ``scaled_dot_product_attention`` kernel is used.
    """

    def __init__(self, config: ViTConfig):
        super().__init__()
        embed_dim = config.embed_dim  # D, divisible by h: ViTConfig checks it
        self.embed_dim = embed_dim
        self.num_heads = config.num_heads
        self.head_dim = config.head_dim
        self.dropout = config.attn_dropout
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=config.qkv_bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=config.qkv_bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=config.qkv_bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, need_weights: bool = False,
        watch_rows: RowWatch | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """``watch_rows``: the weights are computed a block of query rows at a time and each block is handed to
        ``watch_rows(start, weights)`` before it is used (:func:`attention_by_row_blocks`; no dropout: it is for
        looking inside a forward pass, not for training); none are returned."""
        q = split_heads(self.q_proj(query), self.num_heads)  # (B, N+1, D) -> (B, h, N+1, D/h)
        k = split_heads(self.k_proj(key), self.num_heads)
        v = split_heads(self.v_proj(value), self.num_heads)
        dropout = self.dropout if self.training else 0.0
        if watch_rows is not None:
            out = attention_by_row_blocks(q, k, v, watch_rows)  # (B, N+1, D), the heads joined
            return self.out_proj(out), None
        if need_weights:
            weights = q @ k.transpose(-2, -1)  # (B, h, N+1, N+1)
            weights.mul_(1.0 / math.sqrt(self.head_dim))
            # In place: at 3,137 tokens one layer's weights are ~0.5 GB for ViT-B.
            weights = weights.softmax(dim=-1) if weights.requires_grad else _softmax_(weights)
            out = F.dropout(weights, dropout, self.training) @ v  # (B, h, N+1, D/h)
        else:
            weights = None
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout)  # (B, h, N+1, D/h)
        out = out.transpose(1, 2).reshape(query.shape[0], -1, self.embed_dim)  # -> (B, N+1, D)
        return self.out_proj(out), weights


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """(..., T, D) -> (..., h, T, D/h): each head's slice of a q, k or v projection.

    Head i takes features i*D/h .. (i+1)*D/h - 1, as ``nn.MultiheadAttention`` splits them;
    ``vit.analysis.rollout`` splits the queries and keys the tracer kept with this same function.
    """
    return x.unflatten(-1, (num_heads, -1)).transpose(-3, -2)


RowWatch = Callable[[int, Tensor], None]  # (first query row of the block, its weights (B, h, R, T))
_softmax_into = torch.ops.aten._softmax.out  # softmax(x, dim, half_to_float, out=): the fused kernel, into a buffer


def attention_by_row_blocks(q: Tensor, k: Tensor, v: Tensor, watch: RowWatch) -> Tensor:
    """softmax(q kᵀ / √d) v, a block of R query rows at a time, each block's weights shown to ``watch`` first.

    The weights of a layer are never whole (at patch size 4, ViT-B's are 12 x 3,137² floats, 472 MB): each
    block of rows, (B, h, R, T) and about :data:`ROW_BLOCK_BYTES`, is made in a buffer, handed to
    ``watch(start, weights)`` (rows start..start+R-1; it may read the block, not keep or change it: the next
    block overwrites it) and multiplied by v while it is still in the cache. The output equals
    ``scaled_dot_product_attention(q, k, v)`` to float32 rounding.

    Args:
        q: (B, h, Tq, D/h) queries; k, v: (B, h, T, D/h) keys and values.
        watch: ``watch(start, weights)`` for each block of rows, in order.

    Returns:
        (B, Tq, D): every head's output, the heads joined (what ``out_proj`` takes).
    """
    B, h, rows, d = q.shape
    tokens = k.shape[-2]
    blocks = -(-rows // max(1, ROW_BLOCK_BYTES // (4 * B * h * tokens)))
    block = -(-rows // blocks)  # rows per block, as even as can be
    q = (q * (1.0 / math.sqrt(d))).flatten(0, 1)  # the scale on the queries, T/(D/h) times fewer products: (Bh, Tq, d)
    keys, v = k.transpose(-2, -1).flatten(0, 1), v.flatten(0, 1)  # (Bh, d, T), (Bh, T, d)
    scores, weights = (q.new_empty(B * h * block * tokens) for _ in range(2))  # reused by every block
    out = q.new_empty(B, rows, h, v.shape[-1])  # (B, Tq, h, D/h): the heads joined by a reshape at the end
    for start in range(0, rows, block):
        r = min(block, rows - start)
        s, w = (buffer[: B * h * r * tokens].view(B * h, r, tokens) for buffer in (scores, weights))  # (Bh, R, T)
        torch.bmm(q[:, start : start + r], keys, out=s)
        _softmax_into(s, -1, False, out=w)
        watch(start, w.unflatten(0, (B, h)))  # (B, h, R, T)
        out[:, start : start + r] = (w @ v).unflatten(0, (B, h)).transpose(1, 2)  # (B, h, R, D/h) -> (B, R, h, D/h)
    return out.reshape(B, rows, h * v.shape[-1])  # (B, Tq, D)


def _softmax_(x: Tensor) -> Tensor:
    """Softmax over the last dimension, in place (saves one (B, h, N+1, N+1) buffer)."""
    x.sub_(x.amax(dim=-1, keepdim=True))
    x.exp_()
    x.div_(x.sum(dim=-1, keepdim=True))
    return x


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


class QuickGELU(nn.Module):
    """CLIP's approximation of the GELU, x * sigmoid(1.702 x) (Radford et al. 2021; Hendrycks & Gimpel 2016)."""

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.sigmoid(1.702 * x)


class LayerScale(nn.Module):
    """A learned scale per channel on a residual branch, diag(gamma) f(x) (Touvron et al. 2021, CaiT;
    DeiT III and DINOv2 use it): (..., D) -> (..., D)."""

    def __init__(self, embed_dim: int):
        super().__init__()
        self.gamma = nn.Parameter(torch.full((embed_dim,), 1e-5))

    def forward(self, x: Tensor) -> Tensor:
        return x * self.gamma


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
        if config.layer_scale:  # only then: the chapter's block keeps its state-dict keys
            self.scale1 = LayerScale(config.embed_dim)
            self.scale2 = LayerScale(config.embed_dim)

    def forward(self, x: Tensor) -> Tensor:
        attn_input = self.norm1(x)
        attn_output, _ = self.attn(attn_input, attn_input, attn_input, need_weights=False)
        x = x + self.dropout1(self._scaled(1, attn_output))  # (B, N+1, D)
        return x + self._scaled(2, self.mlp(self.norm2(x)))  # (B, N+1, D)

    def _scaled(self, branch: int, x: Tensor) -> Tensor:
        """A residual branch's output through its LayerScale, if the block has one: (B, T, D) -> (B, T, D)."""
        scale = getattr(self, f"scale{branch}", None)
        return x if scale is None else scale(x)

    def forward_class_token(self, x: Tensor, num_tokens: int | None = 1) -> Tensor:
        """The block's output for the class token alone: (B, N+1, D) -> (B, 1, D), equal to ``self(x)[:, :1]``.

        As nanoGPT applies its head to the last position only: a head that reads the class token
        needs, in the last block, only its query, its row of attention, its output projection and
        its MLP (the keys and values still come from every token). ~83 % of the block's work is
        skipped: 7 % of ViT-B's forward pass, 21 % of the 4-layer shapes model's. ``num_tokens``
        leading tokens instead (DeiT's head reads 2: ``ViTClassificationHead.tokens_read``); None: all.
        """
        if num_tokens is None:
            return self(x)
        attn_input = self.norm1(x)  # (B, N+1, D)
        query = attn_input[:, :num_tokens]  # (B, 1, D): one query, N+1 keys
        attn_output, _ = self.attn(query, attn_input, attn_input)  # (B, 1, D)
        cls = x[:, :num_tokens] + self.dropout1(self._scaled(1, attn_output))  # (B, 1, D)
        return cls + self._scaled(2, self.mlp(self.norm2(cls)))  # (B, 1, D)


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


class NoClassifier(nn.Module):
    """The "head" of a backbone (a DINOv2 without a classifier): no classes, (..., F) -> (..., 0) logits.

    So every view of attention and tokens runs on a backbone as on a classifier, and the predictions
    say "this model has no classifier" instead of failing. No parameters.
    """

    def forward(self, x: Tensor) -> Tensor:
        return x.new_zeros(*x.shape[:-1], 0)  # (..., F) -> (..., 0)


class ViTClassificationHead(nn.Module):
    """Classifies the class token: (B, N+1, D) -> (B, D) -> (B, K).

    ``config.head`` chooses what is read, each the way its family does at inference:
    "token" the class token (the chapter); "token_distill_mean" the mean of ``head`` on the class
    token and ``head_dist`` on the distillation token (DeiT, Touvron et al. 2021); "token_and_patch_mean"
    the class token joined with the mean of the patch tokens, (B, 2D) (DINOv2's linear classifiers,
    Oquab et al. 2023); "none" nothing (:class:`NoClassifier`, K = 0).
    """

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.kind = config.head
        self.num_prefix = config.num_prefix_tokens
        if config.head == "none":
            self.head = NoClassifier()
        else:
            width = 2 * config.embed_dim if config.head == "token_and_patch_mean" else config.embed_dim
            self.head = nn.Linear(width, config.num_classes)
        if config.head == "token_distill_mean":
            self.head_dist = nn.Linear(config.embed_dim, config.num_classes)

    @property
    def tokens_read(self) -> int | None:
        """How many leading tokens the head reads (1: the class token; 2: and DeiT's distillation token), None: all."""
        return {"token": 1, "token_distill_mean": 2, "none": 1}.get(self.kind)

    def forward(self, x: Tensor) -> Tensor:
        return self.read(x)

    def read(self, x: Tensor, quiet: bool = False) -> Tensor:
        """The head on a block's (normed) output: (B, N+1, D) -> (B, K). ``quiet``: the linear maps' hooks do not fire
        (an early exit, a lens on the stream: not a step of the forward pass)."""
        def linear(module: nn.Module, t: Tensor) -> Tensor:
            return module.forward(t) if quiet else module(t)

        cls_token = x[:, 0]  # (B, N+1, D) -> (B, D)
        if self.kind == "token_distill_mean":
            return (linear(self.head, cls_token) + linear(self.head_dist, x[:, 1])) / 2  # (B, D) -> (B, K)
        if self.kind == "token_and_patch_mean":
            patches = x[:, self.num_prefix:].mean(dim=1)  # (B, T, D) -> (B, N, D) -> (B, D)
            return linear(self.head, torch.cat([cls_token, patches], dim=-1))  # (B, 2D) -> (B, K)
        return linear(self.head, cls_token)  # (B, D) -> (B, K)

    def lens(self, tokens: Tensor) -> Tensor:
        """The head's own map on every token as if it were the one read: (..., T, D) -> (..., T, K).

        DeiT's is the mean of its two heads; DINOv2's reads the token as both the class token and the patch
        mean ([t, t]). Calls the linear maps' ``forward`` directly, so hooks on them do not fire.
        """
        if self.kind == "token_distill_mean":
            return (self.head.forward(tokens) + self.head_dist.forward(tokens)) / 2
        if self.kind == "token_and_patch_mean":
            return self.head.forward(torch.cat([tokens, tokens], dim=-1))  # (..., T, 2D) -> (..., T, K)
        return self.head.forward(tokens)


class ViTForImageClassification(nn.Module):
    """The whole model of section 11.4.7, built from one :class:`ViTConfig`."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.config = config
        self.embedding = ViTEmbedding(config)
        self.encoder = ViTEncoder(config)
        self.head = ViTClassificationHead(config)

    def forward(self, x: Tensor) -> Tensor:
        x = self.embedding(x)  # (B, C, H, W) -> (B, N+1, D)
        x = self.encoder(x)  # -> (B, N+1, D)
        return self.head(x)  # -> (B, K)

    def classify(self, tokens: Tensor) -> Tensor:
        """The final norm and the head on the class token, from the last block's output: (B, N+1, D) -> (B, K).

        What ``forward`` does after the encoder's layers, for code that runs the layers itself
        (an explanation keeping each block's input, a last block for the class token alone):
        ``model.classify(tokens)`` equals ``model(x)`` when ``tokens`` is the last layer's output.
        """
        return self.head(self.encoder.norm(tokens))  # (B, N+1, D) -> (B, K)

    def early_exit(self, tokens: Tensor) -> Tensor:
        """What the model would predict if it stopped at this block: the final norm and the family's own head
        (DeiT: the mean of both heads; DINOv2: the class token with the patch mean), (B, T, D) -> (B, K).

        Hook-free as :meth:`classify_tokens`. On the class token alone it equals ``classify_tokens`` for the
        chapter's head.
        """
        return self.head.read(self.encoder.norm.forward(tokens), quiet=True)  # (B, T, D) -> (B, K)

    def classify_tokens(self, tokens: Tensor) -> Tensor:
        """The final norm and the head's linear map on every token (the "logit lens"): (..., T, D) -> (..., T, K).

        Early exit: on a block's output, what each token would be classified as. It calls the norm's
        and the head's ``forward`` directly: a lens on the stream, not a step of the forward pass, so
        hooks that watch the forward pass (a tracer's stages) do not fire for it.
        """
        return self.head.lens(self.encoder.norm.forward(tokens))  # (..., T, D) -> (..., T, K)
