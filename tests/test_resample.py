"""FlexiViT PI-resize and position-embedding resampling."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from vit.config import grid_for_patch_size
from vit.model.resample import (
    pi_resize_kernel,
    pi_resize_patch_embed,
    resample_pos_embed,
    resize_matrix,
    resize_patch,
)


def patch_tokens(image: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    return F.conv2d(image, weight, stride=weight.shape[-1])


def upsample_patchwise(image: torch.Tensor, patch: int, new: int) -> torch.Tensor:
    """Resize every P x P patch to p x p with the same bilinear map B (FlexiViT's setting)."""
    B, C, H, W = image.shape
    gh, gw = H // patch, W // patch
    patches = image.reshape(B, C, gh, patch, gw, patch).permute(0, 1, 2, 4, 3, 5)  # (B, C, gh, gw, P, P)
    resized = resize_patch(patches, (new, new))  # (B, C, gh, gw, p, p)
    return resized.permute(0, 1, 2, 4, 3, 5).reshape(B, C, gh * new, gw * new)


def test_same_size_is_identity():
    w = torch.randn(8, 3, 16, 16)
    out = pi_resize_patch_embed(w, (16, 16))
    assert torch.equal(out, w) and out is not w


@pytest.mark.parametrize("old,new", [(16, 32), (8, 16), (7, 14), (16, 24)])
def test_upsampled_image_gives_the_same_tokens(old, new):
    """<B x, pinv(B^T) w> = <x, w>: P -> p >= P with each patch resized by B."""
    torch.manual_seed(0)
    w = torch.randn(12, 3, old, old, dtype=torch.float64)
    x = torch.randn(2, 3, old * 3, old * 2, dtype=torch.float64)
    w_new = pi_resize_patch_embed(w, (new, new))
    x_new = upsample_patchwise(x, old, new)
    assert x_new.shape == (2, 3, new * 3, new * 2)
    torch.testing.assert_close(patch_tokens(x_new, w_new), patch_tokens(x, w), atol=1e-8, rtol=1e-8)


def test_plain_resize_of_the_kernel_would_not_be_exact():
    """The property above is not vacuous: naive kernel interpolation breaks it."""
    torch.manual_seed(0)
    w = torch.randn(4, 3, 8, 8, dtype=torch.float64)
    x = torch.randn(1, 3, 16, 16, dtype=torch.float64)
    naive = resize_patch(w, (16, 16))
    diff = patch_tokens(upsample_patchwise(x, 8, 16), naive) - patch_tokens(x, w)
    assert diff.abs().max() > 1e-2


def test_resize_matrix_matches_resize():
    x = torch.randn(5, 5, dtype=torch.float64)
    B = resize_matrix((5, 5), (9, 9))
    torch.testing.assert_close(B @ x.flatten(), resize_patch(x, (9, 9)).flatten())


def test_downsizing_keeps_shape_and_input_untouched():
    w = torch.randn(6, 3, 16, 16)
    before = w.clone()
    out = pi_resize_patch_embed(w, (4, 4))
    assert out.shape == (6, 3, 4, 4) and out.dtype == w.dtype
    assert torch.equal(w, before)


@pytest.mark.parametrize("P,grid", [(16, 14), (24, 9), (4, 56), (5, 45), (7, 32), (48, 5), (64, 4), (32, 7), (14, 16)])
def test_grid_is_round_of_native_over_patch(P, grid):
    assert grid_for_patch_size(224, P) == grid


def test_pos_embed_keeps_class_position_and_resamples_grid():
    pos = torch.randn(1, 1 + 14 * 14, 32)
    out = resample_pos_embed(pos, (14, 14), (9, 9))
    assert out.shape == (1, 82, 32)
    assert torch.equal(out[:, 0], pos[:, 0])
    same = resample_pos_embed(pos, (14, 14), (14, 14))
    assert torch.equal(same, pos)
    # a constant field stays constant
    const = torch.ones(1, 197, 4)
    torch.testing.assert_close(resample_pos_embed(const, (14, 14), (5, 7)), torch.ones(1, 36, 4))


def test_pos_embed_keeps_every_prefix_token_as_timm_does():
    pos = torch.randn(1, 2 + 4 * 4, 8)  # a class and a distillation token before the grid
    out = resample_pos_embed(pos, (4, 4), (3, 3), num_prefix_tokens=2)
    assert out.shape == (1, 2 + 9, 8) and torch.equal(out[:, :2], pos[:, :2])
    torch.testing.assert_close(out[:, 2:], resample_pos_embed(pos[:, 1:], (4, 4), (3, 3))[:, 1:])
    grid_only = resample_pos_embed(pos[:, 2:], (4, 4), (3, 3), num_prefix_tokens=0)
    torch.testing.assert_close(grid_only, out[:, 2:])


def test_pos_embed_refuses_wrong_token_count():
    with pytest.raises(ValueError, match="197 tokens"):
        resample_pos_embed(torch.randn(1, 50, 8), (14, 14), (9, 9))


def test_the_kernel_resized_in_the_graph_is_the_loaded_one():
    """What training at random patch sizes applies equals what load_model applies, and it has a gradient."""
    w = torch.randn(6, 3, 8, 8, dtype=torch.float64, requires_grad=True)
    resized = pi_resize_kernel(w, (12, 12))
    torch.testing.assert_close(resized, pi_resize_patch_embed(w, (12, 12)))
    resized.sum().backward()
    assert w.grad is not None and w.grad.abs().sum() > 0
