"""Changing the patch size of a pretrained ViT (pure functions).

Beyer et al. 2023, "FlexiViT: One Model for All Patch Sizes", section 3.4: the patch-embedding kernel is resized
with the pseudo-inverse of the bilinear resize matrix, ``w_new = pinv(B^T) w_old``, so that a patch upsampled by B
gives the same token: ``<B x, w_new> = <x, w_old>``. The patch tokens' position embedding is resampled to the new
grid; the prefix tokens' positions are kept.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import Tensor


def resize_patch(x: Tensor, new_size: tuple[int, int]) -> Tensor:
    """Bilinear resize of a batch of patches (..., P, P) -> (..., p, p); the B of FlexiViT."""
    shape = x.shape
    x = x.reshape(-1, 1, shape[-2], shape[-1])
    x = F.interpolate(x, size=new_size, mode="bilinear", align_corners=False, antialias=True)
    return x.reshape(*shape[:-2], *new_size)


def resize_matrix(old_size: tuple[int, int], new_size: tuple[int, int]) -> Tensor:
    """B with ``resize(x).flatten() == B @ x.flatten()``: (p*p, P*P), in float64."""
    basis = torch.eye(old_size[0] * old_size[1], dtype=torch.float64).reshape(-1, *old_size)
    return resize_patch(basis, new_size).reshape(basis.shape[0], -1).T


def pi_resize_patch_embed(weight: Tensor, new_size: tuple[int, int]) -> Tensor:
    """PI-resize a patch-embedding kernel (D, C, P, P) -> (D, C, p, p): a new tensor (a copy at the same size)."""
    old_size = tuple(weight.shape[-2:])
    if old_size == tuple(new_size):
        return weight.clone()
    pinv = pi_resize_matrix(old_size, new_size)  # (p*p, P*P), float64
    return _apply_pi_resize(weight.detach().to(torch.float64), pinv, tuple(new_size)).to(weight.dtype)


def pi_resize_kernel(weight: Tensor, new_size: tuple[int, int]) -> Tensor:
    """:func:`pi_resize_patch_embed` inside the autograd graph, in ``weight``'s dtype: what training at random patch
    sizes applies, so a kernel resized by ``load_model`` is the one the training saw."""
    pinv = pi_resize_matrix(tuple(weight.shape[-2:]), tuple(new_size)).to(weight.device, weight.dtype)  # (p*p, P*P)
    return _apply_pi_resize(weight, pinv, tuple(new_size))


def _apply_pi_resize(weight: Tensor, pinv: Tensor, new_size: tuple[int, int]) -> Tensor:
    """``w_new = pinv(B^T) w_old`` for every (output, input) channel pair: (D, C, P, P) -> (D, C, p, p)."""
    flat = weight.reshape(-1, weight.shape[-2] * weight.shape[-1])  # (D*C, P*P)
    return (flat @ pinv.T).reshape(*weight.shape[:-2], *new_size)  # (D*C, p*p) -> (D, C, p, p)


def pi_resize_matrix(old_size: tuple[int, int], new_size: tuple[int, int]) -> Tensor:
    """``pinv(B^T)``, (p*p, P*P) in float64, a new tensor; cached per pair of sizes (training asks at every step)."""
    return _pi_resize_matrix(tuple(old_size), tuple(new_size)).clone()


@functools.lru_cache(maxsize=64)
def _pi_resize_matrix(old_size: tuple[int, int], new_size: tuple[int, int]) -> Tensor:
    return torch.linalg.pinv(resize_matrix(old_size, new_size).T)  # (p*p, P*P)


def resample_pos_embed(
    pos_embed: Tensor, old_grid: tuple[int, int], new_grid: tuple[int, int], num_prefix_tokens: int = 1,
    antialias: bool = True,
) -> Tensor:
    """Resample a position embedding (1, prefix + gh*gw, D) -> (1, prefix + gh'*gw', D), bicubic, prefix kept, as
    timm's ``resample_abs_pos_embed``. ``antialias=False`` is transformers' DINOv2 (without registers)."""
    num_tokens = num_prefix_tokens + old_grid[0] * old_grid[1]
    if pos_embed.shape[1] != num_tokens:
        raise ValueError(
            f"expected a position embedding of {num_tokens} tokens for a {old_grid[0]}x{old_grid[1]} grid "
            f"and {num_prefix_tokens} prefix tokens, got {pos_embed.shape[1]}"
        )
    if tuple(old_grid) == tuple(new_grid):
        return pos_embed.clone()
    prefix_pos, patch_pos = pos_embed[:, :num_prefix_tokens], pos_embed[:, num_prefix_tokens:]
    D = pos_embed.shape[-1]
    grid = patch_pos.reshape(1, old_grid[0], old_grid[1], D).permute(0, 3, 1, 2)  # (1, D, gh, gw)
    grid = F.interpolate(grid.float(), size=new_grid, mode="bicubic", align_corners=False, antialias=antialias)
    patch_pos = grid.permute(0, 2, 3, 1).reshape(1, -1, D).to(pos_embed.dtype)  # (1, gh'*gw', D)
    return torch.cat([prefix_pos, patch_pos], dim=1)
