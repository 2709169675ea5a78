"""Occlusion on the tokens, the causal check beside a map: Zeiler & Fergus 2014, "Visualizing and Understanding
Convolutional Networks" (ECCV). Each 2 x 2 block of patch tokens (stride 1) is removed in turn and the model runs
on the tokens left, as What if? removes patches; a patch's score is the mean, over the blocks that hold it, of the
drop in the asked class's log-probability: positive where taking the patch away hurts the class.
"""

from __future__ import annotations

import torch
from torch import Tensor

from vit.model.partial import classify_from

BLOCK = 2  # the side of the square of patches removed at once
BATCH_TOKENS = 8192  # tokens per batch: 42 runs at 196 tokens


def blocks(rows: int, cols: int, side: int = BLOCK) -> Tensor:
    """Every side x side square of patches, stride 1, as row-major patch indices: (M, side^2)."""
    side = max(1, min(side, rows, cols))
    corners = [(r, c) for r in range(rows - side + 1) for c in range(cols - side + 1)]
    return torch.tensor([[(r + i) * cols + c + j for i in range(side) for j in range(side)] for r, c in corners])


def runs(rows: int, cols: int) -> int:
    """How many forward passes the map takes: one per block, and the whole image."""
    return len(blocks(rows, cols)) + 1


def patch_scores(drops: Tensor, squares: Tensor, num_patches: int) -> Tensor:
    """Each patch's mean drop over the squares that hold it: (M,), (M, k) -> (N,) (0 for a patch in none)."""
    total = torch.zeros(num_patches, dtype=torch.float32).index_add_(
        0, squares.flatten(), drops.float().repeat_interleave(squares.shape[1]))
    count = torch.bincount(squares.flatten(), minlength=num_patches).float()
    return total / count.clamp(min=1)


@torch.no_grad()
def occlusion(model, x: Tensor, target: int | None) -> tuple[Tensor, Tensor, int]:
    """(logits (1, K), the scores as a token row (T,) with 0 for the prefix tokens, target)."""
    cfg = model.config
    rows = cols = cfg.grid_size
    tokens = model.embedding(x)  # (1, T, D)
    logits = classify_from(model, tokens)  # (1, K): through the same blocks as the runs, so nothing removed drops 0
    target = int(logits[0].argmax()) if target is None else target
    base = logits[0].float().log_softmax(-1)[target]
    squares = blocks(rows, cols)  # (M, k)
    prefix = cfg.num_prefix_tokens
    every = torch.arange(cfg.num_patches)
    keep = torch.stack([every[~torch.isin(every, s)] for s in squares])  # (M, N - k)
    index = torch.cat([torch.arange(prefix).expand(len(keep), -1), prefix + keep], dim=1).to(x.device)  # (M, T - k)
    per_batch = max(1, BATCH_TOKENS // index.shape[1])
    drops = torch.cat([base - classify_from(model, tokens[0][chunk]).float().log_softmax(-1)[:, target]
                       for chunk in index.split(per_batch)])
    scores = patch_scores(drops.cpu(), squares, cfg.num_patches)  # (N,)
    return logits, torch.cat([scores.new_zeros(prefix), scores]), target
