"""Issue 22: does the shapes model recognise anyone's drawing, not only its own generator's?

    python benchmarks/independent_shapes.py                  # 40 drawings a class per condition
    python benchmarks/independent_shapes.py --per-class 10 --json /tmp/independent.json

The drawings are made here with matplotlib's patches and paths, by rules of this file's own, and nothing of
``vit/shapes.py`` is called (a test checks it): shapes 15-60 % of the side at any position and rotation,
antialiased, on flat, gradient, noisy or textured backgrounds, some with a hand-drawn look (a jittered outline
stroked in a darker ink). Each drawing is rendered at 64 to 1024 px and read through the model's own
preprocessing, as it is, after JPEG compression, and after a blur. They are never used for training.
Beside them, as many drawings made as a mouse makes them on a white canvas (issue 40: sparse jittered points,
a round pen, closed or past the start), counted in ``by_style["mouse"]`` and not in ``accuracy``, which stays
round two's set.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch, Polygon
from matplotlib.path import Path as Outline
from PIL import Image, ImageFilter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import faithfulness  # benchmarks/, beside this file

import vit  # after the path is set

CLASSES = ("circle", "square", "triangle", "star", "cross", "ring", "diamond", "heart")  # the model's order
SIZES = (64, 128, 256, 512, 1024)
CONDITIONS = ("clean", "jpeg", "blur")
SEED = 31_337  # drawings of this file only; the model trained on vit.shapes' seed 0
POINTERS = {"attnlrp": "AttnLRP, A rather than B (the Why tab's default)", "grad_rollout": "gradient-weighted rollout",
            "rollout": "rollout (class-agnostic)"}
RIVALS = {"attnlrp": "auto"}  # the maps asked "why A rather than B?"; the others the plain question


@dataclass(frozen=True)
class Drawing:
    image: Image.Image
    label: int
    style: str  # "filled" or "hand"


# --------------------------------------------------------------------------- outlines, in units of the radius


def _regular(k: int, phase: float) -> np.ndarray:
    t = phase + 2 * np.pi * np.arange(k) / k
    return np.stack([np.cos(t), np.sin(t)], 1)


def _star(rng: np.random.Generator) -> np.ndarray:
    inner = rng.uniform(0.38, 0.5)
    t = np.pi / 2 + np.pi * np.arange(10) / 5
    r = np.where(np.arange(10) % 2 == 0, 1.0, inner)
    return np.stack([r * np.cos(t), r * np.sin(t)], 1)


def _plus(rng: np.random.Generator) -> np.ndarray:
    w = rng.uniform(0.28, 0.4)
    return np.array([(w, 1), (w, w), (1, w), (1, -w), (w, -w), (w, -1), (-w, -1), (-w, -w), (-1, -w), (-1, w),
                     (-w, w), (-w, 1)], dtype=float)


def _rhombus(rng: np.random.Generator) -> np.ndarray:
    b = rng.uniform(0.5, 0.65)
    return np.array([(1, 0), (0, b), (-1, 0), (0, -b)], dtype=float)


def _heart(rng: np.random.Generator) -> np.ndarray:
    """Two cubic Bézier lobes meeting at a point below, sampled at 120 points (not vit.shapes' curve)."""
    def bezier(p0, p1, p2, p3, n=60):
        t = np.linspace(0, 1, n)[:, None]
        return ((1 - t) ** 3) * p0 + 3 * ((1 - t) ** 2) * t * p1 + 3 * (1 - t) * t ** 2 * p2 + t ** 3 * p3
    lobe = rng.uniform(1.0, 1.25)
    tip, top = np.array([0.0, -1.0]), np.array([0.0, 0.45])
    left = bezier(tip, np.array([-1.3 * lobe, -0.15]), np.array([-0.9 * lobe, 1.05]), top)
    right = bezier(top, np.array([0.9 * lobe, 1.05]), np.array([1.3 * lobe, -0.15]), tip)
    pts = np.concatenate([left, right[1:]])
    return pts / np.abs(pts).max()


def _circle(n: int = 120) -> np.ndarray:
    return _regular(n, 0.0)


def outline(name: str, rng: np.random.Generator) -> tuple[np.ndarray, float | None]:
    """(vertices in units of the radius, hole radius for a ring or None)."""
    if name == "circle":
        return _circle(), None
    if name == "ring":
        return _circle(), rng.uniform(0.42, 0.62)
    if name == "square":
        return _regular(4, np.pi / 4), None
    if name == "triangle":
        return _regular(3, np.pi / 2), None
    if name == "star":
        return _star(rng), None
    if name == "cross":
        return _plus(rng), None
    if name == "diamond":
        return _rhombus(rng), None
    return _heart(rng), None


def _rotation(angle: float) -> np.ndarray:
    return np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])


def _densify(points: np.ndarray, n: int = 160) -> np.ndarray:
    closed = np.concatenate([points, points[:1]])
    seg = np.linalg.norm(np.diff(closed, axis=0), axis=1)
    s = np.concatenate([[0], np.cumsum(seg)])
    t = np.linspace(0, s[-1], n, endpoint=False)
    return np.stack([np.interp(t, s, closed[:, 0]), np.interp(t, s, closed[:, 1])], 1)


def _jitter(points: np.ndarray, rng: np.random.Generator, amount: float) -> np.ndarray:
    """A hand's wobble: smooth noise (a few random sines) added to a densified outline."""
    p = _densify(points)
    k = np.arange(len(p)) / len(p) * 2 * np.pi
    wobble = sum(rng.uniform(-amount, amount) * np.sin(f * k + rng.uniform(0, 2 * np.pi)) for f in (2, 3, 5, 7))
    centre = p.mean(0)
    return centre + (p - centre) * (1 + wobble)[:, None]


# --------------------------------------------------------------------------- backgrounds and colours


def _luma(rgb: np.ndarray) -> np.ndarray:
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


def background(rng: np.random.Generator, side: int) -> np.ndarray:
    """(side, side, 3) floats in [0, 1]: flat, linear or radial gradient, noisy, or a smooth texture."""
    kind = rng.integers(5)
    y, x = np.mgrid[0:1:complex(side), 0:1:complex(side)]
    a, b = rng.uniform(0, 1, 3), rng.uniform(0, 1, 3)
    if kind == 0:
        img = np.broadcast_to(a, (side, side, 3)).copy()
    elif kind == 1:
        t = (np.cos(rng.uniform(0, 2 * np.pi)) * x + np.sin(rng.uniform(0, 2 * np.pi)) * y)
        t = (t - t.min()) / max(t.max() - t.min(), 1e-9)
        img = a + (b - a) * t[..., None]
    elif kind == 2:
        r = np.hypot(x - rng.uniform(0, 1), y - rng.uniform(0, 1))
        img = a + (b - a) * (r / r.max())[..., None]
    elif kind == 3:
        img = np.broadcast_to(a, (side, side, 3)) + rng.normal(0, rng.uniform(0.02, 0.06), (side, side, 3))
    else:
        coarse = rng.uniform(-1, 1, (6, 6, 3))
        smooth = np.asarray(Image.fromarray(((coarse + 1) * 127.5).astype(np.uint8)).resize((side, side),
                                                                                              Image.BICUBIC))
        img = a * 0.6 + smooth / 255.0 * 0.4
    return np.clip(img, 0, 1)


def _under(bg: np.ndarray, centre) -> float:
    """The background's luma around a point (x, y) in [0, 1]² (imshow's row 0 is the top, y = 1)."""
    side = bg.shape[0]
    iy, ix = int((1 - centre[1]) * (side - 1)), int(centre[0] * (side - 1))
    return float(_luma(bg[max(iy - 2, 0):iy + 3, max(ix - 2, 0):ix + 3]).mean())


def ink(rng: np.random.Generator, under: float) -> np.ndarray:
    """A shape colour whose luma differs from the background's under it by at least 0.3."""
    for _ in range(200):
        c = rng.uniform(0, 1, 3)
        if abs(float(_luma(c)) - under) >= 0.3:
            return c
    return np.zeros(3) if under > 0.5 else np.ones(3)


# --------------------------------------------------------------------------- one drawing


def draw(rng: np.random.Generator, label: int, side: int) -> Drawing:
    """One drawing of class ``label``, ``side`` px square, by this file's rules."""
    name = CLASSES[label]
    extent = rng.uniform(0.15, 0.60)  # the shape's diameter, as a share of the side
    radius = extent / 2
    cx, cy = rng.uniform(radius, 1 - radius, 2)
    rot = _rotation(rng.uniform(0, 2 * np.pi))
    points, hole = outline(name, rng)
    style = "hand" if rng.uniform() < 0.3 else "filled"
    if style == "hand":
        points = _jitter(points, rng, 0.04)
    xy = points @ rot.T * radius + (cx, cy)
    bg = background(rng, side)
    colour = ink(rng, _under(bg, (cx, cy)))

    canvas, ax = _axes(side)
    ax.imshow(bg, extent=(0, 1, 0, 1), interpolation="bilinear", origin="upper")
    _fill(ax, xy, hole, (cx, cy), colour, style, side)
    return Drawing(_pixels(canvas), label, style)


def _axes(side: int, paper=None):
    """A ``side`` px figure whose axes span it, (0, 0) bottom left to (1, 1) top right, nothing drawn."""
    fig = Figure(figsize=(side / 100, side / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1), **({} if paper is None else {"facecolor": tuple(paper)}))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    if paper is not None:
        fig.set_facecolor(tuple(paper))
    return canvas, ax


def _pixels(canvas) -> Image.Image:
    canvas.draw()
    return Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3].copy())


def _fill(ax, xy: np.ndarray, hole: float | None, centre, colour: np.ndarray, style: str, side: int) -> None:
    """A filled outline (a hand-drawn one stroked in a darker ink); a ring with its hole cut out."""
    stroke = dict(edgecolor=tuple(colour * 0.45), linewidth=max(1.0, side / 90) * 72 / 100) if style == "hand" \
        else dict(edgecolor="none")
    if hole is None:
        ax.add_patch(Polygon(xy, closed=True, facecolor=tuple(colour), antialiased=True, **stroke))
    else:  # a ring: the outline with the hole cut out (a compound path), so the background shows through
        ax.add_patch(PathPatch(_ring(xy, hole, centre), facecolor=tuple(colour), antialiased=True, **stroke))


def _hole(xy: np.ndarray, hole: float, centre) -> np.ndarray:
    """A ring's inner outline: its outer one shrunk about the centre."""
    return (xy - centre) * hole + centre


def _ring(xy: np.ndarray, hole: float, centre) -> Outline:
    return Outline.make_compound_path(Outline(xy, closed=True), Outline(_hole(xy, hole, centre)[::-1], closed=True))


def draw_mouse(rng: np.random.Generator, label: int, side: int) -> Drawing:
    """One drawing of class ``label`` as a mouse makes it on a white canvas (issue 40): the outline traced once as
    a line through sparse, jittered points with a round pen, closed or past its start (a ring: two circles)."""
    name = CLASSES[label]
    radius = rng.uniform(0.2, 0.7) / 2
    cx, cy = rng.uniform(radius, 1 - radius, 2)
    rot = _rotation(rng.uniform(0, 2 * np.pi))
    points, hole = outline(name, rng)
    paper = _paper(rng)
    colour = _pen(rng, paper)
    canvas, ax = _axes(side, paper)
    _trace(ax, rng, _loops(points, hole), rot, radius, (cx, cy), colour, side)
    return Drawing(_pixels(canvas), label, "mouse")


def _paper(rng: np.random.Generator) -> np.ndarray:
    """The light canvas a mouse draws on: white, or nearly."""
    return np.ones(3) if rng.uniform() < 0.7 else rng.uniform(0.8, 1.0, 3)


def _pen(rng: np.random.Generator, paper: np.ndarray) -> np.ndarray:
    """A mouse's ink on that canvas: black, or a colour that stands out from it."""
    return np.zeros(3) if rng.uniform() < 0.6 else ink(rng, float(_luma(paper)))


def _loops(points: np.ndarray, hole: float | None) -> list[np.ndarray]:
    """The loops a pen traces for an outline: the outline, and a ring's hole."""
    return [points] + ([points * hole] if hole is not None else [])


def _trace(ax, rng: np.random.Generator, loops, rot: np.ndarray, radius: float, centre, colour, side: int) -> None:
    """Each loop traced once with a round pen, as a mouse reports it: sparse jittered points, closed or past the
    start."""
    width = rng.uniform(0.012, 0.06) * side * 72 / 100  # points
    for loop in loops:
        p = _densify(loop, int(rng.integers(24, 60)))  # a mouse reports a point every few pixels
        p = np.concatenate([p, p[: 1 + int(len(p) * rng.uniform(0, 0.15))]])  # closed, or on past the start
        p = p + rng.normal(0, rng.uniform(0.005, 0.03), p.shape)
        xy = p @ rot.T * radius + centre
        ax.plot(xy[:, 0], xy[:, 1], color=tuple(colour), linewidth=width, solid_capstyle="round",
                solid_joinstyle="round", antialiased=True)


def _mask(xy: np.ndarray, hole: float | None, centre, side: int) -> np.ndarray:
    """Where a shape lies, (side, side) bool, row 0 at the top: the pixel centres inside its outline (not in a
    ring's hole)."""
    t = (np.arange(side) + 0.5) / side
    x, y = np.meshgrid(t, 1 - t)
    pixels = np.stack([x.ravel(), y.ravel()], 1)

    def inside(outline: np.ndarray) -> np.ndarray:  # closed=True drops the last vertex: repeat the first
        return Outline(np.concatenate([outline, outline[:1]]), closed=True).contains_points(pixels)

    holed = np.zeros(len(pixels), bool) if hole is None else inside(_hole(xy, hole, centre))
    return (inside(xy) & ~holed).reshape(side, side)


@dataclass(frozen=True)
class Pair:
    image: Image.Image
    labels: tuple[int, int]
    masks: tuple[np.ndarray, np.ndarray]  # (side, side) bool: where each shape is
    style: str  # "filled" or "hand" on a background, or "mouse" on a light canvas


def draw_pair(rng: np.random.Generator, side: int) -> Pair:
    """Two shapes of different classes, apart, each 15-45 % of the side at any place and rotation: both filled
    or both hand-drawn on one background, or both traced with a mouse on a light canvas (issue 40)."""
    labels = tuple(int(k) for k in rng.choice(len(CLASSES), 2, replace=False))
    style = ("filled", "hand", "mouse")[int(rng.integers(3))]
    for _ in range(1000):  # two discs that do not touch
        radii = rng.uniform(0.15, 0.45, 2) / 2
        centres = [rng.uniform(r, 1 - r, 2) for r in radii]
        if np.hypot(*(centres[0] - centres[1])) > radii.sum() + 0.03:
            break
    if style == "mouse":
        paper = _paper(rng)
        canvas, ax = _axes(side, paper)
    else:
        bg = background(rng, side)
        canvas, ax = _axes(side)
        ax.imshow(bg, extent=(0, 1, 0, 1), interpolation="bilinear", origin="upper")
    masks = []
    for label, radius, centre in zip(labels, radii, centres):
        rot = _rotation(rng.uniform(0, 2 * np.pi))
        points, hole = outline(CLASSES[label], rng)
        if style == "mouse":
            _trace(ax, rng, _loops(points, hole), rot, radius, centre, _pen(rng, paper), side)
        else:
            drawn = _jitter(points, rng, 0.04) if style == "hand" else points
            _fill(ax, drawn @ rot.T * radius + centre, hole, centre, ink(rng, _under(bg, centre)), style, side)
        masks.append(_mask(points @ rot.T * radius + centre, hole, centre, side))
    return Pair(_pixels(canvas), labels, tuple(masks), style)


def corrupt(image: Image.Image, condition: str, rng: np.random.Generator) -> Image.Image:
    if condition == "jpeg":
        buf = io.BytesIO()
        image.save(buf, "JPEG", quality=int(rng.integers(25, 70)))
        return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    if condition == "blur":
        return image.filter(ImageFilter.GaussianBlur(radius=image.width * rng.uniform(0.004, 0.012)))
    return image


# --------------------------------------------------------------------------- the measurement


def evaluate(per_class: int = 40, seed: int = SEED, patch_size: int | None = None, weights: str = "trained",
             sizes: tuple[int, ...] = SIZES) -> dict:
    """Accuracy of the shapes model on these drawings, by (size, condition), by class, and by style."""
    loaded = vit.load_model("vit_tiny_shapes", weights=weights, patch_size=patch_size, device="cpu")
    assert tuple(loaded.class_names) == CLASSES, loaded.class_names
    rows, confusion = [], np.zeros((len(CLASSES), len(CLASSES)), dtype=int)
    by_style: dict[str, list[bool]] = {"filled": [], "hand": [], "mouse": []}
    for s, side in enumerate(sizes):
        for c, condition in enumerate(CONDITIONS):
            rng = np.random.default_rng([seed, s, c])
            drawings = [draw(rng, label, side) for label in range(len(CLASSES)) for _ in range(per_class)]
            x = torch.cat([loaded.preprocess.to_tensor(loaded.preprocess.view(corrupt(d.image, condition, rng)))
                           for d in drawings])  # (n, C, H, W)
            with torch.inference_mode():
                predicted = loaded.module(x).argmax(-1).tolist()
            right = [p == d.label for p, d in zip(predicted, drawings)]
            for p, d, ok in zip(predicted, drawings, right):
                confusion[d.label, p] += 1
                by_style[d.style].append(ok)
            rows.append({"size": side, "condition": condition, "n": len(right), "accuracy": float(np.mean(right))})
            # Mouse strokes (issue 40), from a stream of their own: the drawings above stay round two's.
            mouse_rng = np.random.default_rng([seed, s, c, 1])
            mice = [draw_mouse(mouse_rng, label, side) for label in range(len(CLASSES)) for _ in range(per_class)]
            x = torch.cat([loaded.preprocess.to_tensor(loaded.preprocess.view(corrupt(d.image, condition, mouse_rng)))
                           for d in mice])
            with torch.inference_mode():
                by_style["mouse"] += [p == d.label for p, d in zip(loaded.module(x).argmax(-1).tolist(), mice)]
    total = confusion.trace() / confusion.sum()
    return {"per_class": per_class, "seed": seed, "patch_size": loaded.config.patch_size, "accuracy": float(total),
            "rows": rows, "by_class": {CLASSES[i]: float(confusion[i, i] / confusion[i].sum()) for i in range(8)},
            "by_style": {k: float(np.mean(v)) for k, v in by_style.items() if v},  # accuracy: filled and hand only
            "confusion": confusion.tolist()}


def evaluate_pairs(n: int = 200, seed: int = SEED, patch_size: int | None = None, weights: str = "trained") -> dict:
    """On ``n`` two-shape drawings (64, 128 or 256 px): are both shapes the model's top two, and where do the
    explanation maps point when each class is asked about in turn? (The pointing game: is a map's brightest patch
    on the asked shape; a class-agnostic map, the same for both questions, can be right on at most one of them.)"""
    loaded = vit.load_model("vit_tiny_shapes", weights=weights, patch_size=patch_size, device="cpu")
    rows = cols = loaded.config.grid_size
    rng = np.random.default_rng([seed, 2])  # a stream of its own: the one-shape drawings stay as they were
    top_two: dict[str, list[bool]] = {"filled": [], "hand": [], "mouse": []}
    pointing: dict[str, list[bool]] = {method: [] for method in POINTERS}
    for _ in range(n):
        pair = draw_pair(rng, int(rng.choice((64, 128, 256))))
        inp = loaded.input(pair.image)
        with torch.inference_mode():
            ranked = loaded.module(inp.x)[0].argsort(descending=True).tolist()
        top_two[pair.style].append(set(ranked[:2]) == set(pair.labels))
        for label, mask in zip(pair.labels, pair.masks):
            coverage = faithfulness.patch_coverage(mask, mask.shape[0] // rows)  # (rows, cols)
            assert coverage.shape == (rows, cols), coverage.shape
            for method in POINTERS:
                e = vit.explain(loaded, inp, method, label, versus=RIVALS.get(method))
                pointing[method].append(faithfulness.pointing_hit(e.map, coverage))
    return {"n": n, "seed": seed, "top_two": float(np.mean(sum(top_two.values(), []))),
            "top_two_by_style": {k: float(np.mean(v)) for k, v in top_two.items() if v},
            "pointing": {k: float(np.mean(v)) for k, v in pointing.items()}}


def markdown(result: dict) -> str:
    head = "| size | " + " | ".join(CONDITIONS) + " |\n|---:|" + "---:|" * len(CONDITIONS)
    lines = [head]
    for side in sorted({r["size"] for r in result["rows"]}):
        cells = [next(r for r in result["rows"] if r["size"] == side and r["condition"] == c) for c in CONDITIONS]
        lines.append(f"| {side} px | " + " | ".join(f"{r['accuracy']:.1%}" for r in cells) + " |")
    classes = ", ".join(f"{k} {v:.0%}" for k, v in result["by_class"].items())
    styles = ", ".join(f"{k} {v:.1%}" for k, v in result["by_style"].items())
    n = sum(r["n"] for r in result["rows"])
    text = (f"Independent drawings ({n} images, seed {result['seed']}, P = {result['patch_size']}): "
            f"**{result['accuracy']:.1%}**\n\n" + "\n".join(lines) + f"\n\nBy class: {classes}. By style: {styles}.")
    if "two_shapes" in result:
        two = result["two_shapes"]
        styles = ", ".join(f"{k} {v:.1%}" for k, v in two["top_two_by_style"].items())
        pointing = ", ".join(f"{POINTERS[k]} {v:.1%}" for k, v in two["pointing"].items())
        text += (f"\n\nTwo-shape drawings ({two['n']}): both shapes the top two **{two['top_two']:.1%}** "
                 f"({styles}); the map's brightest patch on the shape asked about: {pointing}.")
    return text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--per-class", type=int, default=40, help="drawings per class for each size and condition")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--patch-size", type=int, default=None)
    p.add_argument("--weights", default="trained", help="'trained' (assets/) or a .pth written by train-shapes")
    p.add_argument("--pairs", type=int, default=200, help="two-shape drawings (top two, pointing game)")
    p.add_argument("--json", type=Path, default=None, help="also write the result here")
    p.add_argument("--save", type=Path, default=None, help="write a sheet of example drawings (PNG) here")
    p.add_argument("--record", action="store_true",
                   help="also write the result into assets/vit_tiny_shapes.json (its 'independent' entry)")
    args = p.parse_args(argv)
    if args.save:
        rng = np.random.default_rng(args.seed)
        sheet = Image.new("RGB", (8 * 132, 4 * 132), "white")
        for i in range(32):
            drawn = (draw_mouse if i >= 24 else draw)(rng, i % 8, 128)  # the last row: mouse strokes
            sheet.paste(drawn.image, (132 * (i % 8) + 2, 132 * (i // 8) + 2))
        sheet.save(args.save)
    result = evaluate(args.per_class, args.seed, args.patch_size, args.weights)
    if args.pairs:
        result["two_shapes"] = evaluate_pairs(args.pairs, args.seed, args.patch_size, args.weights)
    print(markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    if args.record:
        from vit.model.train import record  # noqa: PLC0415

        record("independent", {k: v for k, v in result.items() if k != "confusion"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
