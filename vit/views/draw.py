"""Pictures from numbers: patch grid, heatmap overlays, small multiples, the depth plot.

numpy and PIL only (matplotlib for its colormap tables and the one real plot,
imported lazily). Nothing here knows about torch modules: inputs are arrays.
Colormaps default to cividis, which reads the same to colour-blind viewers
and in greyscale.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

COLORMAPS = ("cividis", "viridis", "magma", "gray")
DISPLAY_SIZE = 640  # px, a main picture: drawn at the size the page shows it (>= 640 at 1080p), never upscaled


@functools.lru_cache(maxsize=8)
def colormap_lut(name: str = "cividis") -> np.ndarray:
    """A colormap as a (256, 3) uint8 lookup table."""
    if name not in COLORMAPS:
        raise ValueError(f"colormap must be one of {', '.join(COLORMAPS)}, got {name!r}")
    from matplotlib import colormaps  # noqa: PLC0415 - heavy, only when a picture is drawn

    return (colormaps[name](np.linspace(0, 1, 256))[:, :3] * 255).round().astype(np.uint8)


@functools.lru_cache(maxsize=32)
def font(size: int, bold: bool = True) -> ImageFont.ImageFont:
    """DejaVu Sans (bold by default) at ``size`` px; PIL's own font where DejaVu is not installed."""
    try:
        return ImageFont.truetype("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


def normalize(values: np.ndarray, scale: tuple[float, float] | None = None) -> np.ndarray:
    """Map ``scale`` = (lo, hi) to [0, 1], clipped; by default min-max. A constant map becomes all zeros."""
    values = np.asarray(values, dtype=np.float64)
    lo, hi = (float(values.min()), float(values.max())) if scale is None else scale
    return np.clip((values - lo) / (hi - lo), 0.0, 1.0) if hi > lo else np.zeros_like(values)


def _display(image: np.ndarray, size: int) -> Image.Image:
    """The model's view resized for display (one picture is drawn many times: cached by content)."""
    image = np.ascontiguousarray(image)
    return _display_cached(image.tobytes(), image.shape, size).copy()


def fit_size(shape: tuple[int, ...], size: int) -> tuple[int, int]:
    """(width, height) of an (H, W, ...) picture drawn ``size`` px on its longer side."""
    h, w = shape[:2]
    scale = size / max(h, w)
    return round(w * scale), round(h * scale)


@functools.lru_cache(maxsize=32)
def _display_cached(data: bytes, shape: tuple[int, ...], size: int) -> Image.Image:
    h, w = shape[:2]
    img = Image.frombytes("RGB", (w, h), data)
    return img.resize(fit_size(shape, size), Image.Resampling.LANCZOS)


def heat_rgb(heat: np.ndarray, size: tuple[int, int], cmap: str = "cividis",
             scale: tuple[float, float] | None = None) -> np.ndarray:
    """A (rows, cols) map -> (height, width, 3) uint8 colours, one flat block per patch."""
    idx = (normalize(heat, scale) * 255).round().astype(np.uint8)
    blocks = Image.fromarray(idx).resize(size, Image.Resampling.NEAREST)
    return colormap_lut(cmap)[np.asarray(blocks)]


def overlay(
    image: np.ndarray,
    heat: np.ndarray,
    alpha: float = 0.6,
    cmap: str = "cividis",
    size: int = DISPLAY_SIZE,
    mark: tuple[int, int] | None = None,
    scale: tuple[float, float] | None = None,
) -> Image.Image:
    """Blend a (rows, cols) heatmap over the image, drawn ``size`` px on its longer side.

    ``scale`` = (lo, hi) are the numbers given the colormap's ends (default: the map's
    min and max); ``mark`` outlines one patch (row, col).
    """
    base = _display(image, size)
    colours = heat_rgb(heat, base.size, cmap, scale)
    blended = (1 - alpha) * np.asarray(base, dtype=np.float32) + alpha * colours
    out = Image.fromarray(blended.round().astype(np.uint8))
    if mark is not None:
        mark_patch(out, heat.shape, mark)
    return out


MARK = (255, 64, 160)  # the query patch: pink, outlined in black so it shows on any colour
RING_BELOW_PX = 24  # cells smaller than this get a ring around the outline, to be found at a glance


def mark_patch(img: Image.Image, grid: tuple[int, int], cell: tuple[int, int]) -> None:
    """Outline patch ``cell`` = (row, col) of a picture cut into ``grid``; on fine grids ring it too.

    The pink outline is drawn inside the patch, a black one just outside it: visible on
    bright and dark pictures alike. At P = 4 (11-px cells at 640 px) an outline alone is
    an 11-px square, so a ring around it and four crosshair ticks point at it.
    """
    rows, cols = grid
    cw, ch = img.width / cols, img.height / rows
    r, c = cell
    box = [c * cw, r * ch, (c + 1) * cw - 1, (r + 1) * ch - 1]
    cell_px = min(cw, ch)
    draw = ImageDraw.Draw(img)
    draw.rectangle([box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2], outline=(0, 0, 0), width=2)
    draw.rectangle(box, outline=MARK, width=max(3, round(cell_px / 8)))
    if cell_px >= RING_BELOW_PX:
        return
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    radius = max(22.0, 1.2 * cell_px + 12)
    for colour, width in (((0, 0, 0), 7), (MARK, 3)):
        draw.ellipse([x - radius, y - radius, x + radius, y + radius], outline=colour, width=width)
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            a, b = radius - 2, radius + 12
            draw.line([(x + dx * a, y + dy * a), (x + dx * b, y + dy * b)], fill=colour, width=width)


# --------------------------------------------------------------------------- the patch grid

GRID_FONT = 14  # px, the smallest number a class reads from the back of a room
ARROW = (214, 140, 0)  # the reading-order arrow: amber, readable on the white margins
_ARROW_STRIP = 16  # px of margin the arrow runs in, beside the numbers, never through them


@dataclass(frozen=True)
class GridLayout:
    """Where the patch grid's numbers go: in every cell, or on margins outside the picture.

    ``box`` = (x0, y0, w, h) is the picture inside the drawing (a click maps through it).
    With margins, every ``row_step``-th row and ``col_step``-th column is numbered.
    """

    box: tuple[int, int, int, int]
    size: tuple[int, int]  # (width, height) of the whole drawing
    font_size: int
    in_cells: bool
    row_step: int = 1
    col_step: int = 1


def grid_layout(grid: tuple[int, int], picture: tuple[int, int]) -> GridLayout:
    """Lay out the numbers of a (rows, cols) grid over a picture of (width, height) px.

    Every cell carries its token index when the largest index fits inside a cell at
    >= 14 px. Otherwise the margins carry them: left, the token of each row's first
    patch; top, the column; as many rows and columns as fit at 14 px, every k-th with
    the smallest k that fits.
    """
    rows, cols = grid
    w, h = picture
    cw, ch = w / cols, h / rows
    size = max(GRID_FONT, min(22, int(min(cw, ch) * 0.36)))
    widest = font(size).getlength(str(rows * cols))
    if widest + 6 <= cw and size + 6 <= ch:
        return GridLayout((0, 0, w, h), (w, h), size, True)
    f = font(GRID_FONT)
    row_step = math.ceil((GRID_FONT + 4) / ch)
    col_step = math.ceil((f.getlength(str(cols - 1)) + 8) / cw)
    left = _ARROW_STRIP + math.ceil(f.getlength(str(1 + (rows - 1) * cols))) + 10
    top = _ARROW_STRIP + GRID_FONT + 8
    return GridLayout((left, top, w, h), (left + w, top + h), GRID_FONT, False, row_step, col_step)


def patch_grid(
    image: np.ndarray, grid: tuple[int, int], size: int = DISPLAY_SIZE, mark: tuple[int, int] | None = None
) -> Image.Image:
    """The model's view cut into patches, numbered in the row-major order the tokens take.

    Token 0 is the class token, so patch (r, c) is token 1 + r*cols + c. Coarse grids
    carry that number in every cell; fine ones (P = 8, 4 at 224 px) on margins outside
    the picture, with an arrow in each margin for the reading order (row by row, left
    to right) that runs beside the numbers, not through them. See :func:`grid_layout`.
    """
    img = _display(image, size).convert("RGB")
    rows, cols = grid
    layout = grid_layout(grid, img.size)
    draw = ImageDraw.Draw(img, "RGBA")
    cw, ch = img.width / cols, img.height / rows
    line = (255, 255, 255, 200)
    for c in range(1, cols):
        draw.line([(c * cw, 0), (c * cw, img.height)], fill=line, width=1)
    for r in range(1, rows):
        draw.line([(0, r * ch), (img.width, r * ch)], fill=line, width=1)
    if layout.in_cells:
        f = font(layout.font_size)
        for r in range(rows):
            for c in range(cols):
                xy, text = (c * cw + 3, r * ch + 2), str(1 + r * cols + c)
                box = draw.textbbox(xy, text, font=f)
                draw.rectangle([box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2], fill=(0, 0, 0, 160))
                draw.text(xy, text, fill=(255, 255, 255, 255), font=f)
    if mark is not None:
        mark_patch(img, grid, mark)
    if layout.in_cells:
        return img
    return _with_margins(img, grid, layout)


def _with_margins(img: Image.Image, grid: tuple[int, int], layout: GridLayout) -> Image.Image:
    """The picture on a white sheet with row-start tokens on the left and columns on top."""
    rows, cols = grid
    x0, y0, w, h = layout.box
    sheet = Image.new("RGB", layout.size, "white")
    sheet.paste(img, (x0, y0))
    draw = ImageDraw.Draw(sheet)
    f = font(layout.font_size)
    cw, ch = w / cols, h / rows
    ink = (30, 30, 30)
    for r in range(0, rows, layout.row_step):
        draw.text((x0 - 5, y0 + (r + 0.5) * ch), str(1 + r * cols), fill=ink, font=f, anchor="rm")
    for c in range(0, cols, layout.col_step):
        draw.text((x0 + (c + 0.5) * cw, y0 - 4), str(c), fill=ink, font=f, anchor="md")
    mid = _ARROW_STRIP / 2  # arrows in their own strips: along the top (a row), down the left (next row)
    _arrow(draw, (x0 + cw / 2, mid), (x0 + w - cw / 2, mid))
    _arrow(draw, (mid, y0 + ch / 2), (mid, y0 + h - ch / 2))
    return sheet


def _arrow(draw: ImageDraw.ImageDraw, start: tuple[float, float], end: tuple[float, float]) -> None:
    (_, y0), (x1, y1) = start, end
    draw.line([start, end], fill=ARROW, width=3)
    dx, dy = (1, 0) if y0 == y1 else (0, 1)
    head = 7
    draw.polygon([(x1 + dx * 2, y1 + dy * 2), (x1 - dx * head - dy * head, y1 - dy * head - dx * head),
                  (x1 - dx * head + dy * head, y1 - dy * head + dx * head)], fill=ARROW)


# --------------------------------------------------------------------------- colour bars and text

BAR_FONT = 16  # px: tick labels and legends under the pictures
_BAR_PAD, _BAR_TOP, _BAR_HEIGHT = 14, 10, 18


def colorbar_rect(width: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of the coloured bar inside a colour-bar strip ``width`` px wide (x1, y1 exclusive)."""
    return _BAR_PAD, _BAR_TOP, width - _BAR_PAD, _BAR_TOP + _BAR_HEIGHT


def colorbar(width: int, cmap: str, lo: str, hi: str, label: str) -> Image.Image:
    """A horizontal colour bar: the colormap from its first entry (left) to its last (right).

    ``lo`` and ``hi`` are written under its ends (the numbers those colours stand for),
    ``label`` between them when it fits, else on a line of its own.
    """
    x0, y0, x1, y1 = colorbar_rect(width)
    f = font(BAR_FONT, bold=False)
    lo_w, hi_w, label_w = (f.getlength(t) for t in (lo, hi, label))
    one_line = lo_w + label_w + hi_w + 40 <= x1 - x0
    height = y1 + 8 + (BAR_FONT + 6) * (1 if one_line else 2) + 6
    strip = Image.new("RGB", (width, height), "white")
    lut = colormap_lut(cmap)
    ramp = lut[np.round(np.linspace(0, 255, x1 - x0)).astype(int)]  # (x1 - x0, 3): exact ends
    strip.paste(Image.fromarray(np.repeat(ramp[None], y1 - y0, axis=0)), (x0, y0))
    draw = ImageDraw.Draw(strip)
    draw.rectangle([x0 - 1, y0 - 1, x1, y1], outline=(90, 90, 90), width=1)
    ink = (30, 30, 30)
    text_y = y1 + 6
    draw.text((x0, text_y), lo, fill=ink, font=f, anchor="la")
    draw.text((x1, text_y), hi, fill=ink, font=f, anchor="ra")
    if one_line:
        draw.text(((x0 + x1) / 2, text_y), label, fill=ink, font=f, anchor="ma")
    else:
        draw.text(((x0 + x1) / 2, text_y + BAR_FONT + 6), fit_text(label, f, x1 - x0), fill=ink, font=f,
                  anchor="ma")
    return strip


def with_colorbar(img: Image.Image, cmap: str, lo: str, hi: str, label: str) -> Image.Image:
    """``img`` with :func:`colorbar` below it, as one picture (the picture stays at (0, 0))."""
    bar = colorbar(img.width, cmap, lo, hi, label)
    out = Image.new("RGB", (img.width, img.height + bar.height), "white")
    out.paste(img, (0, 0))
    out.paste(bar, (0, img.height))
    return out


def fit_text(text: str, f: ImageFont.ImageFont, width: float) -> str:
    """``text``, cut with an ellipsis "…" to at most ``width`` px in font ``f``."""
    if f.getlength(text) <= width:
        return text
    while text and f.getlength(text + "…") > width:
        text = text[:-1]
    return text.rstrip() + "…"


def wrap_text(text: str, f: ImageFont.ImageFont, width: float) -> list[str]:
    """Greedy word wrap to lines of at most ``width`` px (a word longer than a line is cut with "…")."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split():
            trial = f"{line} {word}" if line else word
            if f.getlength(trial) <= width:
                line = trial
                continue
            if line:
                lines.append(line)
            line = fit_text(word, f, width)
        lines.append(line)
    return lines


def captioned(img: Image.Image, title: str, paragraphs: Sequence[str], width: int | None = None) -> Image.Image:
    """One picture to keep: a bold title above ``img``, then each paragraph wrapped below it.

    Text is 18 px (title 22 px), wrapped to ``width`` (default: the picture's, at least 640).
    """
    width = max(img.width, 640 if width is None else width)
    pad = 16
    title_f, body_f = font(22), font(18, bold=False)
    lines = [wrap_text(p, body_f, width - 2 * pad) for p in paragraphs if p]
    line_h = 18 + 8
    title_h = 22 + 2 * pad if title else pad
    body_h = sum(len(ls) * line_h + 10 for ls in lines) + pad
    sheet = Image.new("RGB", (width, title_h + img.height + body_h), "white")
    draw = ImageDraw.Draw(sheet)
    ink = (20, 20, 20)
    if title:
        draw.text((pad, pad), fit_text(title, title_f, width - 2 * pad), fill=ink, font=title_f)
    sheet.paste(img, ((width - img.width) // 2, title_h))
    y = title_h + img.height + pad
    for block in lines:
        for line in block:
            draw.text((pad, y), line, fill=ink, font=body_f)
            y += line_h
        y += 10
    return sheet


def small_multiples(
    image: np.ndarray,
    maps: np.ndarray,
    titles: Sequence[str],
    columns: int = 4,
    tile: int = 150,
    alpha: float = 0.7,
    cmap: str = "cividis",
    from_zero: bool = False,
) -> Image.Image:
    """One overlay per map (e.g. per head), each normalised on its own, in a labelled grid.

    With ``from_zero`` each tile's colours run from 0 to that tile's max (attention is
    never negative): a head that attends evenly stays evenly coloured instead of having
    its small differences stretched to the colormap's full range.
    """
    n = len(maps)
    columns = min(columns, n)
    rows = -(-n // columns)
    label_h, gap = 24, 6
    sheet = Image.new("RGB", (columns * (tile + gap) + gap, rows * (tile + label_h + gap) + gap), "white")
    draw = ImageDraw.Draw(sheet)
    f = font(16)
    for i, (heat, title) in enumerate(zip(maps, titles)):
        r, c = divmod(i, columns)
        x, y = gap + c * (tile + gap), gap + r * (tile + label_h + gap)
        draw.text((x + 2, y + 2), fit_text(title, f, tile - 4), fill=(20, 20, 20), font=f)
        scale = (0.0, float(np.max(heat))) if from_zero else None
        sheet.paste(overlay(image, heat, alpha, cmap, size=tile, scale=scale), (x, y + label_h))
    return sheet


# --------------------------------------------------------------------------- the depth plot

BLUE, ORANGE = (0, 114, 178), (230, 159, 0)  # Okabe-Ito: safe for colour-blind viewers
LABEL_INK = (150, 95, 0)
_PLOT_MARGINS = (56, 20, 66, 60)  # left, right, top, bottom px around the axes
_LABEL_MAX_PX = 150  # a class name longer than this is cut with "…"


@dataclass(frozen=True)
class PlotText:
    """One piece of text of the depth plot: where its anchor is, and the box it covers."""

    xy: tuple[float, float]
    text: str
    anchor: str  # PIL's text anchor
    box: tuple[float, float, float, float]  # (x0, y0, x1, y1)
    kind: str  # "legend", "axis", "tick" or "label"
    size: int = 16
    fill: tuple[int, int, int] = (30, 30, 30)


def depth_axes(n: int, size: tuple[int, int]):
    """x of layer i (0-based) and y of probability p, in pixels."""
    W, H = size
    left, right, top, bottom = _PLOT_MARGINS

    def x_at(i: int) -> float:
        return left + (W - left - right) * (i + 0.5) / n

    def y_at(p: float) -> float:
        return top + (H - top - bottom) * (1.0 - p)

    return x_at, y_at


def _text(xy, text: str, anchor: str, kind: str, size: int = 16, bold: bool = True, fill=(30, 30, 30)) -> PlotText:
    f = font(size, bold)
    box = ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox(xy, text, font=f, anchor=anchor)
    return PlotText(xy, text, anchor, tuple(float(v) for v in box), kind, size, fill)


def _overlaps(a, b, pad: float = 2) -> bool:
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def _inside(box, size, margin: float = 2) -> bool:
    return box[0] >= margin and box[1] >= margin and box[2] <= size[0] - margin and box[3] <= size[1] - margin


def depth_texts(layers: Sequence[int], top1_probs: Sequence[float], top1_labels: Sequence[str],
                final_probs: Sequence[float], final_label: str, size: tuple[int, int] = (720, 360)) -> list[PlotText]:
    """Every text of the depth plot, laid out so that none overlaps another or leaves the picture.

    Legend, axis titles and ticks first; then the class names of the top-1 points: the
    last layer's, then each layer where the top-1 class changes (a name holds until the
    next one; the same name within two layers of where it is written already is left out).
    A name is cut with "…" past 150 px and put at the first free spot of
    :func:`_label_spots` around its point; where none is free it is skipped: no name
    overlaps another text, covers a point or leaves the plot.
    """
    W, H = size
    n = len(layers)
    left, right, top, bottom = _PLOT_MARGINS
    x_at, y_at = depth_axes(n, size)
    texts: list[PlotText] = []
    f = font(16, bold=False)

    # Legend on one line at the top, the final class name cut to what is left of the width.
    room = W - left - right - 2 * 22 - 24 - f.getlength("top-1 at this layer")
    legend = [(BLUE, "final class: " + fit_text(final_label, f, room - f.getlength("final class: "))),
              (ORANGE, "top-1 at this layer")]
    x = left
    for colour, text in legend:
        texts.append(_text((x + 20, 20), text, "lm", "legend", bold=False))
        x = texts[-1].box[2] + 24
    texts.append(_text((8, top - 14), "probability", "ls", "axis"))
    centre = (left + W - right) / 2
    title = fit_text("layer (early exit: final norm + head on its class token)", font(16), 2 * (W - centre) - 8)
    texts.append(_text((centre, H - 10), title, "ms", "axis"))
    for k in range(6):
        texts.append(_text((left - 8, y_at(k / 5)), f"{k / 5:.1f}", "rm", "tick", bold=False))
    step = 1
    widest = max(f.getlength(str(v)) for v in layers)
    while (widest + 10) > step * (W - left - right) / n:
        step += 1
    for i, layer in enumerate(layers):
        if i % step == 0:
            texts.append(_text((x_at(i), H - bottom + 8), str(layer), "mt", "tick", bold=False))

    placed = [t.box for t in texts]
    for probs in (top1_probs, final_probs):  # the points themselves are never covered
        placed += [(x_at(i) - 5, y_at(float(p)) - 5, x_at(i) + 5, y_at(float(p)) + 5) for i, p in enumerate(probs)]
    changes = [i for i in range(n) if i == 0 or top1_labels[i] != top1_labels[i - 1]]
    named: dict[int, str] = {}  # layer index -> class named there
    for i in dict.fromkeys([n - 1, *changes]):  # the final layer first, then each change, in order
        if any(named.get(j) == top1_labels[i] for j in range(i - 2, i + 3)):
            continue  # the same name a layer or two away says nothing new
        label = fit_text(top1_labels[i], font(15, bold=False), _LABEL_MAX_PX)
        x, y = x_at(i), y_at(float(top1_probs[i]))
        for xy, anchor in _label_spots(x, y):
            t = _text(xy, label, anchor, "label", 15, bold=False, fill=LABEL_INK)
            t = _shift_into(t, left, W - right)
            if _inside(t.box, size) and t.box[3] <= H - bottom and t.box[1] >= top - 10 \
                    and not any(_overlaps(t.box, b) for b in placed):
                texts.append(t)
                placed.append(t.box)
                named[i] = top1_labels[i]
                break
    return texts


def _label_spots(x: float, y: float) -> list[tuple[tuple[float, float], str]]:
    """Where a point's name may go, best first: above it (centred, then starting or ending at it), higher, below."""
    spots = []
    for dy, v in ((-9, "d"), (-26, "d"), (9, "a")):
        spots += [((x, y + dy), "m" + v), ((x - 6, y + dy), "l" + v), ((x + 6, y + dy), "r" + v)]
    return spots


def _shift_into(t: PlotText, x0: float, x1: float) -> PlotText:
    """The same text moved sideways so that it lies between x0 and x1 (a name near an edge)."""
    dx = max(0.0, x0 - t.box[0]) - max(0.0, t.box[2] - x1)
    if not dx:
        return t
    xy = (t.xy[0] + dx, t.xy[1])
    box = (t.box[0] + dx, t.box[1], t.box[2] + dx, t.box[3])
    return PlotText(xy, t.text, t.anchor, box, t.kind, t.size, t.fill)


def depth_plot(layers: Sequence[int], top1_probs: Sequence[float], top1_labels: Sequence[str],
               final_probs: Sequence[float], final_label: str, size: tuple[int, int] = (720, 360)) -> Image.Image:
    """How the prediction forms across depth: early-exit top-1 and the final class, per layer.

    Drawn with PIL (a matplotlib figure costs ~150 ms per request on two cores; this, ~5 ms).
    Blue circles: probability of the final answer after each layer; orange squares:
    probability of whatever is top-1 at that layer, labelled with its class where it
    changes (:func:`depth_texts` places every text).
    """
    W, H = size
    left, right, top, bottom = _PLOT_MARGINS
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    n = len(layers)
    x_at, y_at = depth_axes(n, size)
    for k in range(6):  # horizontal grid
        y = y_at(k / 5)
        draw.line([(left, y), (W - right, y)], fill=(225, 225, 225), width=1)
    draw.line([(left, top), (left, H - bottom), (W - right, H - bottom)], fill=(90, 90, 90), width=2)
    for probs, colour, marker, width in ((top1_probs, ORANGE, "square", 2), (final_probs, BLUE, "circle", 3)):
        points = [(x_at(i), y_at(float(p))) for i, p in enumerate(probs)]
        if len(points) > 1:
            draw.line(points, fill=colour, width=width)
        for x, y in points:
            box = [x - 4, y - 4, x + 4, y + 4]
            (draw.ellipse if marker == "circle" else draw.rectangle)(box, fill=colour)
    texts = depth_texts(layers, top1_probs, top1_labels, final_probs, final_label, size)
    legend = [t for t in texts if t.kind == "legend"]
    for colour, t in zip((BLUE, ORANGE), legend):
        x, y = t.xy[0] - 20, t.xy[1]
        draw.rectangle([x, y - 7, x + 14, y + 7], fill=colour)
    for t in texts:
        f = font(t.size, bold=t.kind == "axis")
        if t.kind == "label":  # a white halo keeps a name readable over the grid and the lines
            draw.rectangle([t.box[0] - 1, t.box[1] - 1, t.box[2] + 1, t.box[3] + 1], fill=(255, 255, 255))
        draw.text(t.xy, t.text, fill=t.fill, font=f, anchor=t.anchor)
    return img


# --------------------------------------------------------------------------- inside the encoder

PALETTE = ((230, 159, 0), (86, 180, 233), (0, 158, 115), (240, 228, 66), (0, 114, 178), (213, 94, 0),
           (204, 121, 167))  # Okabe-Ito: the classes of the lens, safe for colour-blind viewers
OTHER = (150, 150, 150)  # grey: a class outside the legend
INK = (30, 30, 30)


def stack(top: Image.Image, bottom: Image.Image) -> Image.Image:
    """``top`` above ``bottom`` on white, left-aligned (``top`` stays at (0, 0))."""
    out = Image.new("RGB", (max(top.width, bottom.width), top.height + bottom.height), "white")
    out.paste(top, (0, 0))
    out.paste(bottom, (0, top.height))
    return out


def category_overlay(image: np.ndarray, colours: np.ndarray, alpha: float = 0.7,
                     size: int = DISPLAY_SIZE) -> Image.Image:
    """Blend a (rows, cols, 3) uint8 colour per patch over the image, one flat block per patch."""
    base = _display(image, size)
    blocks = np.asarray(Image.fromarray(np.ascontiguousarray(colours, dtype=np.uint8)).resize(
        base.size, Image.Resampling.NEAREST), dtype=np.float32)
    blended = (1 - alpha) * np.asarray(base, dtype=np.float32) + alpha * blocks
    return Image.fromarray(blended.round().astype(np.uint8))


def swatch_legend(width: int, entries: Sequence[tuple[tuple[int, int, int], str]]) -> Image.Image:
    """A legend strip: a colour square and its text per entry, as many a line as fit in ``width``."""
    f = font(BAR_FONT, bold=False)
    pad, box, line_h = 14, 16, BAR_FONT + 10
    placed, x, y = [], pad, 8
    for colour, text in entries:
        text = fit_text(text, f, width - 2 * pad - box - 8)
        w = box + 8 + f.getlength(text) + 18
        if x > pad and x + w > width - pad:
            x, y = pad, y + line_h
        placed.append((x, y, colour, text))
        x += w
    strip = Image.new("RGB", (width, y + line_h + 6), "white")
    draw = ImageDraw.Draw(strip)
    for x, y, colour, text in placed:
        draw.rectangle([x, y + 2, x + box, y + 2 + box], fill=colour, outline=(90, 90, 90))
        draw.text((x + box + 8, y + 2 + box / 2), text, fill=INK, font=f, anchor="lm")
    return strip


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is >= ``value`` (an axis end with round ticks)."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= value * (1 - 1e-9))


def _axes(draw: ImageDraw.ImageDraw, size: tuple[int, int], y_max: float, y_label: str, x_label: str,
          margins=(64, 20, 50, 56)):
    """Draw axes, a y grid with 5 ticks from 0 to ``y_max`` rounded up to a round number; return (x0, x1, y_at)."""
    y_max = nice_ceiling(y_max)
    W, H = size
    left, right, top, bottom = margins
    f = font(BAR_FONT, bold=False)

    def y_at(v: float) -> float:
        return H - bottom - (H - top - bottom) * (v / y_max if y_max > 0 else 0.0)

    for k in range(6):
        y = y_at(y_max * k / 5)
        draw.line([(left, y), (W - right, y)], fill=(225, 225, 225), width=1)
        draw.text((left - 6, y), f"{y_max * k / 5:.3g}", fill=INK, font=f, anchor="rm")
    draw.line([(left, top), (left, H - bottom), (W - right, H - bottom)], fill=(90, 90, 90), width=2)
    draw.text((8, top - 4), y_label, fill=INK, font=font(BAR_FONT), anchor="ls")
    draw.text(((left + W - right) / 2, H - 8), x_label, fill=INK, font=font(BAR_FONT), anchor="ms")
    return left, W - right, y_at


def _x_ticks(draw, xs: Sequence[float], labels: Sequence[str], y: float) -> None:
    f = font(BAR_FONT, bold=False)
    step = 1
    widest = max((f.getlength(t) for t in labels), default=0)
    while len(xs) > 1 and (widest + 10) > step * (xs[1] - xs[0]):
        step += 1
    for i, (x, t) in enumerate(zip(xs, labels)):
        if i % step == 0:
            draw.text((x, y + 6), t, fill=INK, font=f, anchor="mt")


SERIES_COLOURS = tuple(PALETTE[i] for i in (4, 0, 2, 5))  # grouped_bars' colours, series by series


def grouped_bars(values: np.ndarray, series: Sequence[str], x_labels: Sequence[str], x_label: str, y_label: str,
                 size: tuple[int, int] = (800, 400)) -> Image.Image:
    """One group of bars per row of ``values`` (n, s), one colour per series, legend on top."""
    values = np.asarray(values, dtype=np.float64)
    n, s = values.shape
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    y_max = float(values.max()) if values.size else 1.0
    x0, x1, y_at = _axes(draw, size, y_max, y_label, x_label)
    group = (x1 - x0) / n
    bar = max(1.0, group * 0.8 / s)
    centres = []
    for i in range(n):
        start = x0 + group * i + group * 0.1
        centres.append(start + bar * s / 2)
        for j in range(s):
            draw.rectangle([start + j * bar, y_at(values[i, j]), start + (j + 1) * bar - 1, y_at(0)],
                           fill=SERIES_COLOURS[j % 4])
    _x_ticks(draw, centres, x_labels, y_at(0))
    f = font(BAR_FONT, bold=False)
    x = x0
    for j, name in enumerate(series):
        draw.rectangle([x, 12, x + 14, 26], fill=SERIES_COLOURS[j % 4])
        draw.text((x + 20, 19), name, fill=INK, font=f, anchor="lm")
        x += 20 + f.getlength(name) + 22
    return img


def dot_plot(xs: Sequence[float], ys: Sequence[float], x_ticks: Sequence[int], x_label: str, y_label: str,
             y_max: float, size: tuple[int, int] = (800, 400)) -> Image.Image:
    """One dot per (x, y), x among ``x_ticks`` (categories, e.g. layers), y from 0 to ``y_max``."""
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    x0, x1, y_at = _axes(draw, size, y_max, y_label, x_label)
    n = len(x_ticks)
    x_of = {t: x0 + (x1 - x0) * (i + 0.5) / n for i, t in enumerate(x_ticks)}
    for x, y in zip(xs, ys):
        cx, cy = x_of[x], y_at(float(y))
        draw.ellipse([cx - 5, cy - 5, cx + 5, cy + 5], fill=BLUE, outline=(255, 255, 255))
    _x_ticks(draw, list(x_of.values()), [str(t) for t in x_ticks], y_at(0))
    return img


def heat_image(heat: np.ndarray, size: tuple[int, int], cmap: str = "cividis",
               scale: tuple[float, float] | None = None) -> Image.Image:
    """A (rows, cols) map alone, as colours drawn (width, height) px (no photo under it)."""
    return Image.fromarray(heat_rgb(heat, size, cmap, scale))


def panels(pictures: Sequence[Image.Image], titles: Sequence[str], gap: int = 12) -> Image.Image:
    """Pictures side by side, each with a bold title above it."""
    title_h = BAR_FONT + 12
    width = sum(p.width for p in pictures) + gap * (len(pictures) - 1)
    sheet = Image.new("RGB", (width, title_h + max(p.height for p in pictures)), "white")
    draw = ImageDraw.Draw(sheet)
    x = 0
    for p, t in zip(pictures, titles):
        draw.text((x + 2, 4), fit_text(t, font(BAR_FONT), p.width - 4), fill=INK, font=font(BAR_FONT))
        sheet.paste(p, (x, title_h))
        x += p.width + gap
    return sheet


def outline_row(img: Image.Image, rows: int, row: int = 0, colour=(255, 64, 160)) -> None:
    """Outline row ``row`` of a picture cut into ``rows`` equal rows (the class token's row of a matrix)."""
    h = img.height / rows
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, row * h, img.width - 1, max(row * h + 2, (row + 1) * h - 1)], outline=colour, width=2)


def tile_sheet(tiles: Sequence[np.ndarray], columns: int, tile: int, gap: int = 4) -> Image.Image:
    """(h, w, 3) uint8 tiles in a grid, each drawn ``tile`` px square (nearest neighbour: pixels stay blocks)."""
    rows = -(-len(tiles) // columns)
    sheet = Image.new("RGB", (columns * (tile + gap) + gap, rows * (tile + gap) + gap), "white")
    for i, t in enumerate(tiles):
        r, c = divmod(i, columns)
        img = Image.fromarray(np.ascontiguousarray(t, dtype=np.uint8)).resize((tile, tile), Image.Resampling.NEAREST)
        sheet.paste(img, (gap + c * (tile + gap), gap + r * (tile + gap)))
    return sheet


def tile_origin(i: int, columns: int, tile: int, gap: int = 4) -> tuple[int, int]:
    """(x, y) of tile ``i``'s top-left corner in :func:`tile_sheet`."""
    r, c = divmod(i, columns)
    return gap + c * (tile + gap), gap + r * (tile + gap)


def block_diagram(stream: str, attention: str, mlp: str, output: str, title: str,
                  width: int = 800) -> Image.Image:
    """The pre-norm block as the chapter writes it, numbers on its arrows.

    H = X + MSA(LN(X)) on the first row, Y = H + MLP(LN(H)) on the second; the residual
    path of each row is drawn over it. The four strings are put where those vectors flow:
    ``stream`` under X, ``attention`` on MSA's output, ``mlp`` on the MLP's, ``output`` under Y.
    """
    height = 250
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    f, small, big = font(16), font(14, bold=False), font(17)
    ink, grey = (30, 30, 30), (90, 90, 90)
    draw.text((10, 8), title, fill=ink, font=big)
    boxes = ["LayerNorm", "MSA", "+"], ["LayerNorm", "MLP", "+"]
    x_in, x_out = 14, width - 14
    step = (x_out - x_in - 70) / 4
    for row, (names, start, end, branch, colour) in enumerate(
            ((boxes[0], "X", "H", attention, SERIES_COLOURS[1]), (boxes[1], "H", "Y", mlp, SERIES_COLOURS[2]))):
        y = 90 + row * 100
        xs = [x_in + 40 + step * (i + 1) for i in range(3)]
        draw.text((x_in, y), start, fill=ink, font=big, anchor="lm")
        draw.text((x_out, y), end, fill=ink, font=big, anchor="rm")
        draw.line([(x_in + 22, y), (x_out - 24, y)], fill=grey, width=2)
        for x, name in zip(xs, names):
            if name == "+":
                draw.ellipse([x - 13, y - 13, x + 13, y + 13], fill="white", outline=ink, width=2)
                draw.text((x, y), "+", fill=ink, font=big, anchor="mm")
            else:
                w = draw.textlength(name, font=f) / 2 + 10
                draw.rounded_rectangle([x - w, y - 15, x + w, y + 15], radius=6, fill=(238, 242, 248), outline=ink)
                draw.text((x, y), name, fill=ink, font=f, anchor="mm")
        # The residual path: from the row's input over the boxes into the "+".
        top = y - 34
        draw.line([(x_in + 30, y - 8), (x_in + 30, top), (xs[2], top), (xs[2], y - 14)], fill=grey, width=2)
        draw.text(((x_in + 30 + xs[2]) / 2, top - 3), "residual path", fill=grey, font=small, anchor="md")
        draw.text(((xs[1] + xs[2]) / 2, y + 20), branch, fill=colour, font=f, anchor="ma")
    draw.text((x_in, 90 + 22), stream, fill=SERIES_COLOURS[0], font=f, anchor="la")
    draw.text((x_out, 190 + 22), output, fill=SERIES_COLOURS[3], font=f, anchor="ra")
    return img


def _dashed(draw: ImageDraw.ImageDraw, points: Sequence[tuple[float, float]], fill, width: int, dash: float = 9) -> None:
    """A polyline drawn in dashes of ``dash`` px (gaps as long), continuing across its corners."""
    on, left = True, dash
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = math.hypot(x1 - x0, y1 - y0)
        t = 0.0
        while t < length:
            step = min(left, length - t)
            if on:
                a, b = t / length, (t + step) / length
                draw.line([(x0 + (x1 - x0) * a, y0 + (y1 - y0) * a), (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)],
                          fill=fill, width=width)
            t += step
            left -= step
            if left <= 0:
                on, left = not on, dash


@dataclass(frozen=True)
class Series:
    """One line of :func:`line_plot`."""

    name: str  # in the legend
    xs: Sequence[float]  # in [0, 1]
    ys: Sequence[float]
    colour: tuple[int, int, int]
    dashed: bool = False  # a reference line (e.g. random order), drawn in dashes with hollow markers


def line_plot(series: Sequence[Series], x_label: str, y_label: str, y_max: float = 1.0,
              size: tuple[int, int] = (800, 400)) -> Image.Image:
    """Lines over x in [0, 1] (ticks in per cent), y from 0 to ``y_max``, legend on top."""
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    x0, x1, y_at = _axes(draw, size, y_max, y_label, x_label, margins=(64, 24, 66, 56))
    ticks = [i / 5 for i in range(6)]
    _x_ticks(draw, [x0 + (x1 - x0) * t for t in ticks], [f"{t:.0%}" for t in ticks], y_at(0))
    for s in series:
        points = [(x0 + (x1 - x0) * float(x), y_at(float(y))) for x, y in zip(s.xs, s.ys)]
        if s.dashed:
            _dashed(draw, points, s.colour, 2)
        elif len(points) > 1:
            draw.line(points, fill=s.colour, width=3)
        for x, y in points:
            draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill="white" if s.dashed else s.colour, outline=s.colour,
                         width=2)
    f = font(BAR_FONT, bold=False)
    x, y = x0, 14
    for s in series:  # the legend, wrapped onto a second line when it does not fit
        width = 34 + f.getlength(s.name) + 18
        if x + width > size[0] - 8 and x > x0:
            x, y = x0, y + 24
        if s.dashed:
            _dashed(draw, [(x, y), (x + 26, y)], s.colour, 2, dash=5)
        else:
            draw.line([(x, y), (x + 26, y)], fill=s.colour, width=3)
        draw.text((x + 32, y), s.name, fill=INK, font=f, anchor="lm")
        x += width
    return img
