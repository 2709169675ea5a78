"""The What if? tab's views, both clickable (``View.cells``): the image with its removed patches hatched and rollout
over those kept, and the L×h grid of heads (off: crossed; after "head importance": coloured by each one's worth)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from vit import i18n
from vit.i18n.names import class_name
from vit.views import base, describe, draw
from vit.views.base import DISPLAY_SIZE, View

HATCH = (235, 235, 235)  # a removed patch: pale diagonal stripes over a darkened patch
OFF = (213, 94, 0)  # a head switched off: a vermilion cross (the palette's, visible to colour-blind viewers)


def _percent(p: float) -> str:
    return f"{p:.1%}"


def _heads_words(ablated, ablation: str, lang: str = "en") -> str:
    if not ablated:
        return ""
    pairs = ", ".join(f"{l}:{h}" for l, h in ablated[:6]) + (", …" if len(ablated) > 6 else "")
    how = i18n.text("how-zero" if ablation == "zero" else "how-mean", lang)
    heads = i18n.text("head-one" if len(ablated) == 1 else "head-many", lang)
    return i18n.text("heads-off", lang, n=len(ablated), heads=heads, pairs=pairs, how=how)


def change_words(w, lang: str = "en") -> str:
    """What was taken away, in words: "12 of 64 patches removed and 2 heads off (...)"; "" if nothing."""
    parts = []
    if w.removed:
        parts.append(i18n.text("patches-removed", lang, n=len(w.removed), total=len(w.removed) + len(w.kept)))
    if w.ablated:
        parts.append(_heads_words(w.ablated, w.ablation, lang))
    return i18n.text("and", lang).join(parts)


def hatch(img: Image.Image, grid: tuple[int, int], cells) -> None:
    """Darken and stripe the patches ``cells`` (row-major indices) of a picture cut into ``grid``, in place."""
    rows, cols = grid
    cw, ch = img.width / cols, img.height / rows
    pixels = np.asarray(img).copy()
    for i in cells:
        r, c = divmod(int(i), cols)
        y0, y1, x0, x1 = round(r * ch), round((r + 1) * ch), round(c * cw), round((c + 1) * cw)
        pixels[y0:y1, x0:x1] = (pixels[y0:y1, x0:x1] * 0.25 + 40).astype(np.uint8)
    img.paste(Image.fromarray(pixels))
    pen = ImageDraw.Draw(img)
    step = max(4.0, min(cw, ch) / 3)
    for i in cells:
        r, c = divmod(int(i), cols)
        x0, y0, x1, y1 = c * cw, r * ch, (c + 1) * cw, (r + 1) * ch
        d = step
        while d < (x1 - x0) + (y1 - y0):  # lines of slope -1 inside the cell
            a = (x0 + min(d, x1 - x0), y0 + max(0.0, d - (x1 - x0)))
            b = (x0 + max(0.0, d - (y1 - y0)), y0 + min(d, y1 - y0))
            pen.line([a, b], fill=HATCH, width=1)
            d += step


def intervention_view(w, opacity: float, cmap: str, size: int = DISPLAY_SIZE, lang: str = "en") -> View:
    """The image the model ran on: removed patches hatched, rollout of the class token over the kept ones."""
    heat = np.nan_to_num(w.rollout, nan=0.0)
    kept_values = w.rollout[~np.isnan(w.rollout)]
    lo, hi = float(kept_values.min()), float(kept_values.max())
    picture = draw.overlay(w.image, heat, opacity, cmap, size, scale=(lo, hi))
    hatch(picture, w.grid, w.removed)
    label = i18n.text("rollout-label", lang)
    image = draw.with_colorbar(picture, cmap, base.bar_number(lo), base.bar_number(hi), label)
    change = change_words(w, lang)
    before, after = _percent(w.prob_before), _percent(w.prob_after)
    named = class_name(w.label, lang)
    if not change:
        caption = i18n.text("whatif-nothing", lang, label=named, before=before)
    else:
        grey = "" if w.grey_prob is None else i18n.text("whatif-grey", lang, p=_percent(w.grey_prob))
        top = w.topk[0]
        now = i18n.text("whatif-now", lang, label=class_name(top.label, lang), p=_percent(top.prob))
        tokens = i18n.text("token-many" if w.num_prefix_tokens > 1 else "token-one", lang)
        caption = i18n.text("whatif-caption", lang, change=change, label=named, before=before, after=after,
                            now=now, kept=len(w.kept), prefix=", ".join(w.prefix_token_names), tokens=tokens,
                            grey=grey)
    legend = i18n.text("whatif-legend", lang, label=label, lo=base.bar_number(lo), hi=base.bar_number(hi))
    cells = base.Cells(0, 0, picture.width, picture.height, *w.grid)
    return View(image, caption, legend, i18n.text("whatif-title", lang, label=named), (lo, hi),
                alt=_whatif_alt(w, lang), cells=cells)


LISTED = 6  # removed patches the text alternative names at most


def _whatif_alt(w, lang: str) -> str:
    p = w.num_prefix_tokens
    top = describe.top(w.rollout, p, lang)  # (rows, cols), NaN where removed
    before, after = _percent(w.prob_before), _percent(w.prob_after)
    if not w.changed:
        return i18n.text("alt-whatif-nothing", lang, label=class_name(w.label, lang), before=before, top=top)
    parts = []
    if w.removed:
        tokens = [str(p + i) for i in w.removed[:LISTED]]
        if len(w.removed) > LISTED:
            tokens.append(i18n.text("alt-more", lang, n=len(w.removed) - LISTED))
        parts.append(i18n.text("alt-removed", lang, n=len(w.removed), total=len(w.removed) + len(w.kept),
                               tokens=describe.join(tokens, lang)))
    if w.ablated:
        parts.append(i18n.text("alt-off", lang, n=len(w.ablated), pairs=describe.pairs(list(w.ablated), lang)))
    now = w.topk[0]
    return i18n.text("alt-whatif", lang, change=i18n.text("alt-and", lang).join(parts),
                     label=class_name(w.label, lang), before=before, after=after, now=class_name(now.label, lang),
                     p=_percent(now.prob), kept=len(w.kept), top=top)


# --------------------------------------------------------------------------- the grid of heads


@dataclass(frozen=True)
class HeadGrid:
    """What the grid of heads draws."""

    depth: int
    heads: int
    ablated: tuple[tuple[int, int], ...] = ()
    importance: np.ndarray | None = None  # (L, h): drop in the class's probability with that head alone off
    label: str = ""  # the class the importance is about
    ablation: str = "zero"


@dataclass(frozen=True)
class HeadLayout:
    """Where the cells are: layer numbers in the left margin, head numbers in the top one."""

    left: int
    top: int
    cell_w: float
    cell_h: float
    depth: int
    heads: int


LABEL_FONT = draw.SMALLEST_TEXT + 2  # px


def head_layout(depth: int, heads: int, size: tuple[int, int], bar: bool = False) -> HeadLayout:
    """The grid's layout in a picture of ``size`` (width, height), room for a colour bar under it or not."""
    width, height = size
    left, top = 5 * LABEL_FONT, 2 * LABEL_FONT + 8
    bottom = draw.COLORBAR_RESERVE if bar else 4
    cell_w = max(8.0, (width - left - 8) / heads)
    cell_h = max(8.0, min(cell_w, (height - top - bottom) / depth))
    return HeadLayout(left, top, cell_w, cell_h, depth, heads)


def p_change(drop: float, lang: str = "en") -> str:
    """A drop in a probability (0.404) as a student reads it: "p falls by 40.4 points" (a rise for a negative one)."""
    return i18n.text("p-falls" if drop >= 0 else "p-rises", lang, points=abs(drop) * 100)


def head_grid_view(g: HeadGrid, cmap: str, size: tuple[int, int] = base.DEPTH_PLOT_SIZE, lang: str = "en") -> View:
    """The L×h heads: a cell per head (click to switch it off or on), crossed when off, coloured by importance."""
    lay = head_layout(g.depth, g.heads, size, bar=g.importance is not None)
    width = size[0]
    grid_h = round(lay.top + lay.cell_h * g.depth + 4)
    img = Image.new("RGB", (width, grid_h), "white")
    pen = ImageDraw.Draw(img)
    f = draw.font(LABEL_FONT, bold=False)
    colours = None
    if g.importance is not None:
        lo, hi = 0.0, max(float(np.nanmax(g.importance)), 1e-6)
        colours = draw.colormap_lut(cmap)[(draw.normalize(g.importance, (lo, hi)) * 255).round().astype(np.uint8)]
    label_every = max(1, round(LABEL_FONT * 1.6 / lay.cell_w))
    pen.text((lay.left, 2), i18n.text("grid-head", lang), fill=draw.INK, font=f)
    for h in range(g.heads):
        if h % label_every == 0 or h == g.heads - 1:
            x = lay.left + (h + 0.5) * lay.cell_w
            pen.text((x, lay.top - 4), str(h + 1), fill=draw.INK, font=f, anchor="ms")
    row_every = max(1, round(LABEL_FONT * 1.2 / lay.cell_h))
    for l in range(g.depth):
        y = lay.top + (l + 0.5) * lay.cell_h
        if l % row_every == 0 or l == g.depth - 1:
            pen.text((lay.left - 8, y), i18n.text("grid-layer", lang, n=1) if l == 0 else str(l + 1), fill=draw.INK,
                     font=f, anchor="rm")
        for h in range(g.heads):
            x0, y0 = lay.left + h * lay.cell_w, lay.top + l * lay.cell_h
            box = [x0 + 1, y0 + 1, x0 + lay.cell_w - 1, y0 + lay.cell_h - 1]
            fill = tuple(int(v) for v in colours[l, h]) if colours is not None else (236, 240, 246)
            pen.rectangle(box, fill=fill, outline=(170, 170, 170))
            if (l + 1, h + 1) in g.ablated:
                k = max(2, round(min(lay.cell_w, lay.cell_h) / 8))
                pen.line([box[0] + k, box[1] + k, box[2] - k, box[3] - k], fill=OFF, width=k)
                pen.line([box[0] + k, box[3] - k, box[2] - k, box[1] + k], fill=OFF, width=k)
    off = _heads_words(g.ablated, g.ablation, lang)
    now = i18n.text("heads-now", lang, off=off) if off else ""
    if g.importance is not None:
        lo, hi = 0.0, max(float(np.nanmax(g.importance)), 1e-6)
        img = draw.with_colorbar(img, cmap, base.bar_number(lo), base.bar_number(hi),
                                 i18n.text("importance-bar", lang, label=class_name(g.label, lang)))
        best = np.unravel_index(int(np.nanargmax(g.importance)), g.importance.shape)
        how = i18n.text("how-zero" if g.ablation == "zero" else "how-mean-short", lang)
        caption = i18n.text("importance-caption", lang, label=class_name(g.label, lang), how=how, layer=best[0] + 1,
                            head=best[1] + 1, change=p_change(float(g.importance[best]), lang), now=now)
        legend = i18n.text("importance-legend", lang)
    else:
        caption = i18n.text("heads-caption-plain", lang, L=g.depth, h=g.heads, now=now)
        legend = i18n.text("heads-legend", lang)
    cells = base.Cells(lay.left, lay.top, lay.cell_w * g.heads, lay.cell_h * g.depth, g.depth, g.heads)
    return View(img, caption, legend, i18n.text("heads-grid-title", lang), alt=_head_grid_alt(g, lang), cells=cells)


def _head_grid_alt(g: HeadGrid, lang: str) -> str:
    off = i18n.text("alt-off", lang, n=len(g.ablated), pairs=describe.pairs(list(g.ablated), lang)) if g.ablated \
        else i18n.text("alt-none-off", lang)
    if g.importance is None:
        return i18n.text("alt-grid-heads", lang, L=g.depth, h=g.heads, off=off)
    drops = np.asarray(g.importance, dtype=np.float64)  # (L, h)
    flat = np.where(np.isnan(drops), -np.inf, drops).ravel()
    order = np.argsort(-flat, kind="stable")[:describe.TOP]
    top = [describe.valued(i18n.text("alt-pair", lang, layer=i // g.heads + 1, head=i % g.heads + 1),
                           p_change(float(flat[i]), lang), lang) for i in order if np.isfinite(flat[i])]
    small = int((np.abs(drops[~np.isnan(drops)]) < 0.01).sum())
    return i18n.text("alt-importance", lang, label=class_name(g.label, lang), L=g.depth, h=g.heads,
                     top=describe.join(top, lang), small=small, total=drops.size, off=off)
