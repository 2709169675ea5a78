"""The image primitives, numpy and PIL only: colormaps, fonts, overlays, the patch grid, colour bars, text wrapping,
tiles; :mod:`vit.views.plots` draws with these. Cividis by default: colour-blind safe, and it reads in grey."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vit.i18n.linebreak import glued

COLORMAPS = ("cividis", "viridis", "magma", "gray")
DISPLAY_SIZE = 640  # px, a main picture: drawn at the size the page shows it (>= 640 at 1080p), never upscaled


@functools.lru_cache(maxsize=8)
def colormap_lut(name: str = "cividis") -> np.ndarray:
    """A colormap as a (256, 3) uint8 lookup table."""
    if name not in COLORMAPS:
        raise ValueError(f"colormap must be one of {', '.join(COLORMAPS)}, got {name!r}")
    from matplotlib import colormaps  # noqa: PLC0415 - heavy, only when a picture is drawn

    return (colormaps[name](np.linspace(0, 1, 256))[:, :3] * 255).round().astype(np.uint8)


# The pictures' language, set per drawing by registry.draw: Chinese needs a CJK font (PIL has no glyph fallback).
LANGUAGE: contextvars.ContextVar[str] = contextvars.ContextVar("vit_picture_language", default="en")


@contextlib.contextmanager
def language(lang: str):
    """Draw the pictures of this block in ``lang`` ("en" or "zh")."""
    token = LANGUAGE.set(lang)
    try:
        yield
    finally:
        LANGUAGE.reset(token)


def font(size: int, bold: bool = True) -> ImageFont.ImageFont:
    """DejaVu Sans at ``size`` px; Noto Sans CJK SC where installed when drawing in Chinese (:func:`language`)."""
    return typeface(size, bold, LANGUAGE.get() == "zh")


@functools.lru_cache(maxsize=64)
def typeface(size: int, bold: bool, cjk: bool) -> ImageFont.ImageFont:
    """The font file at ``size`` px: Noto Sans CJK SC for ``cjk`` where installed, else DejaVu Sans, else PIL's."""
    from vit import fonts  # noqa: PLC0415

    found = fonts.cjk_file(bold) if cjk else None
    if found is not None:
        return ImageFont.truetype(found[0], size, index=found[1])
    try:
        return ImageFont.truetype("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


@functools.lru_cache(maxsize=8)
def mono_font(size: int) -> ImageFont.ImageFont:
    """DejaVu Sans Mono at ``size`` px (the system's, else matplotlib's copy), for code; PIL's own font else."""
    from matplotlib import get_data_path  # noqa: PLC0415 - heavy, only when a picture is drawn

    for path in ("DejaVuSansMono.ttf", f"{get_data_path()}/fonts/ttf/DejaVuSansMono.ttf"):
        try:
            return ImageFont.truetype(path, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def normalize(values: np.ndarray, scale: tuple[float, float] | None = None) -> np.ndarray:
    """Map ``scale`` = (lo, hi) to [0, 1], clipped; by default min-max. A constant map becomes all zeros."""
    values = np.asarray(values, dtype=np.float64)
    lo, hi = (float(values.min()), float(values.max())) if scale is None else scale
    return np.clip((values - lo) / (hi - lo), 0.0, 1.0) if hi > lo else np.zeros_like(values)


def token_index(cell: tuple[int, int], grid: tuple[int, int], prefix: int = 1) -> int:
    """The token of patch (row, col): the ``prefix`` tokens (class, distillation, registers), then row-major."""
    r, c = cell
    return prefix + r * grid[1] + c


def _display(image: np.ndarray, size: int, copy: bool = True) -> Image.Image:
    """The model's view resized for display, cached by content (``copy=False``: the cache's own, to read only)."""
    image = np.ascontiguousarray(image)
    shown = _display_cached(image.tobytes(), image.shape, size)
    return shown.copy() if copy else shown


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
    """A (rows, cols) map -> (height, width, 3) uint8 colours, one flat block per patch (a new, writable array)."""
    return np.array(heat_blocks(heat, size, cmap, scale))


def heat_blocks(heat: np.ndarray, size: tuple[int, int], cmap: str = "cividis",
                scale: tuple[float, float] | None = None) -> Image.Image:
    """:func:`heat_rgb` as a picture: each patch's colour looked up at the map's own size, then enlarged."""
    idx = (normalize(heat, scale) * 255).round().astype(np.uint8)  # (rows, cols)
    return Image.fromarray(colormap_lut(cmap)[idx]).resize(size, Image.Resampling.NEAREST)


def overlay(
    image: np.ndarray,
    heat: np.ndarray,
    alpha: float = 0.6,
    cmap: str = "cividis",
    size: int = DISPLAY_SIZE,
    mark: tuple[int, int] | None = None,
    scale: tuple[float, float] | None = None,
) -> Image.Image:
    """A (rows, cols) heatmap over the image, ``size`` px on its long side; ``scale``: (lo, hi) at the colormap ends."""
    base = _display(image, size, copy=False)
    out = Image.blend(base, heat_blocks(heat, base.size, cmap, scale), alpha)
    if mark is not None:
        mark_patch(out, heat.shape, mark)
    return out


MARK = (255, 64, 160)  # the query patch: pink, outlined in black so it shows on any colour
RING_BELOW_PX = 24  # cells smaller than this get a ring around the outline, to be found at a glance


def mark_patch(img: Image.Image, grid: tuple[int, int], cell: tuple[int, int]) -> None:
    """Outline patch ``cell`` = (row, col): pink inside, black just outside, seen on any picture; a cell under
    RING_BELOW_PX px also gets a ring and four ticks. At the edge the mark moves inside, to stay in the picture."""
    rows, cols = grid
    cw, ch = img.width / cols, img.height / rows
    r, c = cell
    box = [c * cw, r * ch, (c + 1) * cw - 1, (r + 1) * ch - 1]
    cell_px = min(cw, ch)
    right, bottom = img.width - 1, img.height - 1
    outer = [max(0, box[0] - 2), max(0, box[1] - 2), min(right, box[2] + 2), min(bottom, box[3] + 2)]
    inner = [max(box[0], 2), max(box[1], 2), min(box[2], right - 2), min(box[3], bottom - 2)]  # inset at an edge
    draw = ImageDraw.Draw(img)
    draw.rectangle(outer, outline=(0, 0, 0), width=2)
    draw.rectangle(inner, outline=MARK, width=max(3, round(cell_px / 8)))
    if cell_px >= RING_BELOW_PX:
        return
    radius = max(22.0, 1.2 * cell_px + 12)
    keep = radius + 4  # the ring's black stroke (7 px, half of it outside the circle) stays in the picture
    centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    x, y = min(max(centre[0], keep), right - keep), min(max(centre[1], keep), bottom - keep)
    ticks = (x, y) == centre  # a ring moved in from the edge has its rim on the patch: ticks would point past it
    for colour, width in (((0, 0, 0), 7), (MARK, 3)):
        draw.ellipse([x - radius, y - radius, x + radius, y + radius], outline=colour, width=width)
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)) if ticks else ():
            a, b = radius - 2, radius + 12
            draw.line([(x + dx * a, y + dy * a), (x + dx * b, y + dy * b)], fill=colour, width=width)


GRID_FONT = 14  # px, the smallest number a class reads from the back of a room
SMALLEST_TEXT = 14  # px: no text inside any picture is drawn smaller (tests/test_frames.py checks every font)
ARROW = (214, 140, 0)  # the reading-order arrow: amber, readable on the white margins
_ARROW_STRIP = 16  # px of margin the arrow runs in, beside the numbers, never through them


@dataclass(frozen=True)
class GridLayout:
    """Where the grid's numbers go: in every cell, or on margins (every ``row_step``-th row, ``col_step``-th column)."""

    box: tuple[int, int, int, int]  # (x0, y0, w, h) of the picture inside the drawing: a click maps through it
    size: tuple[int, int]  # (width, height) of the whole drawing
    font_size: int
    in_cells: bool
    row_step: int = 1
    col_step: int = 1
    prefix: int = 1  # tokens before the patches: the numbers start at this


def grid_layout(grid: tuple[int, int], picture: tuple[int, int], prefix: int = 1) -> GridLayout:
    """In every cell where the largest token index fits at >= 14 px; else on margins, every k-th row and column."""
    rows, cols = grid
    w, h = picture
    cw, ch = w / cols, h / rows
    size = max(GRID_FONT, min(22, int(min(cw, ch) * 0.36)))
    widest = font(size).getlength(str(token_index((rows - 1, cols - 1), grid, prefix)))
    if widest + 6 <= cw and size + 6 <= ch:
        return GridLayout((0, 0, w, h), (w, h), size, True, prefix=prefix)
    f = font(GRID_FONT)
    row_step = math.ceil((GRID_FONT + 4) / ch)
    col_step = math.ceil((f.getlength(str(cols - 1)) + 8) / cw)
    left = _ARROW_STRIP + math.ceil(f.getlength(str(token_index((rows - 1, 0), grid, prefix)))) + 10
    top = _ARROW_STRIP + GRID_FONT + 8
    return GridLayout((left, top, w, h), (left + w, top + h), GRID_FONT, False, row_step, col_step, prefix)


def patch_grid(
    image: np.ndarray, grid: tuple[int, int], size: int = DISPLAY_SIZE, mark: tuple[int, int] | None = None,
    prefix: int = 1,
) -> Image.Image:
    """The model's view cut into patches numbered with their tokens (in cells or on margins), a reading-order arrow."""
    image = np.ascontiguousarray(image)
    lines, numbered, layout = _grid_layers(image.tobytes(), image.shape, grid, size, prefix)
    if not layout.in_cells:  # numbers on margins: the mark, then the margins around the picture
        img = lines.copy()
        if mark is not None:
            mark_patch(img, grid, mark)
        return _with_margins(img, grid, layout)
    img = numbered.copy()
    if mark is None:
        return img
    # As if drawn in order (lines, the mark, then every number): the cells the mark reaches are drawn again
    # from the unnumbered layer, marked, and numbered; everything else is the cached numbered grid.
    (r0, c0), (r1, c1) = _cells_under_mark(img.size, grid, mark)
    cw, ch = img.width / grid[1], img.height / grid[0]
    region = (int(c0 * cw), int(r0 * ch), min(img.width, math.ceil((c1 + 1) * cw)),
              min(img.height, math.ceil((r1 + 1) * ch)))
    img.paste(lines.crop(region), region[:2])
    mark_patch(img, grid, mark)
    _number_cells(img, grid, layout, [(r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)], mark)
    return img


GRID_LINES = ((255, 255, 255, 220), (0, 0, 0, 200))  # a light line and a dark one beside it (1 px right, below):
# one of the two shows on any picture, a white canvas (a drawing) and a black one alike; white alone vanished on white


def grid_lines(img: Image.Image, grid: tuple[int, int]) -> None:
    """Draw the borders between the patches of a (rows, cols) ``grid`` on ``img``, in place."""
    rows, cols = grid
    draw = ImageDraw.Draw(img, "RGBA")
    cw, ch = img.width / cols, img.height / rows
    for shift, line in enumerate(GRID_LINES):
        for c in range(1, cols):
            draw.line([(c * cw + shift, 0), (c * cw + shift, img.height)], fill=line, width=1)
        for r in range(1, rows):
            draw.line([(0, r * ch + shift), (img.width, r * ch + shift)], fill=line, width=1)


@functools.lru_cache(maxsize=8)
def _grid_layers(data: bytes, shape: tuple[int, ...], grid: tuple[int, int], size: int, prefix: int):
    """(the picture with its lines, the same numbered in every cell or None, the layout), cached for clicks."""
    img = _display_cached(data, shape, size).convert("RGB")
    rows, cols = grid
    layout = grid_layout(grid, img.size, prefix)
    grid_lines(img, grid)
    if not layout.in_cells:
        return img, None, layout
    numbered = img.copy()
    _number_cells(numbered, grid, layout, [(r, c) for r in range(rows) for c in range(cols)], None)
    return img, numbered, layout


def _number_cells(img: Image.Image, grid: tuple[int, int], layout: GridLayout, cells, mark) -> None:
    """Each cell's token number on a dark box at its top left; the marked patch's on pink, the outline's colour."""
    draw = ImageDraw.Draw(img, "RGBA")
    f = font(layout.font_size)
    cw, ch = img.width / grid[1], img.height / grid[0]
    for r, c in cells:
        xy, text = (c * cw + 3, r * ch + 2), str(token_index((r, c), grid, layout.prefix))
        box = draw.textbbox(xy, text, font=f)
        marked = mark == (r, c)
        draw.rectangle([box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2],
                       fill=(*MARK, 255) if marked else (0, 0, 0, 160))
        draw.text(xy, text, fill=(0, 0, 0, 255) if marked else (255, 255, 255, 255), font=f)


def _cells_under_mark(size: tuple[int, int], grid: tuple[int, int], mark: tuple[int, int]):
    """((r0, c0), (r1, c1)): the cells :func:`mark_patch` draws on (its outline, and on fine grids its ring)."""
    rows, cols = grid
    cw, ch = size[0] / cols, size[1] / rows
    cell_px = min(cw, ch)
    # px beyond the cell: the ring and its ticks, or the ring moved in from the picture's edge by up to its radius
    reach = 4 if cell_px >= RING_BELOW_PX else 2 * max(22.0, 1.2 * cell_px + 12) + 8
    r, c = mark
    r0, r1 = int((r * ch - reach) // ch), int(((r + 1) * ch + reach) // ch)
    c0, c1 = int((c * cw - reach) // cw), int(((c + 1) * cw + reach) // cw)
    return (max(0, r0), max(0, c0)), (min(rows - 1, r1), min(cols - 1, c1))


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
        first = str(token_index((r, 0), grid, layout.prefix))
        draw.text((x0 - 5, y0 + (r + 0.5) * ch), first, fill=ink, font=f, anchor="rm")
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


BAR_FONT = 16  # px: tick labels and legends under the pictures
_BAR_PAD, _BAR_TOP, _BAR_HEIGHT = 14, 10, 18
COLORBAR_RESERVE = _BAR_TOP + _BAR_HEIGHT + 8 + 2 * (BAR_FONT + 6) + 6  # px: a colour-bar strip of two lines (a
# label that wraps, under a bar too short for it even at the smallest text, takes more)
COLORBAR_ONE_LINE = COLORBAR_RESERVE - BAR_FONT - 6  # px: the strip when its numbers and label share a line
COLORBAR_WIDE = 440  # px: from this width the heat views' bars fit on one line (two numbers and the label)


def colorbar_rect(width: int) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of the coloured bar inside a colour-bar strip ``width`` px wide (x1, y1 exclusive)."""
    return _BAR_PAD, _BAR_TOP, width - _BAR_PAD, _BAR_TOP + _BAR_HEIGHT


def colorbar(width: int, cmap: str, lo: str, hi: str, label: str) -> Image.Image:
    """A horizontal colour bar, ``lo`` and ``hi`` under its ends and ``label`` laid out by :func:`colorbar_lines`."""
    x0, y0, x1, y1 = colorbar_rect(width)
    on_bar, lines = colorbar_lines(width, lo, hi, label)
    strip = Image.new("RGB", (width, colorbar_height(len(lines))), "white")
    lut = colormap_lut(cmap)
    ramp = lut[np.round(np.linspace(0, 255, x1 - x0)).astype(int)]  # (x1 - x0, 3): exact ends
    strip.paste(Image.fromarray(np.repeat(ramp[None], y1 - y0, axis=0)), (x0, y0))
    draw = ImageDraw.Draw(strip)
    draw.rectangle([x0 - 1, y0 - 1, x1, y1], outline=(90, 90, 90), width=1)
    for x, text, anchor, f in on_bar:  # on the end's own colour: white on a dark end, ink on a light one
        end = lut[0] if anchor[0] == "l" else lut[255]
        fill = INK if float(np.dot(end, (0.299, 0.587, 0.114))) > 140 else (255, 255, 255)
        draw.text((x, (y0 + y1) / 2), text, fill=fill, font=f, anchor=anchor)
    for i, line in enumerate(lines):
        for x, text, anchor, f in line:
            draw.text((x, y1 + 6 + i * _BAR_LINE), text, fill=INK, font=f, anchor=anchor)
    return strip


_BAR_LINE = BAR_FONT + 6  # px from one line of a colour bar's text to the next
_TEXT_PAD = 4  # px: text under a narrow bar may reach this close to the strip's edges

Piece = tuple[float, str, str, ImageFont.ImageFont]  # (x, text, PIL anchor, font)


def colorbar_height(lines: int) -> int:
    """A colour-bar strip's height with ``lines`` lines of text (1: COLORBAR_ONE_LINE, 2: COLORBAR_RESERVE)."""
    return _BAR_TOP + _BAR_HEIGHT + 8 + lines * _BAR_LINE + 6


def colorbar_lines(width: int, lo: str, hi: str, label: str) -> tuple[list[Piece], list[list[Piece]]]:
    """(the pieces inside the bar, the lines under it): one line where all fits; else the numbers, then the label
    shrunk and wrapped; past two lines, the numbers move inside the bar's ends where they fit."""
    x0, y0, x1, y1 = colorbar_rect(width)
    f = font(BAR_FONT, bold=False)
    lo_w, hi_w, label_w = (f.getlength(t) for t in (lo, hi, label))
    gap = 16
    if lo_w + label_w + hi_w + 2 * gap <= x1 - x0:
        return [], [[(x0, lo, "la", f), ((x0 + lo_w + x1 - hi_w) / 2, label, "ma", f), (x1, hi, "ra", f)]]
    room = width - 2 * _TEXT_PAD
    small = _label_font(label, room)
    labels = [[(width / 2, t, "ma", small)] for t in wrap_text(label, small, room)]
    numbers = _number_line(width, lo, hi)
    tiny = font(SMALLEST_TEXT, bold=False)
    if len(numbers) + len(labels) > 2 and tiny.getlength(lo) + tiny.getlength(hi) + 14 <= x1 - x0:
        return [(x0 + 4, lo, "lm", tiny), (x1 - 4, hi, "rm", tiny)], labels
    return [], numbers + labels


def _number_line(width: int, lo: str, hi: str) -> list[list[Piece]]:
    """A colour bar's two numbers on one line where any size and reach lets them; else a line each."""
    x0, _, x1, _ = colorbar_rect(width)
    for size in (BAR_FONT, SMALLEST_TEXT):
        f = font(size, bold=False)
        need = f.getlength(lo) + f.getlength(hi) + 12
        for left, right in ((x0, x1), (_TEXT_PAD, width - _TEXT_PAD)):
            if need <= right - left:
                return [[(left, lo, "la", f), (right, hi, "ra", f)]]
    room = width - 2 * _TEXT_PAD
    return ([[(_TEXT_PAD, t, "la", f)] for t in wrap_text(lo, f, room)]
            + [[(width - _TEXT_PAD, t, "ra", f)] for t in wrap_text(hi, f, room)])


BAR_LABEL_MIN_FONT = SMALLEST_TEXT  # px: a colour bar's label on its own line shrinks down to this before it wraps


def _label_font(label: str, width: float) -> ImageFont.ImageFont:
    """The largest font from ``BAR_FONT`` down to ``BAR_LABEL_MIN_FONT`` px that fits ``label`` (else the smallest)."""
    for size in range(BAR_FONT, BAR_LABEL_MIN_FONT - 1, -1):
        f = font(size, bold=False)
        if f.getlength(label) <= width:
            return f
    return f


def with_colorbar(img: Image.Image, cmap: str, lo: str, hi: str, label: str, width: int | None = None) -> Image.Image:
    """``img`` with :func:`colorbar` below it: at (0, 0), or centred above a bar ``width`` px wide where wider."""
    width = max(img.width, width or 0)
    bar = colorbar(width, cmap, lo, hi, label)
    out = Image.new("RGB", (width, img.height + bar.height), "white")
    out.paste(img, ((width - img.width) // 2, 0))
    out.paste(bar, (0, img.height))
    return out


def fit_text(text: str, f: ImageFont.ImageFont, width: float) -> str:
    """``text`` cut with an ellipsis to at most ``width`` px."""
    if f.getlength(text) <= width:
        return text
    while text and f.getlength(text + "…") > width:
        text = text[:-1]
    return text.rstrip() + "…"


# Chinese has no spaces: a line may break before or after any of these (ideographs, CJK and full-width punctuation).
CJK = re.compile(r"([\u3000-\u303f\u3400-\u9fff\uff00-\uffef])")


def pieces(paragraph: str) -> list[tuple[str, bool]]:
    """(word, spaced): the words of a paragraph, each Chinese character one, set without a space before it; a
    closing mark stays with the character before it, an opening one with the one after (vit.i18n.linebreak)."""
    out = []
    for word in paragraph.split():
        for j, piece in enumerate(p for p in CJK.split(word) if p):
            tight = j > 0 and (bool(CJK.fullmatch(piece)) or bool(CJK.fullmatch(out[-1][0][-1:])))
            if j > 0 and (not tight or glued(out[-1][0], piece)):
                out[-1] = (out[-1][0] + piece, out[-1][1])
            else:
                out.append((piece, j == 0))
    return out


# Letters Noto Sans CJK lacks, in the notation's plain spelling (Chinese pictures are drawn in it throughout).
_NOT_IN_CJK = str.maketrans({"ᵀ": "^T", "₀": "0", "₁": "1", "₂": "2", "₋": "-", "ℓ": "l", "ℝ": "R"})


def wrap_text(text: str, f: ImageFont.ImageFont, width: float) -> list[str]:
    """Greedy word wrap to ``width`` px: a word longer than a line is broken, never cut; Chinese as :func:`pieces`."""
    if LANGUAGE.get() == "zh":
        text = text.translate(_NOT_IN_CJK)
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word, spaced in pieces(paragraph):
            trial = (f"{line} {word}" if spaced else line + word) if line else word
            if f.getlength(trial) <= width:
                line = trial
                continue
            if line:
                lines.append(line)
            *whole, line = _broken(word, f, width)
            lines += whole
        lines.append(line)
    return lines


def _broken(word: str, f: ImageFont.ImageFont, width: float) -> list[str]:
    """A word in pieces of at most ``width`` px, at least one character each."""
    pieces = [""]
    for ch in word:
        if pieces[-1] and f.getlength(pieces[-1] + ch) > width:
            pieces.append("")
        pieces[-1] += ch
    return pieces


def captioned(img: Image.Image, title: str, paragraphs: Sequence[str], width: int | None = None) -> Image.Image:
    """One picture to keep: a bold title above ``img``, each paragraph wrapped below it (at least 640 px wide)."""
    width = max(img.width, 640 if width is None else width)
    pad = 16
    title_f, body_f = font(22), font(18, bold=False)
    lines = [wrap_text(p, body_f, width - 2 * pad) for p in paragraphs if p]
    line_h = 18 + 8
    titles = wrap_text(title, title_f, width - 2 * pad) if title else []
    title_h = 30 * len(titles) - 8 + 2 * pad if title else pad
    body_h = sum(len(ls) * line_h + 10 for ls in lines) + pad
    sheet = Image.new("RGB", (width, title_h + img.height + body_h), "white")
    draw = ImageDraw.Draw(sheet)
    ink = (20, 20, 20)
    for i, line in enumerate(titles):
        draw.text((pad, pad + 30 * i), line, fill=ink, font=title_f)
    sheet.paste(img, ((width - img.width) // 2, title_h))
    y = title_h + img.height + pad
    for block in lines:
        for line in block:
            draw.text((pad, y), line, fill=ink, font=body_f)
            y += line_h
        y += 10
    return sheet


def message_card(title: str, text: str, width: int) -> Image.Image:
    """A picture that is a sentence: a bold title and wrapped text on a pale card, ``width`` px wide."""
    pad, title_f, body_f = 16, font(20), font(17, bold=False)
    titles, lines = wrap_text(title, title_f, width - 2 * pad), wrap_text(text, body_f, width - 2 * pad)
    top = pad + 27 * len(titles) + 3
    card = Image.new("RGB", (width, top + pad + len(lines) * 25), (246, 244, 238))
    pen = ImageDraw.Draw(card)
    for i, line in enumerate(titles):
        pen.text((pad, pad + 27 * i), line, fill=INK, font=title_f)
    for i, line in enumerate(lines):
        pen.text((pad, top + i * 25), line, fill=INK, font=body_f)
    return card


_SHEET_LABEL, _SHEET_GAP = 24, 6  # px: a tile's title strip, and the gap around tiles


def sheet_fit(n: int, width: int, height: int) -> tuple[int, int]:
    """(columns, tile px) of the largest tiles whose sheet of n, with its colour bar, fits width x height px."""
    best = (1, 8)
    for columns in range(1, n + 1):
        rows = -(-n // columns)
        tile = min((width - _SHEET_GAP) // columns - _SHEET_GAP,
                   (height - COLORBAR_RESERVE - _SHEET_GAP) // rows - _SHEET_LABEL - _SHEET_GAP)
        if tile > best[1]:
            best = (columns, tile)
    return best


def small_multiples(
    image: np.ndarray,
    maps: np.ndarray,
    titles: Sequence[str],
    columns: int = 4,
    tile: int = 150,
    alpha: float = 0.7,
    cmap: str = "cividis",
    from_zero: bool = False,
    short_titles: Sequence[str] | None = None,
) -> Image.Image:
    """One overlay per map, each scaled on its own, in a titled grid; ``from_zero``: so an even head stays even."""
    n = len(maps)
    columns = min(columns, n)
    rows = -(-n // columns)
    label_h, gap = _SHEET_LABEL, _SHEET_GAP
    sheet = Image.new("RGB", (columns * (tile + gap) + gap, rows * (tile + label_h + gap) + gap), "white")
    draw = ImageDraw.Draw(sheet)
    f = font(16)
    for i, (heat, title) in enumerate(zip(maps, titles)):
        r, c = divmod(i, columns)
        x, y = gap + c * (tile + gap), gap + r * (tile + label_h + gap)
        if short_titles is not None and f.getlength(title) > tile - 4:
            title = short_titles[i]
        draw.text((x + 2, y + 2), fit_text(title, f, tile - 4), fill=(20, 20, 20), font=f)
        scale = (0.0, float(np.max(heat))) if from_zero else None
        sheet.paste(overlay(image, heat, alpha, cmap, size=tile, scale=scale), (x, y + label_h))
    return sheet


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


def beside(left: Image.Image, right: Image.Image) -> Image.Image:
    """``left`` beside ``right`` on white, each centred in the height (``left`` at x = 0)."""
    height = max(left.height, right.height)
    out = Image.new("RGB", (left.width + right.width, height), "white")
    out.paste(left, (0, (height - left.height) // 2))
    out.paste(right, (left.width, (height - right.height) // 2))
    return out


def category_overlay(image: np.ndarray, colours: np.ndarray, alpha: float = 0.7,
                     size: int = DISPLAY_SIZE) -> Image.Image:
    """Blend a (rows, cols, 3) uint8 colour per patch over the image, one flat block per patch."""
    base = _display(image, size, copy=False)
    blocks = Image.fromarray(np.ascontiguousarray(colours, dtype=np.uint8)).resize(base.size, Image.Resampling.NEAREST)
    return Image.blend(base, blocks, alpha)


def swatch_legend(width: int, entries: Sequence[tuple[tuple[int, int, int], str]]) -> Image.Image:
    """A legend strip: a colour square and its text per entry, as many a line as fit; a long entry wrapped."""
    f = font(BAR_FONT, bold=False)
    pad, box, line_h = 14, 16, BAR_FONT + 10
    room = width - 2 * pad - box - 8
    placed, x, y = [], pad, 8
    for colour, text in entries:
        lines = wrap_text(text, f, room)
        w = box + 8 + max(f.getlength(t) for t in lines) + 18
        if x > pad and (x + w > width - pad or len(lines) > 1):
            x, y = pad, y + line_h
        placed.append((x, y, colour, lines))
        x, y = x + w, y + line_h * (len(lines) - 1)
        if len(lines) > 1:  # the next entry starts a line of its own
            x = width
    strip = Image.new("RGB", (width, y + line_h + 6), "white")
    draw = ImageDraw.Draw(strip)
    for x, y, colour, lines in placed:
        draw.rectangle([x, y + 2, x + box, y + 2 + box], fill=colour, outline=(90, 90, 90))
        for i, text in enumerate(lines):
            draw.text((x + box + 8, y + 2 + box / 2 + i * line_h), text, fill=INK, font=f, anchor="lm")
    return strip


def panels(pictures: Sequence[Image.Image], titles: Sequence[str], gap: int = 12,
           short_titles: Sequence[str] | None = None, column: int = 0) -> Image.Image:
    """Pictures side by side in columns at least ``column`` px wide under wrapped bold titles (short past two lines)."""
    widths = [max(p.width, column) for p in pictures]
    f = font(BAR_FONT)
    lines = [wrap_text(t, f, w - 4) for w, t in zip(widths, titles)]
    if short_titles is not None and max(len(ls) for ls in lines) > 2:
        lines = [wrap_text(t, f, w - 4) for w, t in zip(widths, short_titles)]
        small = font(SMALLEST_TEXT)
        fewer = [wrap_text(t, small, w - 4) for w, t in zip(widths, short_titles)]
        if sum(len(ls) for ls in fewer) < sum(len(ls) for ls in lines):
            f, lines = small, fewer
    title_h = 6 + (BAR_FONT + 6) * max(len(ls) for ls in lines)
    sheet = Image.new("RGB", (sum(widths) + gap * (len(pictures) - 1), title_h + max(p.height for p in pictures)),
                      "white")
    draw = ImageDraw.Draw(sheet)
    x = 0
    for p, w, block in zip(pictures, widths, lines):
        left = x + (w - p.width) // 2
        for i, line in enumerate(block):
            draw.text((min(left, x + w - 4 - f.getlength(line)) + 2, 4 + i * (BAR_FONT + 6)), line, fill=INK, font=f)
        sheet.paste(p, (left, title_h))
        x += w + gap
    return sheet


def outline_row(img: Image.Image, rows: int, row: int = 0, colour=MARK) -> None:
    """Outline row ``row`` of a picture cut into ``rows`` equal rows (the class token's row of a matrix)."""
    h = img.height / rows
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, row * h, img.width - 1, max(row * h + 2, (row + 1) * h - 1)], outline=colour, width=2)


def tile_sheet(tiles: Sequence[np.ndarray], columns: int, tile: int, gap: int = 4) -> Image.Image:
    """(h, w, 3) uint8 tiles in a grid, each drawn ``tile`` px square (nearest neighbour: pixels stay blocks)."""
    rows = -(-len(tiles) // columns)
    sheet = Image.new("RGB", (columns * (tile + gap) + gap, rows * (tile + gap) + gap), "white")
    for i, t in enumerate(tiles):
        img = Image.fromarray(np.ascontiguousarray(t, dtype=np.uint8)).resize((tile, tile), Image.Resampling.NEAREST)
        sheet.paste(img, tile_origin(i, columns, tile, gap))
    return sheet


def tile_origin(i: int, columns: int, tile: int, gap: int = 4) -> tuple[int, int]:
    """(x, y) of tile ``i``'s top-left corner in :func:`tile_sheet` (row-major, ``gap`` px around every tile)."""
    r, c = divmod(i, columns)
    return gap + c * (tile + gap), gap + r * (tile + gap)
