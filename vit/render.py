"""Pictures from numbers: patch grid, heatmap overlays, small multiples, the depth plot.

numpy and PIL only (matplotlib for its colormap tables and the one real plot,
imported lazily). Nothing here knows about torch modules: inputs are arrays.
Colormaps default to cividis, which reads the same to colour-blind viewers
and in greyscale.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

COLORMAPS = ("cividis", "viridis", "magma", "gray")
DISPLAY_SIZE = 448  # pixels: large enough for a projector, small enough to render fast


@functools.lru_cache(maxsize=8)
def colormap_lut(name: str = "cividis") -> np.ndarray:
    """A colormap as a (256, 3) uint8 lookup table."""
    if name not in COLORMAPS:
        raise ValueError(f"colormap must be one of {', '.join(COLORMAPS)}, got {name!r}")
    from matplotlib import colormaps  # noqa: PLC0415 - heavy, only when a picture is drawn

    return (colormaps[name](np.linspace(0, 1, 256))[:, :3] * 255).round().astype(np.uint8)


@functools.lru_cache(maxsize=16)
def font(size: int) -> ImageFont.ImageFont:
    try:
        return ImageFont.truetype("DejaVuSans-Bold.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


def normalize(values: np.ndarray) -> np.ndarray:
    """Min-max to [0, 1]; a constant map becomes all zeros."""
    values = np.asarray(values, dtype=np.float64)
    lo, hi = float(values.min()), float(values.max())
    return (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)


def _display(image: np.ndarray, size: int) -> Image.Image:
    """The model's view resized for display (one picture is drawn many times: cached by content)."""
    image = np.ascontiguousarray(image)
    return _display_cached(image.tobytes(), image.shape, size).copy()


@functools.lru_cache(maxsize=32)
def _display_cached(data: bytes, shape: tuple[int, ...], size: int) -> Image.Image:
    h, w = shape[:2]
    scale = size / max(h, w)
    img = Image.frombytes("RGB", (w, h), data)
    return img.resize((round(w * scale), round(h * scale)), Image.Resampling.LANCZOS)


def heat_rgb(heat: np.ndarray, size: tuple[int, int], cmap: str = "cividis") -> np.ndarray:
    """A (rows, cols) map -> (height, width, 3) uint8 colours, one flat block per patch."""
    idx = (normalize(heat) * 255).round().astype(np.uint8)
    blocks = Image.fromarray(idx).resize(size, Image.Resampling.NEAREST)
    return colormap_lut(cmap)[np.asarray(blocks)]


def overlay(
    image: np.ndarray,
    heat: np.ndarray,
    alpha: float = 0.6,
    cmap: str = "cividis",
    size: int = DISPLAY_SIZE,
    mark: tuple[int, int] | None = None,
) -> Image.Image:
    """Blend a (rows, cols) heatmap over the image; ``mark`` outlines one patch (row, col)."""
    base = _display(image, size)
    colours = heat_rgb(heat, base.size, cmap)
    blended = (1 - alpha) * np.asarray(base, dtype=np.float32) + alpha * colours
    out = Image.fromarray(blended.round().astype(np.uint8))
    if mark is not None:
        _outline(out, heat.shape, mark)
    return out


def _outline(img: Image.Image, grid: tuple[int, int], cell: tuple[int, int], colour=(255, 64, 160)) -> None:
    rows, cols = grid
    cw, ch = img.width / cols, img.height / rows
    r, c = cell
    width = max(2, round(min(cw, ch) / 8))
    ImageDraw.Draw(img).rectangle(
        [c * cw, r * ch, (c + 1) * cw - 1, (r + 1) * ch - 1], outline=colour, width=width
    )


def patch_grid(
    image: np.ndarray, grid: tuple[int, int], size: int = DISPLAY_SIZE, mark: tuple[int, int] | None = None
) -> Image.Image:
    """The model's view cut into patches, each numbered in the row-major order the tokens take.

    Token 0 is the class token, so patch (r, c) is token 1 + r*cols + c; the
    numbers shown are those token indices. On fine grids only the first row
    and column are numbered and an arrow shows the reading order.
    """
    img = _display(image, size).convert("RGB")
    rows, cols = grid
    draw = ImageDraw.Draw(img, "RGBA")
    cw, ch = img.width / cols, img.height / rows
    line = (255, 255, 255, 200)
    for c in range(1, cols):
        draw.line([(c * cw, 0), (c * cw, img.height)], fill=line, width=1)
    for r in range(1, rows):
        draw.line([(0, r * ch), (img.width, r * ch)], fill=line, width=1)
    cell = min(cw, ch)
    label_all = cell >= 22
    f = font(max(9, min(18, int(cell * 0.38))) if label_all else 11)
    for r in range(rows):
        for c in range(cols):
            if not (label_all or r == 0 or c == 0) or (not label_all and (r % 4 or c % 4)):
                continue
            token = 1 + r * cols + c
            x, y = c * cw + 2, r * ch + 1
            text = str(token)
            box = draw.textbbox((x, y), text, font=f)
            draw.rectangle([box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1], fill=(0, 0, 0, 150))
            draw.text((x, y), text, fill=(255, 255, 255, 255), font=f)
    if not label_all:  # reading order: along the first row, then the next
        y = ch / 2
        draw.line([(cw * 0.5, y), (img.width - cw * 0.5, y)], fill=(255, 200, 0, 230), width=3)
        draw.line([(img.width - cw * 0.5, y), (cw * 0.5, y + ch)], fill=(255, 200, 0, 160), width=2)
    if mark is not None:
        _outline(img, grid, mark)
    return img


def small_multiples(
    image: np.ndarray,
    maps: np.ndarray,
    titles: Sequence[str],
    columns: int = 4,
    tile: int = 150,
    alpha: float = 0.7,
    cmap: str = "cividis",
) -> Image.Image:
    """One overlay per map (e.g. per head), each normalised on its own, in a labelled grid."""
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
        draw.text((x + 2, y + 2), title, fill=(20, 20, 20), font=f)
        sheet.paste(overlay(image, heat, alpha, cmap, size=tile), (x, y + label_h))
    return sheet


def depth_plot(layers: Sequence[int], top1_probs: Sequence[float], top1_labels: Sequence[str],
               final_probs: Sequence[float], final_label: str, size: tuple[int, int] = (720, 360)) -> Image.Image:
    """How the prediction forms across depth: early-exit top-1 and the final class, per layer.

    Drawn with PIL (a matplotlib figure costs ~150 ms per request on two cores; this, ~5 ms).
    Blue circles: probability of the final answer after each layer; orange squares:
    probability of whatever is top-1 at that layer, labelled with its class.
    """
    W, H = size
    left, right, top, bottom = 64, 16, 44, 58
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    small, medium = font(13), font(15)
    n = len(layers)

    def x_at(i: int) -> float:
        return left + (W - left - right) * (i + 0.5) / n

    def y_at(p: float) -> float:
        return top + (H - top - bottom) * (1.0 - p)

    for k in range(6):  # horizontal grid and probability axis
        p = k / 5
        y = y_at(p)
        draw.line([(left, y), (W - right, y)], fill=(225, 225, 225), width=1)
        draw.text((left - 8, y), f"{p:.1f}", fill=(60, 60, 60), font=small, anchor="rm")
    draw.line([(left, top), (left, H - bottom), (W - right, H - bottom)], fill=(90, 90, 90), width=2)
    step = max(1, n // 16)
    for i, layer in enumerate(layers):
        if i % step == 0 or i == n - 1:
            draw.text((x_at(i), H - bottom + 6), str(layer), fill=(60, 60, 60), font=small, anchor="mt")
    draw.text(((left + W - right) / 2, H - 8), "layer (early exit: final norm + head on its class token)",
              fill=(30, 30, 30), font=medium, anchor="ms")
    draw.text((14, top - 16), "probability", fill=(30, 30, 30), font=medium, anchor="ls")

    blue, orange = (0, 114, 178), (230, 159, 0)  # Okabe-Ito: safe for colour-blind viewers
    for probs, colour, marker, width in ((top1_probs, orange, "square", 2), (final_probs, blue, "circle", 3)):
        points = [(x_at(i), y_at(float(p))) for i, p in enumerate(probs)]
        if len(points) > 1:
            draw.line(points, fill=colour, width=width)
        for x, y in points:
            box = [x - 4, y - 4, x + 4, y + 4]
            (draw.ellipse if marker == "circle" else draw.rectangle)(box, fill=colour)
    label_step = max(1, -(-n // 6))  # at most about six labels
    for i, (p, label) in enumerate(zip(top1_probs, top1_labels)):
        if i % label_step == 0 or i == n - 1:
            draw.text((x_at(i), y_at(float(p)) - 8), label[:14], fill=(150, 95, 0), font=small, anchor="md")

    legend = [(blue, f"final class: {final_label[:28]}"), (orange, "top-1 at this layer")]
    x = left + 110
    for colour, text in legend:
        draw.rectangle([x, 12, x + 14, 26], fill=colour)
        draw.text((x + 20, 19), text, fill=(30, 30, 30), font=medium, anchor="lm")
        x += 40 + draw.textlength(text, font=medium)
    return img
