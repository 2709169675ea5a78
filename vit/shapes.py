"""Drawn shapes and their masks, the data set of the ViT trained here; image ``i`` of ``sample(n, seed)`` depends
only on ``(seed, i)``. ``plain`` (the tables' style), ``varied`` and ``sketch`` (training only: a model that knows
one drawing style fails on anyone else's); docs/shapes-model.md has the rules, precise enough to redraw them."""

from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

STYLES = ("plain", "varied", "sketch")
# The label is the index. No hexagon: at the smallest size it differs from a circle by less than one pixel.
CLASSES: tuple[str, ...] = ("circle", "square", "triangle", "star", "cross", "ring", "diamond", "heart")

MIN_FRACTION, MAX_FRACTION = 0.22, 0.45  # the diameter 2r as a fraction of the image side
MIN_LUMA_CONTRAST = 0.35
SUPERSAMPLE = 4
_ROUND_POINTS = 96


# --------------------------------------------------------------------------- outlines (unit circle, unrotated)


def _regular(k: int, phase: float = math.pi / 2) -> np.ndarray:
    angles = phase + 2 * math.pi * np.arange(k) / k
    return np.stack([np.cos(angles), -np.sin(angles)], axis=1)  # y down, first corner on top


def _with_inner(inner: float) -> np.ndarray:
    """A five-pointed star whose inner corners are at ``inner`` (the outer ones at r = 1)."""
    outer, inside = _regular(5), inner * _regular(5, math.pi / 2 + math.pi / 5)
    return np.stack([outer, inside], axis=1).reshape(-1, 2)


def _bars(w: float) -> np.ndarray:
    """A cross of two bars of half-width ``w`` (r = 1)."""
    return np.array([(-w, -1), (w, -1), (w, -w), (1, -w), (1, w), (w, w), (w, 1), (-w, 1), (-w, w), (-1, w),
                     (-1, -w), (-w, -w)], dtype=float)


def _heart() -> np.ndarray:
    t = np.linspace(0, 2 * math.pi, _ROUND_POINTS, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))  # y down
    pts = np.stack([x, y], axis=1)
    pts -= (pts.max(0) + pts.min(0)) / 2  # centre the bounding box
    return pts / np.abs(pts).max()


OUTLINES: dict[str, np.ndarray] = {
    "circle": _regular(_ROUND_POINTS),
    "square": _regular(4, math.pi / 4),
    "triangle": _regular(3),
    "star": _with_inner(0.45),
    "cross": _bars(0.35),
    "ring": _regular(_ROUND_POINTS),
    "diamond": np.array([(0, -1), (0.55, 0), (0, 1), (-0.55, 0)], dtype=float),
    "heart": _heart(),
}
RING_HOLE = 0.55  # the ring's hole, as a fraction of r


def shape_alpha(name: str, size: int, centre: tuple[float, float], radius: float, angle: float) -> np.ndarray:
    """The anti-aliased coverage of one shape, (S, S) float32 in [0, 1]: ``size`` (S), ``centre`` (x, y) and
    ``radius`` in pixels; ``angle`` in radians, counter-clockwise on screen."""
    if name not in OUTLINES:
        raise ValueError(f"shape must be one of {', '.join(CLASSES)}, got {name!r}")
    k = SUPERSAMPLE
    c, s = math.cos(angle), math.sin(angle)
    rotation = np.array([[c, s], [-s, c]])  # y points down: this turns counter-clockwise on screen

    def polygon(points: np.ndarray, scale: float) -> list[tuple[float, float]]:
        xy = (points * scale) @ rotation.T + np.asarray(centre)
        return [(float(x * k), float(y * k)) for x, y in xy]

    mask = Image.new("L", (size * k, size * k), 0)
    draw = ImageDraw.Draw(mask)
    draw.polygon(polygon(OUTLINES[name], radius), fill=255)
    if name == "ring":
        draw.polygon(polygon(OUTLINES["circle"], RING_HOLE * radius), fill=0)
    small = mask.resize((size, size), Image.BOX)
    return np.asarray(small, dtype=np.float32) / 255.0


def background(rng: np.random.Generator, size: int) -> np.ndarray:
    """One random background (gradient, noise or texture): (S, S, 3) float32 in 0..255."""
    kind = rng.integers(3)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / max(size - 1, 1)
    if kind == 0:  # gradient
        a, b = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
        theta = rng.uniform(0, 2 * math.pi)
        t = math.cos(theta) * xx + math.sin(theta) * yy
        t = (t - t.min()) / max(float(t.max() - t.min()), 1e-6)
        img = a + (b - a) * t[..., None]
    elif kind == 1:  # flat colour and noise
        sigma = rng.uniform(4, 12)
        img = rng.uniform(0, 255, 3) + rng.normal(0, sigma, (size, size, 3))
    else:  # texture: stripes and smooth blobs
        period, theta = rng.uniform(4, 16), rng.uniform(0, math.pi)
        phase = (math.cos(theta) * xx + math.sin(theta) * yy) * (size - 1)
        stripes = rng.uniform(6, 18) * np.sin(2 * math.pi * phase / period + rng.uniform(0, 2 * math.pi))
        coarse = Image.fromarray(rng.uniform(-15, 15, (4, 4)).astype(np.float32), mode="F")
        blobs = np.asarray(coarse.resize((size, size), Image.BILINEAR), dtype=np.float32)
        img = rng.uniform(40, 215, 3) + (stripes + blobs)[..., None]
    return np.clip(img, 0, 255).astype(np.float32)


def _luma(rgb: np.ndarray) -> np.ndarray:
    return (rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114) / 255.0


def shape_colour(rng: np.random.Generator, under: float) -> np.ndarray:
    """A random RGB colour whose luma differs from ``under`` (0..1) by at least ``MIN_LUMA_CONTRAST``."""
    for _ in range(100):
        colour = rng.uniform(0, 255, 3)
        if abs(float(_luma(colour)) - under) >= MIN_LUMA_CONTRAST:
            return colour
    return np.full(3, 0.0 if under > 0.5 else 255.0)


def _place(rng: np.random.Generator, box: tuple[float, float, float, float], radius: float) -> tuple[float, float]:
    """A centre uniform over the points of ``box`` (x0, y0, x1, y1) keeping the circle of ``radius`` inside it."""
    x0, y0, x1, y1 = box
    return (float(rng.uniform(x0 + radius, max(x0 + radius, x1 - radius))),
            float(rng.uniform(y0 + radius, max(y0 + radius, y1 - radius))))


def draw(rng: np.random.Generator, size: int, two: bool,
         style: str = "plain") -> tuple[Image.Image, list[int], list[np.ndarray]]:
    """One image of ``style``: (PIL RGB, labels, bool masks (S, S))."""
    if style == "varied":
        return draw_varied(rng, size, two)
    if style == "sketch":
        return draw_sketch(rng, size, two)
    img = background(rng, size)
    labels, boxes, (smallest, largest) = _layout(rng, size, two, MIN_FRACTION, MAX_FRACTION)
    masks = []
    for label, box in zip(labels, boxes):
        radius = rng.uniform(smallest, largest) / 2
        centre = _place(rng, box, radius)
        alpha = shape_alpha(CLASSES[label], size, centre, radius, rng.uniform(0, 2 * math.pi))
        inside = alpha >= 0.5
        colour = shape_colour(rng, float(_luma(img[inside]).mean()) if inside.any() else 0.5)
        img = alpha[..., None] * colour + (1 - alpha[..., None]) * img
        masks.append(inside)
    return Image.fromarray(np.clip(np.rint(img), 0, 255).astype(np.uint8), mode="RGB"), labels, masks


def _check_sample_args(n, size, style) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 16:
        raise ValueError(f"size must be an integer of at least 16 pixels, got {size!r}")
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, got {style!r}")


def sample(n: int, seed: int, size: int = 64, two: bool = False, style: str = "plain"):
    """``n`` drawings ``size`` px square: (PIL RGB images, labels, bool masks (S, S)), a pair of each with ``two``."""
    _check_sample_args(n, size, style)
    images, labels, masks = [], [], []
    for i in range(n):
        image, label, mask = draw(np.random.default_rng([seed, i]), size, two, style)
        images.append(image)
        labels.append(tuple(label) if two else label[0])
        masks.append(tuple(mask) if two else mask[0])
    return images, labels, masks


def sample_arrays(n: int, seed: int, size: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``sample`` as arrays for training: images (n, S, S, 3) uint8, labels (n,) int64, masks (n, S, S) bool."""
    images, labels, masks = sample(n, seed, size)
    out = np.empty((n, size, size, 3), dtype=np.uint8)
    for i, image in enumerate(images):
        out[i] = np.asarray(image)
    return out, np.asarray(labels, dtype=np.int64), np.stack(masks) if n else np.zeros((0, size, size), bool)


def _lobed_heart(rng: np.random.Generator) -> list[np.ndarray]:
    """A heart built of a square on its corner and two discs on its upper edges (tip down), r = 1."""
    d = 1.0
    square = np.array([(0, d), (d, 0), (0, -d), (-d, 0)], dtype=float)
    radius = d / math.sqrt(2) * rng.uniform(0.9, 1.1)
    t = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    disc = np.stack([np.cos(t), np.sin(t)], axis=1) * radius
    parts = [square, disc + (-d / 2, -d / 2), disc + (d / 2, -d / 2)]
    everything = np.concatenate(parts)
    mid = (everything.max(0) + everything.min(0)) / 2
    scale = np.abs(everything - mid).max()
    return [(p - mid) / scale for p in parts]


def varied_outline(name: str, rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray | None]:
    """One class with its proportions drawn at random: (polygons filled as a union, a hole or None), r = 1."""
    if name not in OUTLINES:
        raise ValueError(f"shape must be one of {', '.join(CLASSES)}, got {name!r}")
    if name == "star":
        return [_with_inner(rng.uniform(0.35, 0.58))], None
    if name == "cross":
        return [_bars(rng.uniform(0.24, 0.43))], None
    if name == "diamond":
        b = rng.uniform(0.42, 0.72)
        return [np.array([(0, -1), (b, 0), (0, 1), (-b, 0)], dtype=float)], None
    if name == "ring":
        return [OUTLINES["circle"]], OUTLINES["circle"] * rng.uniform(0.36, 0.68)
    if name == "heart":
        if rng.random() < 0.5:
            return _lobed_heart(rng), None
        pts = OUTLINES["heart"] * (rng.uniform(0.85, 1.15), 1.0)
        return [pts / np.abs(pts).max()], None
    return [OUTLINES[name]], None


def _densify(points: np.ndarray, n: int) -> np.ndarray:
    closed = np.concatenate([points, points[:1]])
    s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(closed, axis=0), axis=1))])
    t = np.linspace(0, s[-1], n, endpoint=False)
    return np.stack([np.interp(t, s, closed[:, 0]), np.interp(t, s, closed[:, 1])], axis=1)


def _wobble(points: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A hand's outline: the polygon resampled and its distance to the centre modulated by smooth noise."""
    p = _densify(points, 128)
    t = np.arange(len(p)) / len(p) * 2 * math.pi
    wobble = sum(rng.uniform(-0.025, 0.025) * np.sin(f * t + rng.uniform(0, 2 * math.pi)) for f in (2, 3, 4, 6, 9))
    return p * (1 + wobble)[:, None]


def _homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The 3 x 3 projective map taking 4 points ``src`` to ``dst`` (each (4, 2))."""
    rows, rhs = [], []
    for (x, y), (u, v) in zip(src, dst):
        rows += [[x, y, 1, 0, 0, 0, -u * x, -u * y], [0, 0, 0, x, y, 1, -v * x, -v * y]]
        rhs += [u, v]
    h = np.linalg.solve(np.asarray(rows, float), np.asarray(rhs, float))
    return np.append(h, 1.0).reshape(3, 3)


def _project(h: np.ndarray, xy: np.ndarray) -> np.ndarray:
    q = np.concatenate([xy, np.ones((len(xy), 1))], axis=1) @ h.T
    return q[:, :2] / q[:, 2:]


def varied_background(rng: np.random.Generator, size: int) -> np.ndarray:
    """One background of the varied style: (S, S, 3) float32 in 0..255."""
    kind = rng.integers(7)
    if kind < 3:
        return background(rng, size)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / max(size - 1, 1)
    if kind == 3:  # flat
        img = np.broadcast_to(rng.uniform(0, 255, 3), (size, size, 3))
    elif kind == 4:  # radial gradient
        a, b = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
        r = np.hypot(xx - rng.uniform(-0.2, 1.2), yy - rng.uniform(-0.2, 1.2))
        img = a + (b - a) * (r / max(float(r.max()), 1e-6))[..., None]
    elif kind == 5:  # smooth colour blobs
        k = int(rng.integers(2, 8))
        coarse = rng.uniform(0, 255, (k, k, 3)).astype(np.uint8)
        blobs = np.asarray(Image.fromarray(coarse).resize((size, size), Image.BICUBIC), dtype=np.float32)
        mix = rng.uniform(0.2, 0.8)
        img = mix * blobs + (1 - mix) * rng.uniform(0, 255, 3)
    else:  # paper: light, grainy, unevenly lit
        shade = 1 - rng.uniform(0, 0.25) * np.clip(1 - np.hypot(xx - rng.uniform(), yy - rng.uniform()), 0, 1)
        img = (rng.uniform(185, 250, 3) * shade[..., None] + rng.normal(0, rng.uniform(2, 8), (size, size, 1)))
    return np.clip(img, 0, 255).astype(np.float32)


def _clutter(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    """Thin lines and small dots over a background (none of them a class's shape)."""
    size = img.shape[0]
    pil = Image.fromarray(np.clip(np.rint(img), 0, 255).astype(np.uint8), mode="RGB")
    draw_ = ImageDraw.Draw(pil)
    for _ in range(int(rng.integers(1, 7))):
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        if rng.random() < 0.6:
            (x0, y0), (x1, y1) = rng.uniform(0, size, (2, 2))
            draw_.line([(x0, y0), (x1, y1)], fill=colour, width=max(1, int(rng.integers(1, 3) * size / 64)))
        else:
            x, y = rng.uniform(0, size, 2)
            r = rng.uniform(0.005, 0.025) * size
            draw_.ellipse([x - r, y - r, x + r, y + r], fill=colour)
    return np.asarray(pil, dtype=np.float32)


def _post(rng: np.random.Generator, image: Image.Image) -> Image.Image:
    """The camera's and the file's part: blur, noise, contrast and gamma, JPEG; each independently."""
    if rng.random() < 0.3:
        image = image.filter(ImageFilter.GaussianBlur(radius=rng.uniform(0.3, 1.3) * image.width / 64))
    x = np.asarray(image, dtype=np.float32)
    changed = False
    if rng.random() < 0.3:
        x = x + rng.normal(0, rng.uniform(2, 12), x.shape)
        changed = True
    if rng.random() < 0.3:
        x = (x - 128) * rng.uniform(0.6, 1.2) + 128 + rng.uniform(-30, 30)
        x = 255 * (np.clip(x, 0, 255) / 255) ** rng.uniform(0.7, 1.4)
        changed = True
    if changed:
        image = Image.fromarray(np.clip(np.rint(x), 0, 255).astype(np.uint8), mode="RGB")
    if rng.random() < 0.3:
        buf = io.BytesIO()
        image.save(buf, "JPEG", quality=int(rng.integers(20, 91)))
        image = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    return image


def _layout(rng: np.random.Generator, side: int, two: bool, smallest: float,
            largest: float) -> tuple[list[int], list[tuple[float, float, float, float]], tuple[float, float]]:
    """The classes, their boxes (the image, or two halves) and the diameter 2r's range in px (fractions of the side)."""
    if not two:
        return [int(rng.integers(len(CLASSES)))], [(0, 0, side, side)], (smallest * side, largest * side)
    labels = [int(x) for x in rng.choice(len(CLASSES), size=2, replace=False)]
    half = side / 2
    boxes = [(0, 0, half, side), (half, 0, side, side)] if rng.integers(2) else \
        [(0, 0, side, half), (0, half, side, side)]
    return labels, boxes, (smallest * side, min(largest * side, 0.9 * half))


def _shrunk(img: np.ndarray, masks: list[np.ndarray], size: int) -> tuple[Image.Image, list[np.ndarray]]:
    """A drawing made at a multiple of ``size`` and its masks, shrunk to ``size`` as the preprocessing does."""
    image = Image.fromarray(np.clip(np.rint(img), 0, 255).astype(np.uint8), mode="RGB")
    if image.width == size:
        return image, masks
    masks = [np.asarray(Image.fromarray(m.astype(np.uint8) * 255).resize((size, size), Image.BILINEAR)) >= 128
             for m in masks]
    return image.resize((size, size), Image.BILINEAR), masks


def draw_varied(rng: np.random.Generator, size: int, two: bool) -> tuple[Image.Image, list[int], list[np.ndarray]]:
    """One image in the varied style: (PIL RGB, labels, bool masks (S, S))."""
    up = int(rng.choice([1, 1, 1, 1, 2, 4]))  # drawn at up x S, then shrunk as the preprocessing does
    side, k = size * up, SUPERSAMPLE // up if up < SUPERSAMPLE else 1
    img = varied_background(rng, side)
    if rng.random() < 0.25:
        img = _clutter(rng, img)
    corners = np.array([(0, 0), (side, 0), (side, side), (0, side)], dtype=float)
    warp = _homography(corners, corners + rng.uniform(-0.07, 0.07, (4, 2)) * side)
    labels, boxes, (lo, hi) = _layout(rng, side, two, 0.18 if two else 0.12, 0.66)
    masks = []
    for label, box in zip(labels, boxes):
        radius = rng.uniform(lo, hi) / 2
        centre = _place(rng, box, radius)
        polygons, hole = varied_outline(CLASSES[label], rng)
        if rng.random() < 0.5:
            polygons = [_wobble(p, rng) for p in polygons]
            hole = None if hole is None else _wobble(hole, rng)
        angle = rng.uniform(0, 2 * math.pi)
        c, s = math.cos(angle), math.sin(angle)
        stretch = np.diag([1 + (e := rng.uniform(-0.1, 0.1)), 1 - e])
        turn = np.array([[c, s], [-s, c]]) @ stretch

        def canvas_xy(points: np.ndarray) -> list[tuple[float, float]]:
            xy = _project(warp, points @ turn.T * radius + np.asarray(centre))  # noqa: B023 - used at once
            return [(float(x * k), float(y * k)) for x, y in xy]

        fill = Image.new("L", (side * k, side * k), 0)
        stroke = Image.new("L", (side * k, side * k), 0)
        pen = ImageDraw.Draw(fill)
        outlines = [canvas_xy(p) for p in polygons] + ([canvas_xy(hole)] if hole is not None else [])
        stroked = rng.random() < 0.33
        if stroked:
            width = max(1, int(round(2 * rng.uniform(0.4, 2.5) * up * k)))  # half of it shows outside the fill
            ink_pen = ImageDraw.Draw(stroke)
            for xy in outlines:
                ink_pen.line(xy + xy[:1], fill=255, width=width, joint="curve")
        for xy in outlines[:len(polygons)]:
            pen.polygon(xy, fill=255)
        if hole is not None:
            pen.polygon(outlines[-1], fill=0)
        a_fill = np.asarray(fill.resize((side, side), Image.BOX), dtype=np.float32) / 255.0
        a_line = np.asarray(stroke.resize((side, side), Image.BOX), dtype=np.float32) / 255.0 if stroked else 0.0
        a_line = np.clip(a_line - a_fill, 0, 1) if stroked else np.zeros_like(a_fill)
        inside = (a_fill + a_line) >= 0.5
        under = float(_luma(img[inside]).mean()) if inside.any() else 0.5
        for _ in range(100):
            colour = rng.uniform(0, 255, 3)
            if abs(float(_luma(colour)) - under) >= rng.uniform(0.15, 0.35):
                break
        paint = np.broadcast_to(colour, img.shape)
        if rng.random() < 0.2:  # a gradient fill
            yy, xx = np.mgrid[0:side, 0:side].astype(np.float32) / side
            theta = rng.uniform(0, 2 * math.pi)
            t = (math.cos(theta) * xx + math.sin(theta) * yy)[..., None]
            paint = np.clip(colour + rng.uniform(-50, 50, 3) * (t - t.mean()) * 2, 0, 255)
        line_colour = colour * rng.uniform(0.2, 0.6) if rng.random() < 0.6 else rng.uniform(0, 255, 3)
        img = a_fill[..., None] * paint + a_line[..., None] * line_colour + (1 - a_fill - a_line)[..., None] * img
        masks.append(inside)
    image, masks = _shrunk(img, masks, size)
    return _post(rng, image), labels, masks


def _pen_path(outline: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """A closed outline as a hand traces it: from any point once round, past its start or short of it, with a
    gap now and then, each point a little off (a mouse's jitter). Pieces of (M, 2) points, r = 1."""
    p = _densify(outline, 120)
    p = np.roll(p, -int(rng.integers(len(p))), axis=0)
    p = np.concatenate([p, p[:1]])  # once round
    end = rng.random()
    if end < 0.45:  # overshoot: on past the start
        p = np.concatenate([p, p[1:1 + int(len(p) * rng.uniform(0.03, 0.2))]])
    elif end < 0.65:  # short of it
        p = p[: len(p) - int(len(p) * rng.uniform(0.02, 0.08))]
    p = p + rng.normal(0, rng.uniform(0.0, 0.015), p.shape)
    pieces = [p]
    for _ in range(int(rng.random() < 0.3) * int(rng.integers(1, 3))):  # gaps, 3-10 % of the way round
        longest = max(range(len(pieces)), key=lambda i: len(pieces[i]))
        q = pieces.pop(longest)
        gap = max(2, int(len(q) * rng.uniform(0.03, 0.1)))
        at = int(rng.integers(1, max(2, len(q) - gap - 1)))
        pieces += [piece for piece in (q[:at], q[at + gap:]) if len(piece) >= 2]
    return pieces


def _drawn_heart(rng: np.random.Generator) -> np.ndarray:
    """A heart as a hand draws one, r = 1 (y down): two round lobes of radius 1 centred at (+-a, 0), overlapping
    in a notch 0-0.35 deep, and a straight side from each to a tip h below their centres."""
    a, h = rng.uniform(0.3, 0.75), rng.uniform(1.3, 2.2)
    notch = math.atan2(math.sqrt(1 - a * a), -a)  # where the right lobe meets the left one, from its centre
    out = math.atan2(-h, -a) + math.acos(1 / math.hypot(a, h))  # where the right side leaves the right lobe
    t = np.linspace(out, notch, 48)
    right = np.stack([a + np.cos(t), np.sin(t)], axis=1)  # up from the side, over the top to the notch
    pts = np.concatenate([[(0.0, -h)], right, (right * (-1, 1))[::-1]])  # the tip, the right lobe, the left
    pts[:, 1] *= -1  # y down
    pts -= (pts.max(0) + pts.min(0)) / 2
    return pts / np.abs(pts).max()


def sketch_outlines(name: str, rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray | None]:
    """The outlines a pen traces for a class, r = 1, one closed curve each (a ring: two circles), and its hole."""
    if name == "heart":
        pts = (OUTLINES["heart"] if rng.random() < 0.5 else _drawn_heart(rng)) * (rng.uniform(0.85, 1.15), 1.0)
        return [pts / np.abs(pts).max()], None
    polygons, hole = varied_outline(name, rng)
    return polygons[:1] + ([hole] if hole is not None else []), hole


def draw_sketch(rng: np.random.Generator, size: int, two: bool) -> tuple[Image.Image, list[int], list[np.ndarray]]:
    """One image in the sketch style, shapes drawn with a pen: (PIL RGB, labels, masks)."""
    up = int(rng.choice([1, 2, 4, 4]))  # 4: the page's 256 px canvas, shrunk to the model's side
    side, k = size * up, SUPERSAMPLE // up if up < SUPERSAMPLE else 1
    if rng.random() < 0.4:  # a canvas or a sheet of paper
        img = np.full((side, side, 3), 255.0, np.float32) if rng.random() < 0.5 else varied_background(rng, side)
    else:
        img = varied_background(rng, side)
    if rng.random() < 0.2:
        img = _clutter(rng, img)
    labels, boxes, (lo, hi) = _layout(rng, side, two, 0.15, 0.8)
    masks = []
    for label, box in zip(labels, boxes):
        radius = rng.uniform(lo, hi) / 2
        centre = _place(rng, box, radius)
        traced, hole = sketch_outlines(CLASSES[label], rng)
        if rng.random() < 0.6:
            traced = [_wobble(p, rng) for p in traced]
        angle = rng.uniform(0, 2 * math.pi)
        c, s = math.cos(angle), math.sin(angle)
        turn = np.array([[c, s], [-s, c]]) @ np.diag([1 + (e := rng.uniform(-0.12, 0.12)), 1 - e])

        def canvas_xy(points: np.ndarray) -> list[tuple[float, float]]:
            xy = points @ turn.T * radius + np.asarray(centre)  # noqa: B023 - used at once
            return [(float(x * k), float(y * k)) for x, y in xy]

        fill = Image.new("L", (side * k, side * k), 0)
        ImageDraw.Draw(fill).polygon(canvas_xy(traced[0]), fill=255)
        if hole is not None:
            ImageDraw.Draw(fill).polygon(canvas_xy(traced[-1]), fill=0)
        a_fill = np.asarray(fill.resize((side, side), Image.BOX), dtype=np.float32) / 255.0
        ink = Image.new("L", (side * k, side * k), 0)
        pen = ImageDraw.Draw(ink)
        width = rng.uniform(1, 8) * size / 64 * up * k  # 1-8 px at 64 px
        for outline in traced:
            for piece in _pen_path(outline, rng):
                xy = canvas_xy(piece)
                pen.line(xy, fill=255, width=max(1, int(round(width))), joint="curve")
                for x, y in (xy[0], xy[-1]):  # round ends
                    pen.ellipse([x - width / 2, y - width / 2, x + width / 2, y + width / 2], fill=255)
        mode = rng.random()
        a_paint = np.zeros_like(a_fill)
        if mode < 0.2:  # hatched: parallel lines inside
            hatch = Image.new("L", (side * k, side * k), 0)
            lines = ImageDraw.Draw(hatch)
            step, theta = rng.uniform(2.5, 6) * size / 64 * up * k, rng.uniform(0, math.pi)
            u, n = np.array([math.cos(theta), math.sin(theta)]), np.array([-math.sin(theta), math.cos(theta)])
            middle, reach = np.array(centre) * k, 2 * radius * k
            for offset in np.arange(-reach, reach, step):
                a, b = middle + offset * n - reach * u, middle + offset * n + reach * u
                lines.line([tuple(a), tuple(b)], fill=255, width=max(1, int(round(width / 2))))
            a_paint = np.asarray(hatch.resize((side, side), Image.BOX), dtype=np.float32) / 255.0 * a_fill
        elif mode < 0.4:  # filled, then outlined
            a_paint = a_fill
        a_ink = np.asarray(ink.resize((side, side), Image.BOX), dtype=np.float32) / 255.0
        inside = a_fill >= 0.5
        under = float(_luma(img[inside | (a_ink >= 0.5)]).mean()) if (inside | (a_ink >= 0.5)).any() else 0.5
        colour = shape_colour(rng, under) if rng.random() < 0.7 else np.full(3, 0.0 if under > 0.5 else 255.0)
        paint = colour if mode < 0.2 else rng.uniform(0, 255, 3)
        img = a_paint[..., None] * paint + (1 - a_paint[..., None]) * img
        img = a_ink[..., None] * colour + (1 - a_ink[..., None]) * img
        masks.append(inside | (a_ink >= 0.5))
    image, masks = _shrunk(img, masks, size)
    return (_post(rng, image) if rng.random() < 0.5 else image), labels, masks


def training_set(n: int, seed: int, size: int = 64, two_share: float = 0.25, varied_share: float = 0.6,
                 start: int = 0, sketch_share: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The training data, images ``start`` to ``start + n - 1``: plain, varied and sketched, one or two shapes each.
    Image i's count and style come from ``default_rng([seed, i, 1])`` (``sketch_share`` 0 draws no more from it),
    its drawing from ``default_rng([seed, i])``, so the set can be drawn in pieces. Returns images (n, S, S, 3)
    uint8, labels (n, 2) int64 (the second -1 for one shape), masks (n, 2, S, S) bool."""
    _check_sample_args(n, size, "plain")
    images = np.empty((n, size, size, 3), dtype=np.uint8)
    labels = np.full((n, 2), -1, dtype=np.int64)
    masks = np.zeros((n, 2, size, size), dtype=bool)
    for row, i in enumerate(range(start, start + n)):
        pick = np.random.default_rng([seed, i, 1])
        two = bool(pick.random() < two_share)
        style = "varied" if pick.random() < varied_share else "plain"
        if sketch_share and pick.random() < sketch_share:
            style = "sketch"
        image, label, mask = draw(np.random.default_rng([seed, i]), size, two, style)
        images[row] = np.asarray(image)
        labels[row, :len(label)] = label
        masks[row, :len(mask)] = np.stack(mask)
    return images, labels, masks
