"""The pieces the plain ViTs of the Hugging Face Hub add to the chapter's model, each chosen by a ``ViTConfig`` field.

As timm does, an optional piece is ``nn.Identity`` when off (LayerScale) and a variant is a module of its own; the
chapter's presets use none, so their state-dict keys are the chapter's. With P prefix tokens the sequence is
T = N + P long: (B, T, D) where the chapter's (B, N+1, D) is the case P = 1.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from vit.config import ViTConfig


class QuickGELU(nn.Module):
    """CLIP's approximation of the GELU, x * sigmoid(1.702 x) (Radford et al. 2021; Hendrycks & Gimpel 2016)."""

    def forward(self, x: Tensor) -> Tensor:
        return x * torch.sigmoid(1.702 * x)


class LayerScale(nn.Module):
    """A learned scale per channel on a residual branch, diag(gamma) f(x) (Touvron et al. 2021, "Going deeper
    with Image Transformers"; DeiT III and DINOv2 use it): (..., D) -> (..., D)."""

    def __init__(self, embed_dim: int):
        super().__init__()
        self.gamma = nn.Parameter(torch.full((embed_dim,), 1e-5))

    def forward(self, x: Tensor) -> Tensor:
        return x * self.gamma


class PrefixTokens(nn.Module):
    """Prepends the class token, DeiT's distillation token (Touvron et al. 2021) and R registers (Darcet et al.
    2024, "Vision Transformers Need Registers") as the config asks, in timm's order: (B, N, D) -> (B, T, D)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        D = config.embed_dim
        self.distilled, self.num_registers = config.distilled, config.num_register_tokens
        self.cls_token = nn.Parameter(torch.zeros(1, 1, D))
        if self.distilled:
            self.dist_token = nn.Parameter(torch.zeros(1, 1, D))
        if self.num_registers:
            self.register_tokens = nn.Parameter(torch.zeros(1, self.num_registers, D))

    def forward(self, x: Tensor) -> Tensor:
        prefix = [self.cls_token]  # (1, 1, D)
        if self.distilled:
            prefix.append(self.dist_token)  # (1, 1, D)
        if self.num_registers:
            prefix.append(self.register_tokens)  # (1, R, D)
        prefix = [t.expand(x.shape[0], -1, -1) for t in prefix]
        return torch.cat([*prefix, x], dim=1)  # (B, N, D) -> (B, T, D)


class PartialPositionEmbedding(nn.Module):
    """One learned vector, (1, covered + N, D), for the patches and the first ``covered`` prefix tokens (none in
    DeiT III, Touvron et al. 2022; the class token alone in transformers' DINOv2 with registers)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.num_prefix, self.num_covered = config.num_prefix_tokens, config.num_pos_prefix_tokens
        rows = self.num_covered + config.num_patches
        self.weight = nn.Parameter(torch.empty(1, rows, config.embed_dim).normal_(std=0.02))

    def forward(self, x: Tensor) -> Tensor:
        uncovered = self.num_prefix - self.num_covered
        if x.shape[1] != self.weight.shape[1] + uncovered:
            raise ValueError(f"expected {self.weight.shape[1] + uncovered} tokens (N + {self.num_prefix} prefix) "
                             f"for this position embedding, got {x.shape[1]}")
        covered = x[:, : self.num_covered] + self.weight[:, : self.num_covered]  # (B, covered, D)
        patches = x[:, self.num_prefix :] + self.weight[:, self.num_covered :]  # (B, N, D)
        return torch.cat([covered, x[:, self.num_covered : self.num_prefix], patches], dim=1)  # (B, T, D)


class NoClassifier(nn.Module):
    """The "head" of a backbone (a DINOv2 without a classifier): (..., F) -> (..., 0) logits, so every view runs
    on a backbone as on a classifier."""

    def forward(self, x: Tensor) -> Tensor:
        return x.new_zeros(*x.shape[:-1], 0)  # (..., F) -> (..., 0)


class DistilledHead(nn.Module):
    """DeiT's head at inference: the mean of ``head`` on the class token and ``head_dist`` on the
    distillation token (Touvron et al. 2021): (B, T, D) -> (B, K)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.head = nn.Linear(config.embed_dim, config.num_classes)
        self.head_dist = nn.Linear(config.embed_dim, config.num_classes)

    def forward(self, x: Tensor) -> Tensor:
        return (self.head(x[:, 0]) + self.head_dist(x[:, 1])) / 2  # (B, T, D) -> 2 x (B, D) -> (B, K)


class TokenAndPatchMeanHead(nn.Module):
    """DINOv2's linear classifiers (Oquab et al. 2023): the class token joined with the mean of the patch
    tokens, (B, T, D) -> (B, 2D) -> (B, K)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        self.num_prefix = config.num_prefix_tokens
        self.head = nn.Linear(2 * config.embed_dim, config.num_classes)

    def forward(self, x: Tensor) -> Tensor:
        patches = x[:, self.num_prefix :].mean(dim=1)  # (B, T, D) -> (B, N, D) -> (B, D)
        return self.head(torch.cat([x[:, 0], patches], dim=-1))  # (B, 2D) -> (B, K)


HUB_HEADS = {"token_distill_mean": DistilledHead, "token_and_patch_mean": TokenAndPatchMeanHead}  # config.head -> class
