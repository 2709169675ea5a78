"""The ViT paper's Figure 7 (Dosovitskiy et al., 2021): the patch-embedding filters' principal components, the
position embeddings' similarity and each head's mean attention distance."""

from __future__ import annotations

import numpy as np

from vit import i18n
from vit.views import base, draw, plots
from vit.views.base import DEPTH_PLOT_SIZE, DISPLAY_SIZE, View

FILTER_COLUMNS = 7  # 28 filters in 4 rows of 7, as in the paper


def filter_tiles(filters) -> list[np.ndarray]:
    """(k, 3, P, P) filters -> k (P, P, 3) uint8 RGB tiles, each min-max normalised to its own range."""
    arr = np.asarray(filters, dtype=np.float64).transpose(0, 2, 3, 1)  # (k, P, P, 3)
    return [(draw.normalize(t) * 255).round().astype(np.uint8) for t in arr]


def filters_view(filters, size: int = DISPLAY_SIZE, lang: str = "en") -> View:
    """ViT Fig. 7 left: the principal components of the patch embedding's kernels (``vit.patch_filters(loaded)``)."""
    tiles = filter_tiles(filters)
    k, _, P, _ = tuple(filters.shape)
    columns = min(FILTER_COLUMNS, k)
    tile = max(8, (size - 4) // columns - 4)
    image = draw.tile_sheet(tiles, columns, tile)
    caption = i18n.text("filters-caption", lang, k=k, P=P)
    alt = i18n.text("alt-filters", lang, k=k, P=P, rows=-(-k // columns), columns=columns, smooth=smoothness(filters))
    return View(image, caption, i18n.text("filters-legend", lang), i18n.text("filters-title", lang, k=k), alt=alt)


def smoothness(filters) -> float:
    """The filters' mean correlation of neighbouring pixels: near 1 for smooth stripes and blobs, near 0 for noise."""
    out = []
    for f in np.asarray(filters, dtype=np.float64):  # (3, P, P)
        x = np.concatenate([f[:, :, :-1].ravel(), f[:, :-1, :].ravel()])
        y = np.concatenate([f[:, :, 1:].ravel(), f[:, 1:, :].ravel()])
        if x.std() > 0 and y.std() > 0:
            out.append(float(np.corrcoef(x, y)[0, 1]))
    return float(np.mean(out)) if out else 0.0


POSITION_TILES = 14  # at most this many positions a side; larger grids show every k-th position


def position_step(grid: tuple[int, int]) -> int:
    """Every k-th row and column of positions shown, so that at most 14 a side are drawn."""
    return max(1, -(-max(grid) // POSITION_TILES))


def position_view(similarity, grid: tuple[int, int], size: int = DISPLAY_SIZE, cmap: str = "viridis",
                  lang: str = "en") -> View:
    """ViT Fig. 7 centre: each position's cosine similarity to every other (``similarity``: (N, N))."""
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
    label = i18n.text("position-label", lang)
    image = draw.with_colorbar(sheet, cmap, base.bar_number(lo), base.bar_number(hi), label)
    suffix = {2: "nd", 3: "rd"}.get(step, "th")
    every = "" if step == 1 else i18n.text("position-every", lang, k=step, suffix=suffix,
                                           shown=len(range(0, rows, step)), columns=columns, rows=rows, cols=cols)
    structure = position_structure(sim, grid)
    caption = i18n.text("position-caption", lang, rows=rows, cols=cols, every=every,
                        structure=grid_words(structure, lang))
    legend = i18n.text("position-legend", lang, lo=base.bar_number(lo), hi=base.bar_number(hi))
    alt = i18n.text("alt-position", lang, shown=len(range(0, rows, step)), columns=columns, rows=rows, cols=cols,
                    lo=base.bar_number(lo), hi=base.bar_number(hi), numbers=_structure_numbers(structure, lang))
    return View(image, caption, legend, i18n.text("position-title", lang, rows=rows, cols=cols), (lo, hi), alt=alt)


def position_structure(similarity, grid: tuple[int, int]) -> dict[str, float]:
    """Mean cosine similarities of two positions: touching, in one row or column farther apart (``line``), neither
    (``other``; these two off the border, which could pass for a row), and two apart on the border."""
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


def grid_words(s: dict[str, float], lang: str = "en") -> str:
    """What this model's tiles show, from :func:`position_structure` (not what a large ImageNet model would)."""
    numbers = _structure_numbers(s, lang)
    if not np.isfinite(s["other"]):  # a grid too small to tell rows from neighbours
        return i18n.text("structure-small", lang, numbers=numbers)
    learned = [i18n.text(f"structure-{key}", lang) for key in ("line", "border", "neighbours")
               if s[key] > s["other"] + STRUCTURE_MARGIN]
    if not learned:
        return i18n.text("structure-none", lang, numbers=numbers)
    comma = "、" if i18n.language(lang) == "zh" else ", "
    words = comma.join(learned[:-1]) + (i18n.text("structure-and", lang) if len(learned) > 1 else "") + learned[-1]
    grid = i18n.text("structure-grid" if s["line"] > s["other"] + STRUCTURE_MARGIN else "structure-not-grid", lang)
    return i18n.text("structure-lights", lang, words=words, numbers=numbers, grid=grid)


def _structure_numbers(s: dict[str, float], lang: str) -> str:
    return i18n.text("structure-numbers", lang, n=s["neighbours"], line=s["line"], border=s["border"],
                     other=s["other"])


def distance_points(a) -> tuple[list[int], list[float]]:
    """(layer, pixels) of every head's mean attention distance: L·h points."""
    d = a.mean_attention_distance().numpy()  # (L, h)
    return [l + 1 for l in range(d.shape[0]) for _ in range(d.shape[1])], d.ravel().tolist()


def distance_view(a, size: tuple[int, int] = DEPTH_PLOT_SIZE, lang: str = "en") -> View:
    """ViT Fig. 7 right: each head's mean attention distance against depth."""
    xs, ys = distance_points(a)
    h, w = a.input_size
    y_max = max(float(np.hypot(h, w)) / 2, max(ys, default=0.0))
    image = plots.dot_plot(xs, ys, list(range(1, a.depth + 1)), i18n.text("distance-x", lang),
                           i18n.text("distance-y", lang), y_max, size)
    d = a.mean_attention_distance().numpy()  # (L, h)
    ends = dict(h=a.num_heads, L=a.depth, lo1=float(d[0].min()), hi1=float(d[0].max()), loL=float(d[-1].min()),
                hiL=float(d[-1].max()))
    caption = i18n.text("distance-caption", lang, **ends)
    fl, fh = np.unravel_index(int(np.argmax(d)), d.shape)
    nl, nh = np.unravel_index(int(np.argmin(d)), d.shape)
    alt = i18n.text("alt-distance", lang, **ends, fl=fl + 1, fh=fh + 1, far=float(d[fl, fh]), nl=nl + 1, nh=nh + 1,
                    near=float(d[nl, nh]))
    return View(image, caption, i18n.text("distance-legend", lang), i18n.text("distance-title", lang, L=a.depth),
                alt=alt)
