"""The Attention tab's views (chapter 11.4.2): attention rollout (Abnar & Zuidema, 2020) and the class token's
attention, one tile per head of a layer or one per layer."""

from __future__ import annotations

import numpy as np

from vit import i18n
from vit.views import base, describe, draw
from vit.views.base import DISPLAY_SIZE, TILE_SIZE, View, fit_note


def rollout_view(a, layer: int, opacity: float, cmap: str, size: int = DISPLAY_SIZE, lang: str = "en",
                 mark: tuple[int, int] | None = None) -> View:
    """Attention rollout up to ``layer``: how much of each patch reaches the class token (``mark``: a patch
    (row, col) outlined, as a class's guess is on the lesson's reveal)."""
    heat = a.rollout(layer).numpy()  # (rows, cols)
    image, scale, legend = base.heat_view(a, heat, opacity, cmap, size, mark=mark, lang=lang)
    discard = i18n.text("rollout-discard", lang, ratio=a.discard_ratio) if a.discard_ratio else ""
    caption = i18n.text("rollout-caption", lang, layer=layer, fusion=a.head_fusion, discard=discard,
                        share=base.class_token_share(heat, lang))
    alt = i18n.text("alt-rollout", lang, layer=layer, L=a.depth, top=describe.top(heat, a.num_prefix_tokens, lang),
                    focus=describe.focus_words(heat, lang))
    return View(image, caption, legend, i18n.text("rollout-title", lang, layer=layer), scale, fit_note(a, lang), alt,
                base.patch_cells(a, size))


# --------------------------------------------------------------------------- small multiples


def _sheet(n: int, size: int | tuple[int, int]) -> tuple[int, int]:
    """(columns, tile px) for n tiles: for a tile ``size``, 4 a row up to 16 tiles, then 6; for a frame (width,
    height), the largest tiles whose sheet fits it (:func:`vit.views.draw.sheet_fit`)."""
    if isinstance(size, tuple):
        return draw.sheet_fit(n, *size)
    columns = n if n <= 4 else 4 if n <= 16 else 6
    return columns, min(round(size * 1.6), size * 4 // columns)


def _tiles_view(a, maps: np.ndarray, titles: list[str], opacity: float, cmap: str,
                size: int | tuple[int, int], lang: str = "en"):
    """(sheet with its shared colour bar, legend): each tile coloured from 0 to its own max."""
    columns, tile = _sheet(len(maps), size)
    sheet = draw.small_multiples(a.image, maps, titles, columns, tile, opacity, cmap, from_zero=True,
                                 short_titles=[str(i + 1) for i in range(len(maps))])  # heads and layers from 1
    label = i18n.text("heat-label", lang)
    frame = size[0] if isinstance(size, tuple) else None  # the bar as wide as the frame, under a narrow sheet
    image = draw.with_colorbar(sheet, cmap, "0", i18n.text("tile-max", lang), label, frame)
    return image, i18n.text("tiles-legend", lang, label=label)


def heads_view(a, layer: int, opacity: float, cmap: str, size: int | tuple[int, int] = TILE_SIZE,
               lang: str = "en") -> View:
    """Layer ``layer``, one tile per head: the class token's attention in each (``size``: tile px, or a frame)."""
    maps = a.head_maps(layer).numpy()  # (h, rows, cols)
    titles = [i18n.text("tile-head", lang, n=i + 1) for i in range(a.num_heads)]
    image, legend = _tiles_view(a, maps, titles, opacity, cmap, size, lang)
    caption = i18n.text("heads-caption", lang, layer=layer, h=a.num_heads)
    found = [describe.focus(m) or (0.0, m.size, m.size) for m in maps]
    best = min(range(len(maps)), key=lambda i: (found[i][1], -found[i][0], i))  # the fewest patches hold half
    tops = [str(describe.brightest(m, a.num_prefix_tokens, 1)[0][0]) for m in maps]  # each tile: where, not how much
    alt = i18n.text("alt-heads", lang, layer=layer, L=a.depth, h=len(maps), top=describe.join(tops, lang),
                    best=best + 1, focus=describe.focus_words(maps[best], lang))
    return View(image, caption, legend, i18n.text("heads-title", lang, layer=layer), alt=alt)


def layers_view(a, opacity: float, cmap: str, size: int | tuple[int, int] = TILE_SIZE, lang: str = "en") -> View:
    """One tile per layer: the class token's head-fused attention, layer 1 to L (``size``: tile px, or a frame)."""
    maps = np.stack([a.attention_map(n).numpy() for n in range(1, a.depth + 1)])  # (L, rows, cols)
    titles = [i18n.text("tile-layer", lang, n=n) for n in range(1, a.depth + 1)]
    image, legend = _tiles_view(a, maps, titles, opacity, cmap, size, lang)
    caption = i18n.text("layers-caption", lang, fusion=a.head_fusion, L=a.depth)
    tops = describe.series([str(describe.brightest(m, a.num_prefix_tokens, 1)[0][0]) for m in maps], lang)
    first, last = (describe.focus(m) or (0.0, m.size, m.size) for m in (maps[0], maps[-1]))
    alt = i18n.text("alt-layers", lang, fusion=a.head_fusion, L=a.depth, top=tops, first=first[1], n=maps[0].size,
                    last=last[1])
    return View(image, caption, legend, i18n.text("layers-title", lang, L=a.depth), alt=alt)
