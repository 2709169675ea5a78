"""The ViT paper's Figure 7 (Dosovitskiy et al., 2021) from the weights and one analysis: the patch-embedding
filters' principal components, the position embeddings' similarity and each head's mean attention distance.
"""

from __future__ import annotations

import numpy as np

from vit.views import base, draw, plots
from vit.views.base import DEPTH_PLOT_SIZE, DISPLAY_SIZE, View

FILTER_COLUMNS = 7  # 28 filters in 4 rows of 7, as in the paper


def filter_tiles(filters) -> list[np.ndarray]:
    """(k, 3, P, P) filters -> k (P, P, 3) uint8 RGB tiles, each min-max normalised to its own range."""
    arr = np.asarray(filters, dtype=np.float64).transpose(0, 2, 3, 1)  # (k, P, P, 3)
    return [(draw.normalize(t) * 255).round().astype(np.uint8) for t in arr]


def filters_view(filters, size: int = DISPLAY_SIZE) -> View:
    """ViT Fig. 7 left: the principal components of the patch embedding's kernels (``vit.patch_filters(loaded)``)."""
    tiles = filter_tiles(filters)
    k, _, P, _ = tuple(filters.shape)
    columns = min(FILTER_COLUMNS, k)
    tile = max(8, (size - 4) // columns - 4)
    image = draw.tile_sheet(tiles, columns, tile)
    caption = (
        f"**What the patch embedding looks for:** the first {k} principal components of the D kernels "
        f"({P}×{P}×3) of the patch embedding, the linear map each patch is projected with (ViT paper, Fig. 7 "
        f"left). Strongest first, row by row. Each tile is stretched to its own range (min black, max white, "
        f"per channel together), so compare patterns, not brightness. Trained models show smooth stripes and blobs "
        f"like a CNN's first layer; random weights show noise."
    )
    return View(image, caption, "each tile normalised to its own min and max", f"Patch-embedding filters, {k}")


POSITION_TILES = 14  # at most this many positions a side; larger grids show every k-th position


def position_step(grid: tuple[int, int]) -> int:
    """Every k-th row and column of positions shown, so that at most 14 a side are drawn."""
    return max(1, -(-max(grid) // POSITION_TILES))


def position_view(similarity, grid: tuple[int, int], size: int = DISPLAY_SIZE, cmap: str = "viridis") -> View:
    """ViT Fig. 7 centre: per patch position, its position embedding's cosine similarity to every other.

    ``similarity``: (N, N) from ``vit.position_similarity(loaded)``; ``grid``: (rows, cols).
    """
    sim = np.asarray(similarity, dtype=np.float64)
    rows, cols = grid
    step = position_step(grid)
    picks = [(r, c) for r in range(0, rows, step) for c in range(0, cols, step)]
    shown = np.stack([sim[r * cols + c].reshape(rows, cols) for r, c in picks])  # (n, rows, cols)
    lo, hi = float(shown.min()), float(shown.max())
    columns = len(range(0, cols, step))
    tile = max(4, (size - 2) // columns - 2)
    tiles = [draw.heat_rgb(m, (tile, tile), cmap, (lo, hi)) for m in shown]
    sheet = draw.tile_sheet(tiles, columns, tile, gap=2)
    label = "cosine similarity"
    image = draw.with_colorbar(sheet, cmap, base.bar_number(lo), base.bar_number(hi), label)
    every = "" if step == 1 else (f" Only {base.every_kth(step, 'row and column')} of positions is drawn "
                                  f"({len(range(0, rows, step))}×{columns} of {rows}×{cols}).")
    caption = (
        f"**What the position embeddings learned:** tile (r, c) shows how similar position (r, c)'s embedding "
        f"is to every other position's (cosine similarity), one {rows}×{cols} map per patch position, laid out "
        f"as the patches are (ViT paper, Fig. 7 centre).{every} {grid_words(position_structure(sim, grid))}"
    )
    legend = f"brighter = more similar; all tiles coloured from {base.bar_number(lo)} to {base.bar_number(hi)}"
    return View(image, caption, legend, f"Position embedding similarity, {rows}x{cols}", (lo, hi))


def position_structure(similarity, grid: tuple[int, int]) -> dict[str, float]:
    """What a model's position embeddings encode, in four mean cosine similarities between two positions:
    touching (``neighbours``); in one row or column, farther apart (``line``); neither (``other``), these two
    away from the border so the border cannot pass for a row; and two border positions neither touching nor in
    one row or column (``border``)."""
    sim = np.asarray(similarity, dtype=np.float64)
    rows, cols = grid
    r, c = np.divmod(np.arange(rows * cols), cols)
    dr, dc = np.abs(r[:, None] - r[None]), np.abs(c[:, None] - c[None])
    edge = (r == 0) | (r == rows - 1) | (c == 0) | (c == cols - 1)
    inner = ~edge[:, None] & ~edge[None] if min(rows, cols) >= 6 else np.ones_like(dr, dtype=bool)
    apart = (dr > 1) & (dc > 1)
    masks = {"neighbours": np.maximum(dr, dc) == 1, "line": inner & ((dr == 0) | (dc == 0)) & (np.maximum(dr, dc) > 1),
             "other": inner & apart, "border": edge[:, None] & edge[None] & apart}
    return {k: float(sim[m].mean()) if m.any() else float("nan") for k, m in masks.items()}


STRUCTURE_MARGIN = 0.05  # this much more similar than two unrelated positions: the model encodes that relation


def grid_words(s: dict[str, float]) -> str:
    """What this model's tiles show, from :func:`position_structure` (not what a large ImageNet model would)."""
    numbers = (f"(mean similarity: neighbours {s['neighbours']:.2f}, same row or column {s['line']:.2f}, "
               f"border {s['border']:.2f}, elsewhere {s['other']:.2f})")
    if not np.isfinite(s["other"]):  # a grid too small to tell rows from neighbours
        return f"This grid is too small to tell rows and columns from neighbours {numbers}."
    learned = [what for key, what in (("line", "their own row and column"), ("border", "the image's border"),
                                      ("neighbours", "their neighbours"))
               if s[key] > s["other"] + STRUCTURE_MARGIN]
    if not learned:
        return (f"This model's position embeddings show little 2-D structure {numbers}: untrained embeddings look "
                f"like this; the paper's ImageNet models light up their own row and column.")
    words = ", ".join(learned[:-1]) + (" and " if len(learned) > 1 else "") + learned[-1]
    grid = ("it has learned the 2-D grid from 1-D positions, as the paper's ImageNet models do"
            if s["line"] > s["other"] + STRUCTURE_MARGIN else
            "not the grid's rows and columns, which the paper's large ImageNet models learn")
    return f"This model's tiles light up {words} {numbers}: {grid}."


def distance_points(a) -> tuple[list[int], list[float]]:
    """(layer, pixels) of every head's mean attention distance: L·h points."""
    d = a.mean_attention_distance().numpy()  # (L, h)
    return [l + 1 for l in range(d.shape[0]) for _ in range(d.shape[1])], d.ravel().tolist()


def distance_view(a, size: tuple[int, int] = DEPTH_PLOT_SIZE) -> View:
    """ViT Fig. 7 right: each head's mean attention distance against depth."""
    xs, ys = distance_points(a)
    h, w = a.input_size
    y_max = max(float(np.hypot(h, w)) / 2, max(ys, default=0.0))
    image = plots.dot_plot(xs, ys, list(range(1, a.depth + 1)), "layer (one dot per head)",
                           "mean attention distance (px)", y_max, size)
    d = a.mean_attention_distance()
    caption = (
        f"**How far each head looks:** for each of the h = {a.num_heads} heads of each layer 1 to L = {a.depth}, "
        f"the mean distance in pixels between a query patch and the patches it attends to, weighted by attention "
        f"(ViT paper, Fig. 7 right; like a CNN's receptive field). Layer 1 ranges {float(d[0].min()):.0f}–"
        f"{float(d[0].max()):.0f} px, layer {a.depth} {float(d[-1].min()):.0f}–{float(d[-1].max()):.0f} px. "
        f"In trained models some early heads already look far, others stay local, and deeper heads all look far."
    )
    return View(image, caption, "one dot per head per layer", f"Mean attention distance, layers 1-{a.depth}")
