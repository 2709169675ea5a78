"""Drawn shapes: the data set of the ViT trained here, with the object's position known.

Pure PIL and numpy, seeded. Image ``i`` of ``sample(n, seed)`` depends only on
``(seed, i)`` (``numpy.random.default_rng([seed, i])``), so a prefix of a
sample is the smaller sample, and another seed is a fresh set.

The classes (``CLASSES``, in this order; the label is the index):

========  ==========================================================================
circle    a disc of radius r
square    a square whose corners lie on the circle of radius r (side r * sqrt 2)
triangle  an equilateral triangle, corners on the circle of radius r
star      a five-pointed star, outer points at r, inner corners at 0.45 r
cross     a plus sign: two bars 2r long and 0.7 r wide, crossing in the middle
ring      a disc of radius r with a hole of radius 0.55 r (the background shows through)
diamond   a rhombus with half-diagonals r and 0.55 r (a square on its corner would
          be a square: the rhombus is what tells them apart)
heart     the curve x = 16 sin^3 t, y = 13 cos t - 5 cos 2t - 2 cos 3t - cos 4t,
          scaled so its larger half-extent is r
========  ==========================================================================

No hexagon: at the smallest size a hexagon is 13 px across and differs from a
circle by less than one pixel.

Drawing rules, enough to draw the same distribution with PIL:

1. **Size and place.** The diameter 2r is uniform in [0.22, 0.45] x the image
   side S. The centre is uniform over the points that keep the whole circle of
   radius r inside the image; the rotation is uniform in [0, 360) degrees about
   the centre. Two-shape images (``two=True``) split the image into two halves
   (left/right or top/bottom, each with probability 1/2), cap 2r at 0.9 x the
   half's shorter side, and put one shape in each half with its circle inside
   that half, so the two never overlap (they may touch). The two classes are
   two different classes drawn uniformly.
2. **Background** (one of three, equally likely): a linear *gradient* between
   two random colours along a random direction; a flat random colour plus
   Gaussian *noise* (sigma 4 to 12 in 0..255); a *texture*: a random colour
   (each channel 40 to 215) modulated by a sinusoidal stripe pattern (period
   4 to 16 px, random direction and phase, amplitude 6 to 18) plus smooth
   blobs (a 4 x 4 grid uniform in -15..15, bilinearly upsampled). Clipped to 0..255.
3. **Colour.** The shape is one flat random RGB colour whose luma
   (0.299 R + 0.587 G + 0.114 B, in 0..1) differs from the mean luma of the
   background under the shape by at least 0.35 (drawn again until it does;
   black or white after 100 tries).
4. **Drawing.** Each shape is a polygon (the circle, ring and heart with 96
   points) filled at 4 x the image size on a mode-"L" mask (the ring's hole
   filled with 0 afterwards), reduced to S x S with ``Image.BOX``: an
   anti-aliased alpha a in [0, 1]. The pixel is ``a * colour + (1 - a) * background``.
   The mask returned is ``a >= 0.5``.
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

CLASSES: tuple[str, ...] = ("circle", "square", "triangle", "star", "cross", "ring", "diamond", "heart")

MIN_FRACTION, MAX_FRACTION = 0.22, 0.45  # the diameter 2r as a fraction of the image side
MIN_LUMA_CONTRAST = 0.35
SUPERSAMPLE = 4
_ROUND_POINTS = 96


# --------------------------------------------------------------------------- outlines (unit circle, unrotated)


def _regular(k: int, phase: float = math.pi / 2) -> np.ndarray:
    angles = phase + 2 * math.pi * np.arange(k) / k
    return np.stack([np.cos(angles), -np.sin(angles)], axis=1)  # y down, first corner on top


def _star() -> np.ndarray:
    outer, inner = _regular(5), 0.45 * _regular(5, math.pi / 2 + math.pi / 5)
    return np.stack([outer, inner], axis=1).reshape(-1, 2)


def _cross() -> np.ndarray:
    w = 0.35  # half the bar width, r = 1
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
    "star": _star(),
    "cross": _cross(),
    "ring": _regular(_ROUND_POINTS),
    "diamond": np.array([(0, -1), (0.55, 0), (0, 1), (-0.55, 0)], dtype=float),
    "heart": _heart(),
}
RING_HOLE = 0.55  # the ring's hole, as a fraction of r


# --------------------------------------------------------------------------- drawing


def shape_alpha(name: str, size: int, centre: tuple[float, float], radius: float, angle: float) -> np.ndarray:
    """The anti-aliased coverage of one shape: (S, S) float32 in [0, 1].

    Args:
        name: one of ``CLASSES``.
        size: S, the image side in pixels.
        centre: (x, y) in pixels.
        radius: r in pixels.
        angle: rotation in radians, counter-clockwise on screen.
    """
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


def draw(rng: np.random.Generator, size: int, two: bool) -> tuple[Image.Image, list[int], list[np.ndarray]]:
    """One image by the rules of the module docstring: (PIL RGB, labels, bool masks (S, S))."""
    img = background(rng, size)
    if two:
        labels = [int(x) for x in rng.choice(len(CLASSES), size=2, replace=False)]
        half = size / 2
        boxes = [(0, 0, half, size), (half, 0, size, size)] if rng.integers(2) else \
            [(0, 0, size, half), (0, half, size, size)]
        max_diameter = min(MAX_FRACTION * size, 0.9 * half)
    else:
        labels = [int(rng.integers(len(CLASSES)))]
        boxes = [(0, 0, size, size)]
        max_diameter = MAX_FRACTION * size
    masks = []
    for label, box in zip(labels, boxes):
        radius = rng.uniform(MIN_FRACTION * size, max_diameter) / 2
        centre = _place(rng, box, radius)
        alpha = shape_alpha(CLASSES[label], size, centre, radius, rng.uniform(0, 2 * math.pi))
        inside = alpha >= 0.5
        colour = shape_colour(rng, float(_luma(img[inside]).mean()) if inside.any() else 0.5)
        img = alpha[..., None] * colour + (1 - alpha[..., None]) * img
        masks.append(inside)
    return Image.fromarray(np.clip(np.rint(img), 0, 255).astype(np.uint8), mode="RGB"), labels, masks


def sample(n: int, seed: int, size: int = 64, two: bool = False):
    """Draw ``n`` images of shapes (see the module docstring for the rules).

    Args:
        n: how many images.
        seed: image i depends only on (seed, i).
        size: S, the side of the square images in pixels (at least 16).
        two: two different shapes per image instead of one.

    Returns:
        ``(images, labels, masks)``: PIL RGB images (S, S); class indices into ``CLASSES``
        (with ``two=True``, a pair per image); bool arrays (S, S), True on the shape
        (with ``two=True``, a pair aligned with the labels).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 16:
        raise ValueError(f"size must be an integer of at least 16 pixels, got {size!r}")
    images, labels, masks = [], [], []
    for i in range(n):
        image, label, mask = draw(np.random.default_rng([seed, i]), size, two)
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
