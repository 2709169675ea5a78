"""The Attention tab's views: attention rollout (Abnar & Zuidema, 2020) and the class token's attention
as small multiples, one tile per head of a layer or one per layer (chapter 11.4.2).
"""

from __future__ import annotations

import numpy as np

from vit.views import base, draw
from vit.views.base import DISPLAY_SIZE, HEAT_LABEL, TILE_SIZE, View, fit_note


def rollout_view(a, layer: int, opacity: float, cmap: str, size: int = DISPLAY_SIZE) -> View:
    """Attention rollout up to ``layer``: how much of each patch reaches the class token."""
    heat = a.rollout(layer).numpy()  # (rows, cols)
    image, scale, legend = base.heat_view(a, heat, opacity, cmap, size)
    discard = f", weakest {a.discard_ratio:.0%} of each row's links dropped" if a.discard_ratio else ""
    caption = (
        f"**Attention rollout, layers 1–{layer}:** how much of each patch flows into the class token "
        f"through attention and the residual path: per layer rownorm(A + I), heads fused by "
        f"**{a.head_fusion}**{discard}, multiplied from layer 1 to {layer}{base.class_token_share(heat)}."
    )
    return View(image, caption, legend, f"Attention rollout, layers 1-{layer}", scale, fit_note(a))


# --------------------------------------------------------------------------- small multiples


def _sheet(n: int, size: int | tuple[int, int]) -> tuple[int, int]:
    """(columns, tile px) for n tiles.

    ``size`` a tile's px: 4 a row up to 16 tiles, then 6 smaller ones; a few tiles drawn larger.
    ``size`` a frame (width, height): the columns that give the largest tiles with the whole sheet, its
    titles and its colour bar inside the frame (``vit.views.draw.small_multiples``' geometry).
    """
    if isinstance(size, tuple):
        return draw.sheet_fit(n, *size)
    columns = n if n <= 4 else 4 if n <= 16 else 6
    return columns, min(round(size * 1.6), size * 4 // columns)


def _tiles_view(a, maps: np.ndarray, titles: list[str], opacity: float, cmap: str,
                size: int | tuple[int, int]):
    """(sheet with its shared colour bar, legend): each tile coloured from 0 to its own max."""
    columns, tile = _sheet(len(maps), size)
    sheet = draw.small_multiples(a.image, maps, titles, columns, tile, opacity, cmap, from_zero=True)
    image = draw.with_colorbar(sheet, cmap, "0", "each tile's max", HEAT_LABEL)
    legend = f"{HEAT_LABEL}; each tile coloured from 0 to its own max (compare where tiles look, not how strongly)"
    return image, legend


def heads_view(a, layer: int, opacity: float, cmap: str, size: int | tuple[int, int] = TILE_SIZE) -> View:
    """Layer ``layer``, one tile per head: the class token's attention in each (``size``: tile px, or a frame)."""
    titles = [f"head {i + 1}" for i in range(a.num_heads)]
    image, legend = _tiles_view(a, a.head_maps(layer).numpy(), titles, opacity, cmap, size)  # (h, rows, cols)
    caption = (
        f"**Layer {layer}, one picture per head:** the class token's row of softmax(QKᵀ/√d) in each of "
        f"the h = {a.num_heads} heads; each head is free to look somewhere else."
    )
    return View(image, caption, legend, f"Heads of layer {layer}")


def layers_view(a, opacity: float, cmap: str, size: int | tuple[int, int] = TILE_SIZE) -> View:
    """One tile per layer: the class token's head-fused attention, layer 1 to L (``size``: tile px, or a frame)."""
    maps = np.stack([a.attention_map(n).numpy() for n in range(1, a.depth + 1)])  # (L, rows, cols)
    titles = [f"layer {n}" for n in range(1, a.depth + 1)]
    image, legend = _tiles_view(a, maps, titles, opacity, cmap, size)
    caption = (
        f"**The class token in every layer** (heads fused by {a.head_fusion}), layer 1 to L = {a.depth}: "
        f"how its attention moves as the tokens exchange information."
    )
    return View(image, caption, legend, f"Class token attention, layers 1-{a.depth}")
