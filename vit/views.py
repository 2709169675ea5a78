"""TEMPORARY shim (replaced by the views branch): the interface the app uses."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from . import render
from .errors import InputError

DISPLAY_SIZE = 640
TILE_SIZE = 150
STAGE_HEADERS = ["stage", "module", "notation", "shape", "parameters"]
WHAT_IS = {k: f"what is {k}" for k in ("rollout", "attention", "heads", "layers", "early_exit", "patches")}


@dataclass(frozen=True)
class View:
    image: Image.Image
    caption: str
    legend: str = ""
    title: str = ""
    scale: tuple[float, float] | None = None
    note: str = ""


def query_cell(query, grid):
    fx, fy = query
    rows, cols = grid
    return min(rows - 1, max(0, int(fy * rows))), min(cols - 1, max(0, int(fx * cols)))


def token_index(cell, grid):
    return 1 + cell[0] * grid[1] + cell[1]


def display_size(a, size=DISPLAY_SIZE):
    h, w = a.image.shape[:2]
    s = size / max(h, w)
    return round(w * s), round(h * s)


def picture_box(a, size=DISPLAY_SIZE):
    w, h = display_size(a, size)
    return 0, 0, w, h


def clicked_fraction(index, size):
    try:
        x, y = (float(v) for v in index)
    except (TypeError, ValueError):
        raise InputError(f"expected a click position (x, y) on the picture, got {index!r}") from None
    w, h = size
    return min(max(x / w, 0.0), 0.999999), min(max(y / h, 0.0), 0.999999)


def grid_view(a, query, size=DISPLAY_SIZE):
    r, c = query_cell(query, a.grid)
    return View(render.patch_grid(a.image, a.grid, size=size, mark=(r, c)), f"grid {a.grid}", title="Patch grid")


def query_view(a, query, layer, head, opacity, cmap, size=DISPLAY_SIZE):
    r, c = query_cell(query, a.grid)
    t = token_index((r, c), a.grid)
    heat = a.attention_map(layer, head - 1, t).numpy()
    return View(render.overlay(a.image, heat, opacity, cmap, size=size, mark=(r, c)),
                f"Patch (row {r}, col {c}) = token {t}, layer {layer}, head {head}", title="Query",
                scale=(float(heat.min()), float(heat.max())))


def rollout_view(a, layer, opacity, cmap, size=DISPLAY_SIZE):
    heat = a.rollout(layer).numpy()
    return View(render.overlay(a.image, heat, opacity, cmap, size=size), f"Rollout layers 1-{layer}",
                title="Rollout", scale=(float(heat.min()), float(heat.max())))


def heads_view(a, layer, opacity, cmap, size=DISPLAY_SIZE):
    titles = [f"head {i + 1}" for i in range(a.num_heads)]
    return View(render.small_multiples(a.image, a.head_maps(layer).numpy(), titles, alpha=opacity, cmap=cmap),
                f"Layer {layer} per head", title="Heads")


def layers_view(a, opacity, cmap, size=DISPLAY_SIZE):
    maps = np.stack([a.attention_map(n).numpy() for n in range(1, a.depth + 1)])
    titles = [f"layer {n}" for n in range(1, a.depth + 1)]
    return View(render.small_multiples(a.image, maps, titles, columns=6, alpha=opacity, cmap=cmap),
                "per layer", title="Layers")


def depth_view(a, size=None):
    lp = a.layer_predictions
    img = render.depth_plot([p.layer for p in lp], [p.prob for p in lp], [p.label for p in lp],
                            [p.final_class_prob for p in lp], a.topk[0].label)
    return View(img, "Early exit", title="Early exit")


def stage_rows(a):
    return [[s.name, s.module, s.notation, str(tuple(s.shape)), f"{s.params:,}"] for s in a.stages]


def top_k(a, k):
    return {p.label: p.prob for p in a.topk[:k]}


def fit_note(a):
    return ""


def captioned(view, width=None):
    return view.image
