"""Views of one analysis: each picture with its caption, legend and title (chapter 11.4's notation).

The app, the CLI (``python -m vit analyze --out``) and the benchmark draw through
these functions, so what a class sees in the browser, what a teacher saves and
what is timed are the same pictures. Pure and Gradio-free: an :class:`vit.Analysis`
in, a :class:`View` (PIL picture + markdown text) out; the drawing itself is
``vit.render``'s. ``layer`` and ``head`` are 1-based and validated by the caller.

Every heatmap carries a colour bar whose ends are the numbers in ``View.scale``,
and every caption names what was drawn (layer, head, token), so a picture can
always be read back to the numbers it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from PIL import Image

from vit.views import draw as render
from vit.errors import InputError
from vit.lesson import LESSON, LESSON_VIEWS, LessonStep, lesson_text  # noqa: F401 - the guided walk, re-exported
from vit.explanations.methods import METHODS

DISPLAY_SIZE = render.DISPLAY_SIZE  # px, main pictures: drawn at the size the page shows them
TILE_SIZE = 200  # px, one small-multiples tile: 4 per row make a sheet ~830 px wide
DEPTH_PLOT_SIZE = (800, 400)  # px (width, height) of the early-exit plot
HEAT_LABEL = "brighter = more attention"


@dataclass(frozen=True)
class View:
    """One picture and the words that make it readable."""

    image: Image.Image  # the picture, colour bar included where it is a heatmap
    caption: str  # markdown: what this picture is, in the chapter's notation
    legend: str = ""  # one line: what brightness means and how it is scaled
    title: str = ""  # short, for headers and download file names
    scale: tuple[float, float] | None = None  # numbers at the colour bar's (left, right) ends; None: no bar / per tile
    note: str = ""  # honesty about the input (crop, enlargement); "" if nothing to say


STAGE_HEADERS = ["stage", "module", "notation", "shape", "params"]
STAGE_NOTE = (
    "Layers count from 1, modules from 0: layer 1 is `encoder.layers.0`. Each parameter is counted once, in the "
    "first row whose module holds it: a layer's output row adds only what its attention and MLP rows did not "
    "count (its two LayerNorms), and \"(counted above)\" marks a module already counted; the column sums to the total."
)

WHAT_IS: dict[str, str] = {
    "patches": (
        "A transformer reads a sequence of tokens, not pixels. The H×W image is cut into P×P patches and each "
        "patch is mapped to a D-dimensional token by one shared linear map (a convolution with kernel = stride = P). "
        "The N = HW/P² patch tokens are read row by row, left to right, after a learned class token (token 0): "
        "N+1 tokens in all. A smaller P gives more, finer tokens, and attention's cost grows with (N+1)²."
    ),
    "attention": (
        "One row of softmax(QKᵀ/√d): the chosen patch's query is compared with every token's key, and the "
        "softmax turns the scores into weights that sum to 1. Bright patches are those whose values this patch "
        "mixes in most, at this layer and head. It shows where one patch looks at one depth, not what the model "
        "finally relies on."
    ),
    "rollout": (
        "Attention rollout (Abnar & Zuidema, 2020) follows attention back through the layers. Each layer's "
        "attention, heads fused and the residual path added (A + I, rows renormalised), says how much each token "
        "draws from every other; multiplying these from layer 1 up estimates how much of each patch reaches the "
        "class token, which makes the prediction. It is an estimate of information flow, not a proof of what mattered."
    ),
    "heads": (
        "Each layer has h attention heads working side by side, each with its own query, key and value "
        "projections. One tile per head shows where the class token looks in that head: heads are free to "
        "specialise, on the object, the background or neighbouring patches. Each tile is coloured from 0 to its "
        "own max, so compare where the tiles look, not how strongly."
    ),
    "layers": (
        "One tile per encoder layer: where the class token looks at that depth, heads fused. Early layers often "
        "look broadly or locally; later ones, after the tokens have exchanged information, often settle on what "
        "the decision rests on. Each tile is coloured from 0 to its own max."
    ),
    "early_exit": (
        "After every layer the class token is sent through the final LayerNorm and the classification head, as "
        "if the model stopped there (an early exit). Blue: the probability of the final answer at each depth; "
        "orange: whichever class would win there. The head was trained on the last layer only, so early readings "
        "are rough, but they show at what depth the answer forms."
    ),
    "explanation": (
        "An explanation map answers \"which patches made the model say this class?\". Rollout and the last "
        "layer's attention follow attention only, so they draw the same map whatever class you ask about. "
        "Gradient-weighted rollout (Chefer et al., 2021) weighs each layer's attention by how much it moves the "
        "chosen class's score, and Grad-CAM weighs the last layer's token features the same way: ask about "
        "another class and the map changes. A map is a claim, not a fact: test it."
    ),
    "curves": (
        "The test (deletion and insertion, Petsiuk et al., 2018): grey out the patches the map ranks first, "
        "10% at a time, and watch the class's probability. If the map is right it falls fast (deletion: lower "
        "area is better) and, starting from a grey image and putting those patches back first, it rises fast "
        "(insertion: higher area is better). The dashed lines do the same in a random order: a map worth "
        "believing beats them."
    ),
}


# --------------------------------------------------------------------------- patches and clicks


def query_cell(query: tuple[float, float], grid: tuple[int, int]) -> tuple[int, int]:
    """(row, col) of the patch under a point given as fractions (x, y) of the picture."""
    fx, fy = query
    rows, cols = grid
    return min(rows - 1, max(0, int(fy * rows))), min(cols - 1, max(0, int(fx * cols)))


def token_index(cell: tuple[int, int], grid: tuple[int, int]) -> int:
    """The token of patch (row, col): token 0 is the class token, patches follow row by row (row-major)."""
    r, c = cell
    return 1 + r * grid[1] + c


def display_size(a, size: int = DISPLAY_SIZE) -> tuple[int, int]:
    """(width, height) of the model's view as drawn, without margins or colour bar."""
    return render.fit_size(a.image.shape, size)


def picture_box(a, size: int = DISPLAY_SIZE) -> tuple[int, int, int, int]:
    """(x0, y0, w, h) of the image inside :func:`grid_view`'s picture (margins carry numbers on fine grids).

    Overlays draw the image at (0, 0) with the colour bar below, so their box is
    ``(0, 0, *display_size(a, size))``.
    """
    return render.grid_layout(a.grid, display_size(a, size)).box


def clicked_fraction(index, size: tuple[int, ...]) -> tuple[float, float]:
    """A click at pixel (x, y) as fractions (x, y) of the image it fell on.

    ``size`` is the image's (w, h) when it fills the picture, or its box (x0, y0, w, h)
    inside a larger one (:func:`picture_box`). A click on a margin or colour bar
    clamps to the nearest patch.
    """
    try:
        x, y = (float(v) for v in index)
        x0, y0, w, h = (0, 0, *size) if len(size) == 2 else size
    except (TypeError, ValueError):
        raise InputError(f"expected a click position (x, y) on the picture, got {index!r}") from None
    if not (np.isfinite(x) and np.isfinite(y)):
        raise InputError(f"expected a click position (x, y) on the picture, got {index!r}")
    return min(max((x - x0) / w, 0.0), 0.999999), min(max((y - y0) / h, 0.0), 0.999999)


# --------------------------------------------------------------------------- honest about the input

_CROP_NOTE_BELOW = 0.6  # a centre crop keeping less of the upload than this is worth a sentence (16:9 keeps 56%)
_ENLARGED_ABOVE = 2.0  # so is an upload enlarged more than this


def fit_note(a) -> str:
    """A sentence when the model sees much less of the upload than the student thinks, else "".

    Preprocessing resizes the shorter side and cuts the centre square (``vit.preprocess``),
    so a long strip loses its ends and a tiny image is blown up into blocks. The
    fraction is that of the centre square; torchvision's crop trims a further thin
    border from every image (224 of 256 px), which is not this upload's doing.
    """
    if a.source_size is None:
        return ""
    w, h = a.source_size
    short, long = min(w, h), max(w, h)
    side = a.input_size[0]
    notes = []
    if short / long < _CROP_NOTE_BELOW:
        notes.append(f"The model sees only the centre square of this {w}×{h} image, about {short / long:.0%} of it: "
                     f"the rest is cropped away.")
    factor = side / short
    if factor > _ENLARGED_ABOVE:
        times = f"{factor:.0f}" if factor >= 10 else f"{factor:.1f}".removesuffix(".0")
        notes.append(f"This {w}×{h} image was enlarged {times}× to {side}×{side}: "
                     f"the model sees blurred blocks, not detail.")
    return " ".join(notes)


# --------------------------------------------------------------------------- pictures of the model's view


def _number(x: float) -> str:
    """A colour-bar number: 0 as "0", else three significant digits ("0.0312")."""
    return "0" if x == 0 else f"{x:.3g}"


def _heat_view(a, heat: np.ndarray, opacity: float, cmap: str, size: int, mark=None, label: str = HEAT_LABEL):
    """(picture with colour bar, scale, legend) of a (rows, cols) map scaled min to max."""
    lo, hi = float(heat.min()), float(heat.max())
    picture = render.overlay(a.image, heat, opacity, cmap, size, mark=mark)
    image = render.with_colorbar(picture, cmap, _number(lo), _number(hi), label)
    legend = (f"{label}; colours scaled from this picture's min ({_number(lo)}) "
              f"to its max ({_number(hi)})")
    return image, (lo, hi), legend


def _class_token_share(heat: np.ndarray) -> str:
    """What a row gives the class token itself, which a map over the patches cannot show."""
    share = max(0.0, 1.0 - float(heat.sum()))  # rows of softmax and of rollout sum to 1 over N+1 tokens
    return f"; the remaining {share:.0%} goes to the class token itself (not drawn)" if share >= 0.005 else ""


def _every(k: int, what: str) -> str:
    """"every row", "every 2nd row", "every 3rd row", "every 4th row"."""
    if k == 1:
        return f"every {what}"
    suffix = {2: "nd", 3: "rd"}.get(k, "th")
    return f"every {k}{suffix} {what}"


def grid_view(a, query: tuple[float, float], size: int = DISPLAY_SIZE) -> View:
    """The patch grid, numbered in token order, with the query patch outlined."""
    rows, cols = a.grid
    cell = query_cell(query, a.grid)
    h, w = a.input_size
    layout = render.grid_layout(a.grid, display_size(a, size))
    if layout.in_cells:
        numbers = f"Numbers are token indices, row by row (row-major): patch (r, c) is token 1 + r·{cols} + c."
    else:
        numbers = (f"Left margin: the token of each row's first patch ({_every(layout.row_step, 'row')}); "
                   f"top: the column c ({_every(layout.col_step, 'column')}), so patch (r, c) is token "
                   f"(left number) + c = 1 + r·{cols} + c. The arrows show the reading order: row by row, "
                   f"left to right.")
    caption = (
        f"**What the model sees:** {h}×{w} pixels cut into a **{rows}×{cols} grid** of "
        f"{a.patch_size}×{a.patch_size} patches → **N = {a.num_patches} patch tokens**, plus the class token: "
        f"N+1 = {a.num_tokens}. {numbers} Outlined: patch (row {cell[0]}, col {cell[1]}) = token "
        f"{token_index(cell, a.grid)}. **Click a patch** to ask what it attends to."
    )
    image = render.patch_grid(a.image, a.grid, size, mark=cell)
    return View(image, caption, title=f"Patch grid, {rows}x{cols} patches of {a.patch_size} px", note=fit_note(a))


def query_view(a, query: tuple[float, float], layer: int, head: int, opacity: float, cmap: str,
               size: int = DISPLAY_SIZE) -> View:
    """Where one patch looks: its row of softmax(QKᵀ/√d) at one layer and head, over the patches."""
    cell = query_cell(query, a.grid)
    token = token_index(cell, a.grid)
    heat = a.attention_map(layer, head, token).numpy()  # (rows, cols)
    image, scale, legend = _heat_view(a, heat, opacity, cmap, size, mark=cell)
    caption = (
        f"**Patch (row {cell[0]}, col {cell[1]}) = token {token} as the query:** row {token} of softmax(QKᵀ/√d) "
        f"at layer {layer}, head {head} — where this patch looks (outlined){_class_token_share(heat)}."
    )
    title = f"Token {token} as query, layer {layer}, head {head}"
    return View(image, caption, legend, title, scale, fit_note(a))


def rollout_view(a, layer: int, opacity: float, cmap: str, size: int = DISPLAY_SIZE) -> View:
    """Attention rollout up to ``layer``: how much of each patch reaches the class token."""
    heat = a.rollout(layer).numpy()  # (rows, cols)
    image, scale, legend = _heat_view(a, heat, opacity, cmap, size)
    discard = f", weakest {a.discard_ratio:.0%} of each row's links dropped" if a.discard_ratio else ""
    caption = (
        f"**Attention rollout, layers 1–{layer}:** how much of each patch flows into the class token "
        f"through attention and the residual path: per layer rownorm(A + I), heads fused by "
        f"**{a.head_fusion}**{discard}, multiplied from layer 1 to {layer}{_class_token_share(heat)}."
    )
    return View(image, caption, legend, f"Attention rollout, layers 1-{layer}", scale, fit_note(a))


# --------------------------------------------------------------------------- small multiples


def _sheet(n: int, size: int) -> tuple[int, int]:
    """(columns, tile px) for n tiles: 4 a row up to 16 tiles, then 6 smaller ones; a few tiles drawn larger."""
    columns = n if n <= 4 else 4 if n <= 16 else 6
    return columns, min(round(size * 1.6), size * 4 // columns)


def _tiles_view(a, maps: np.ndarray, titles: list[str], opacity: float, cmap: str, size: int):
    """(sheet with its shared colour bar, legend): each tile coloured from 0 to its own max."""
    columns, tile = _sheet(len(maps), size)
    sheet = render.small_multiples(a.image, maps, titles, columns, tile, opacity, cmap, from_zero=True)
    image = render.with_colorbar(sheet, cmap, "0", "each tile's max", HEAT_LABEL)
    legend = f"{HEAT_LABEL}; each tile coloured from 0 to its own max (compare where tiles look, not how strongly)"
    return image, legend


def heads_view(a, layer: int, opacity: float, cmap: str, size: int = TILE_SIZE) -> View:
    """Layer ``layer``, one tile per head: the class token's attention in each (``size``: tile px)."""
    titles = [f"head {i + 1}" for i in range(a.num_heads)]
    image, legend = _tiles_view(a, a.head_maps(layer).numpy(), titles, opacity, cmap, size)  # (h, rows, cols)
    caption = (
        f"**Layer {layer}, one picture per head:** the class token's row of softmax(QKᵀ/√d) in each of "
        f"the h = {a.num_heads} heads; each head is free to look somewhere else."
    )
    return View(image, caption, legend, f"Heads of layer {layer}")


def layers_view(a, opacity: float, cmap: str, size: int = TILE_SIZE) -> View:
    """One tile per layer: the class token's head-fused attention, layer 1 to L (``size``: tile px)."""
    maps = np.stack([a.attention_map(n).numpy() for n in range(1, a.depth + 1)])  # (L, rows, cols)
    titles = [f"layer {n}" for n in range(1, a.depth + 1)]
    image, legend = _tiles_view(a, maps, titles, opacity, cmap, size)
    caption = (
        f"**The class token in every layer** (heads fused by {a.head_fusion}), layer 1 to L = {a.depth}: "
        f"how its attention moves as the tokens exchange information."
    )
    return View(image, caption, legend, f"Class token attention, layers 1-{a.depth}")


def depth_view(a, size: tuple[int, int] = DEPTH_PLOT_SIZE) -> View:
    """The early-exit plot: how the prediction forms across depth."""
    lp = a.layer_predictions
    final = a.topk[0].label
    image = render.depth_plot([p.layer for p in lp], [p.prob for p in lp], [p.label for p in lp],
                              [p.final_class_prob for p in lp], final, size)
    caption = (
        f"**How the prediction forms across depth:** after each layer 1 to L = {a.depth}, the class token "
        f"goes through the final norm and the head (an early exit). Blue: the probability of the final "
        f"answer, **{final}**; orange: the top-1 class at that layer, named where it changes."
    )
    legend = "blue circles: probability of the final class after each layer; orange squares: the top-1 at that layer"
    return View(image, caption, legend, f"Early exit, layers 1-{a.depth}")


# --------------------------------------------------------------------------- tables


def stage_rows(a) -> list[list[str]]:
    """The stage table under :data:`STAGE_HEADERS`, with a total; middle layers fold into one row when L > 3.

    Parameters follow :func:`vit.analysis.trace.counted_params`, so the column sums to the
    model's parameter count (see :data:`STAGE_NOTE`).
    """
    from vit.analysis.trace import counted_params  # noqa: PLC0415 - torch is loaded already: the analysis holds tensors

    counted = counted_params(a.stages)
    layers = sorted({s.layer for s in a.stages if s.layer is not None})
    middle = layers[1:-1] if len(layers) > 3 else []

    def params(own: int, new: int) -> str:
        return f"{new:,}" if new else "(counted above)" if own else "–"

    rows = []
    for s, new in zip(a.stages, counted):
        if s.layer not in middle:
            rows.append([s.name, s.module, s.notation, str(tuple(s.shape)), params(s.params, new)])
        elif s.layer == middle[0] and s.name.endswith("output"):  # one row for the folded blocks
            total = sum(n for t, n in zip(a.stages, counted) if t.layer in middle)
            rows.append([f"layers {middle[0]}–{middle[-1]} (same shapes, ×{len(middle)})",
                         f"encoder.layers.{middle[0] - 1}–{middle[-1] - 1}", s.notation, str(tuple(s.shape)),
                         f"{total:,}"])
    rows.append(["total", "", "", "", f"{a.params:,}"])
    return rows


def top_k(a, k: int) -> dict[str, float]:
    """{label: probability} of the k most probable classes (a repeated class name gets its index)."""
    if k <= len(a.topk):
        pairs = [(p.index, p.label, p.prob) for p in a.topk[:k]]
    else:
        from vit.model.families import class_names  # noqa: PLC0415 - torchvision's names, read only when asked

        names = class_names(a.model)
        probs = a.probs.numpy()
        order = np.argsort(-probs, kind="stable")[:k]
        pairs = [(int(i), names[int(i)], float(probs[i])) for i in order]
    out: dict[str, float] = {}
    for index, label, prob in pairs:  # ImageNet names "crane" and "maillot" twice
        out[label if label not in out else f"{label} ({index})"] = prob
    return out


# --------------------------------------------------------------------------- to keep


def plain(markdown: str) -> str:
    """Caption text without markdown's ** and ` (for text drawn into a picture)."""
    return re.sub(r"\*\*|`", "", markdown)


def captioned(view: View, width: int | None = None) -> Image.Image:
    """The view as one picture to download: title above, caption, legend and note below (>= 18 px text)."""
    paragraphs = [plain(view.caption), plain(view.legend), plain(view.note)]
    return render.captioned(view.image, view.title, paragraphs, width)


# --------------------------------------------------------------------------- inside the encoder (11.4.3-11.4.6)

BLOCK_SERIES = ("‖X‖ stream in", "‖MSA(LN(X))‖ attention", "‖MLP(LN(H))‖ MLP", "‖Y‖ block out")


def block_view(a, layer: int | None = None, size: tuple[int, int] = DEPTH_PLOT_SIZE) -> View:
    """Inside a block: H = X + MSA(LN(X)), Y = H + MLP(LN(H)) in this image's numbers.

    On top, the chosen layer's block as the chapter draws it, its norms on the arrows; under it,
    the same four norms for every layer.
    """
    res = a.residual()
    values = np.array([[r.stream, r.attention, r.mlp, r.output] for r in res])  # (L, 4)
    chart = render.grouped_bars(values, BLOCK_SERIES, [str(r.layer) for r in res], "layer",
                                "mean ‖·‖₂ over the N+1 tokens", size)
    r = res[(a.depth if layer is None else min(max(layer, 1), a.depth)) - 1]
    diagram = render.block_diagram(f"‖X‖ = {r.stream:.1f}", f"adds ‖·‖ = {r.attention:.1f}",
                                   f"adds ‖·‖ = {r.mlp:.1f}", f"‖Y‖ = {r.output:.1f}",
                                   f"Layer {r.layer} (encoder.layers.{r.layer - 1}), means over the N+1 tokens",
                                   chart.width)
    image = render.stack(diagram, chart)
    last = res[-1]
    caption = (
        f"**Inside a block:** each pre-norm block computes **H = X + MSA(LN(X))** and **Y = H + MLP(LN(H))**: "
        f"attention and the MLP each *add* to the residual stream X. Bars: the mean over the "
        f"N+1 = {a.num_tokens} tokens of each vector's length, per layer 1 to L = {a.depth}. "
        f"Layer {last.layer}: ‖X‖ {last.stream:.1f} → attention adds {last.attention:.1f}, "
        f"MLP adds {last.mlp:.1f} → ‖Y‖ {last.output:.1f}. The branches are added as vectors, so ‖Y‖ is "
        f"at most, not equal to, the sum of the three."
    )
    legend = "bars per layer: " + ", ".join(BLOCK_SERIES)
    return View(image, caption, legend, f"Inside a block, layers 1-{a.depth}")


LENS_CLASSES = len(render.PALETTE)  # the most frequent classes get a colour; the rest are grey


def lens_classes(indices: np.ndarray, k: int = LENS_CLASSES) -> list[tuple[int, int]]:
    """(class index, patch count) of the ``k`` most frequent classes, most frequent first (ties: lower index)."""
    values, counts = np.unique(np.asarray(indices).ravel(), return_counts=True)
    order = sorted(zip(values.tolist(), counts.tolist()), key=lambda vc: (-vc[1], vc[0]))
    return order[:k]


def lens_colours(indices: np.ndarray, classes: list[int]) -> np.ndarray:
    """(rows, cols) class indices -> (rows, cols, 3) uint8: the palette's colour of each legend class, else grey."""
    indices = np.asarray(indices)
    out = np.empty((*indices.shape, 3), dtype=np.uint8)
    out[:] = render.OTHER
    for colour, c in zip(render.PALETTE, classes):
        out[indices == c] = colour
    return out


def lens_view(a, layer: int, size: int = DISPLAY_SIZE, opacity: float = 0.7) -> View:
    """Token content: the final norm and head applied to every patch token at ``layer``, top-1 class per patch."""
    from vit.model.families import class_names  # noqa: PLC0415 - torchvision's names, read only when drawn

    names = class_names(a.model)
    indices, probs = (t.numpy() for t in a.patch_lens(layer))
    top = lens_classes(indices)
    classes = [c for c, _ in top]
    picture = render.category_overlay(a.image, lens_colours(indices, classes), opacity, size)
    entries = [(colour, f"{names[c]} ({n})") for colour, (c, n) in zip(render.PALETTE, top)]
    others = int(indices.size - sum(n for _, n in top))
    if others:
        entries.append((render.OTHER, f"other classes ({others})"))
    image = render.stack(picture, render.swatch_legend(picture.width, entries))
    final = a.topk[0]
    agree = int((indices == final.index).sum())
    caption = (
        f"**Token content at layer {layer}:** the final LayerNorm and the classification head — the same "
        f"ones that read the class token at the end — applied to **every patch token** Y_{layer},i, as if each "
        f"patch were the class token (an early exit per patch). Each patch is coloured by its top-1 class "
        f"(mean probability {float(probs.mean()):.2f}). **{agree} of {indices.size} patches** agree with the "
        f"final answer, {final.label}. The head was trained on the class token of the last layer only, so "
        f"this reads what each patch token carries, roughly."
    )
    legend = "colour = a patch token's top-1 class; the legend counts patches per class; grey: other classes"
    return View(image, caption, legend, f"Token content, layer {layer}", note=fit_note(a))


def token_norm_view(a, layer: int, opacity: float, cmap: str, size: int = DISPLAY_SIZE) -> View:
    """‖Y_l,i‖ of every patch token after block ``layer``, as a heatmap; the class token's in the caption."""
    norms = a.token_norms[layer - 1].numpy()  # (N+1,)
    heat = norms[1:].reshape(a.grid)  # (rows, cols): patches in row-major order
    lo, hi = float(heat.min()), float(heat.max())
    label = "brighter = longer token vector"
    image = render.with_colorbar(render.overlay(a.image, heat, opacity, cmap, size), cmap, _number(lo),
                                 _number(hi), label)
    median = float(np.median(heat))
    caption = (
        f"**Token norms after layer {layer}:** the length ‖Y_{layer},i‖₂ of each patch token's "
        f"D = {a.queries[0].shape[-1]} numbers, from {lo:.1f} to {hi:.1f} (median {median:.1f}); the class "
        f"token's is {float(norms[0]):.1f}. On large trained models a few patch tokens, often in plain "
        f"background, grow far longer than the rest: the \"artifact\" tokens of Darcet et al. 2024 "
        f"(\"Vision Transformers Need Registers\"), which the model uses as scratch space for global information."
    )
    legend = f"{label}; colours scaled from this picture's min ({_number(lo)}) to its max ({_number(hi)})"
    return View(image, caption, legend, f"Token norms, layer {layer}", (lo, hi), fit_note(a))


MATRIX_CMAP = "magma"


def matrix_factor(tokens: int, panel: int) -> int:
    """Patch tokens per displayed row/column so that a matrix of ``tokens`` fits ``panel`` px at >= 1 px each."""
    return max(1, -(-(tokens - 1) // panel))


def matrix_view(a, layer: int, head: int, size: int = DISPLAY_SIZE) -> View:
    """One head's whole (N+1)x(N+1) attention matrix beside the same under a causal mask (11.4.2)."""
    from vit.analysis import rollout as ex  # noqa: PLC0415

    full = a.attention_matrix(layer, head)  # (N+1, N+1)
    masked = ex.causal(full)
    panel = (size - 12) // 2
    factor = matrix_factor(a.num_tokens, panel)
    shown = [ex.downsample_matrix(m, factor).numpy() for m in (full, masked)]
    lo, hi = float(min(m.min() for m in shown)), float(max(m.max() for m in shown))
    pictures = []
    for m in shown:
        p = render.heat_image(m, (panel, panel), MATRIX_CMAP, (lo, hi))
        render.outline_row(p, m.shape[0])
        pictures.append(p)
    sheet = render.panels(pictures, ["encoder: every token sees all", "causal mask: only earlier tokens"])
    label = "brighter = more attention (row = query, column = key)"
    image = render.with_colorbar(sheet, MATRIX_CMAP, _number(lo), _number(hi), label)
    T = a.num_tokens
    shrink = (f" Drawn at {shown[0].shape[0]}×{shown[0].shape[0]}: each cell is the **block max** of "
              f"{factor}×{factor} patch tokens (the class token keeps its own row and column)."
              if factor > 1 else "")
    caption = (
        f"**The whole matrix, layer {layer}, head {head}:** softmax(QKᵀ/√d) over all N+1 = {T} tokens, "
        f"{T}×{T}; row i is where token i looks, row 0 (outlined) the class token. Left, the encoder's: "
        f"bidirectional, every patch sees every other (11.4.2). Right, the same scores under a decoder's causal "
        f"mask (upper triangle removed, rows renormalised): a patch could no longer see the patches to its "
        f"right and below, and the class token, first in line, would see only itself.{shrink}"
    )
    legend = f"{label}; both halves coloured from {_number(lo)} to {_number(hi)}"
    return View(image, caption, legend, f"Attention matrix, layer {layer}, head {head}", (lo, hi))


# --------------------------------------------------------------------------- the weights themselves (ViT Fig. 7)

FILTER_COLUMNS = 7  # 28 filters in 4 rows of 7, as in the paper


def filter_tiles(filters) -> list[np.ndarray]:
    """(k, 3, P, P) filters -> k (P, P, 3) uint8 RGB tiles, each min-max normalised to its own range."""
    arr = np.asarray(filters, dtype=np.float64).transpose(0, 2, 3, 1)  # (k, P, P, 3)
    return [(render.normalize(t) * 255).round().astype(np.uint8) for t in arr]


def filters_view(filters, size: int = DISPLAY_SIZE) -> View:
    """ViT Fig. 7 left: the principal components of the patch embedding's kernels (``vit.patch_filters(loaded)``)."""
    tiles = filter_tiles(filters)
    k, _, P, _ = tuple(filters.shape)
    columns = min(FILTER_COLUMNS, k)
    tile = max(8, (size - 4) // columns - 4)
    image = render.tile_sheet(tiles, columns, tile)
    caption = (
        f"**What the patch embedding looks for:** the first {k} principal components of the D kernels "
        f"({P}×{P}×3) of the patch embedding, the linear map each patch is projected with (ViT paper, Fig. 7 "
        f"left). Strongest first, row by row. Each tile is stretched to its own range (min black, max white, "
        f"per channel together), so compare patterns, not brightness. Trained models show smooth stripes and blobs "
        f"like a CNN's first layer; random weights show noise."
    )
    return View(image, caption, "each tile normalised to its own min and max", f"Patch-embedding filters, {k}")


POSITION_TILES = 14  # at most this many positions a side; larger grids show every k-th position


def position_step(grid: tuple[int, int]) -> int:
    """Every k-th row and column of positions shown, so that at most 14 a side are drawn."""
    return max(1, -(-max(grid) // POSITION_TILES))


def position_view(similarity, grid: tuple[int, int], size: int = DISPLAY_SIZE, cmap: str = "viridis") -> View:
    """ViT Fig. 7 centre: per patch position, its position embedding's cosine similarity to every other.

    ``similarity``: (N, N) from ``vit.position_similarity(loaded)``; ``grid``: (rows, cols).
    """
    sim = np.asarray(similarity, dtype=np.float64)
    rows, cols = grid
    step = position_step(grid)
    picks = [(r, c) for r in range(0, rows, step) for c in range(0, cols, step)]
    shown = np.stack([sim[r * cols + c].reshape(rows, cols) for r, c in picks])  # (n, rows, cols)
    lo, hi = float(shown.min()), float(shown.max())
    columns = len(range(0, cols, step))
    tile = max(4, (size - 2) // columns - 2)
    tiles = [render.heat_rgb(m, (tile, tile), cmap, (lo, hi)) for m in shown]
    sheet = render.tile_sheet(tiles, columns, tile, gap=2)
    label = "cosine similarity"
    image = render.with_colorbar(sheet, cmap, _number(lo), _number(hi), label)
    every = "" if step == 1 else (f" Only {_every(step, 'row and column')} of positions is drawn "
                                  f"({len(range(0, rows, step))}×{columns} of {rows}×{cols}).")
    caption = (
        f"**What the position embeddings learned:** tile (r, c) shows how similar position (r, c)'s embedding "
        f"is to every other position's (cosine similarity), one {rows}×{cols} map per patch position, laid out "
        f"as the patches are (ViT paper, Fig. 7 centre).{every} A trained model's tiles light up their own row "
        f"and column: it has learned the 2-D grid from 1-D positions."
    )
    legend = f"brighter = more similar; all tiles coloured from {_number(lo)} to {_number(hi)}"
    return View(image, caption, legend, f"Position embedding similarity, {rows}x{cols}", (lo, hi))


def distance_points(a) -> tuple[list[int], list[float]]:
    """(layer, pixels) of every head's mean attention distance: L·h points."""
    d = a.mean_attention_distance().numpy()  # (L, h)
    return [l + 1 for l in range(d.shape[0]) for _ in range(d.shape[1])], d.ravel().tolist()


def distance_view(a, size: tuple[int, int] = DEPTH_PLOT_SIZE) -> View:
    """ViT Fig. 7 right: each head's mean attention distance against depth."""
    xs, ys = distance_points(a)
    h, w = a.input_size
    y_max = max(float(np.hypot(h, w)) / 2, max(ys, default=0.0))
    image = render.dot_plot(xs, ys, list(range(1, a.depth + 1)), "layer (one dot per head)",
                            "mean attention distance (px)", y_max, size)
    d = a.mean_attention_distance()
    caption = (
        f"**How far each head looks:** for each of the h = {a.num_heads} heads of each layer 1 to L = {a.depth}, "
        f"the mean distance in pixels between a query patch and the patches it attends to, weighted by attention "
        f"(ViT paper, Fig. 7 right; like a CNN's receptive field). Layer 1 ranges {float(d[0].min()):.0f}–"
        f"{float(d[0].max()):.0f} px, layer {a.depth} {float(d[-1].min()):.0f}–{float(d[-1].max()):.0f} px. "
        f"In trained models some early heads already look far, others stay local, and deeper heads all look far."
    )
    return View(image, caption, "one dot per head per layer", f"Mean attention distance, layers 1-{a.depth}")


# --------------------------------------------------------------------------- why this class?


def explanation_view(e, opacity: float, cmap: str, size: int = DISPLAY_SIZE) -> View:
    """An :class:`~vit.explanations.maps.Explanation`'s map over the image, with its colour bar."""
    method = METHODS[e.method]
    heat = e.map.numpy()  # (rows, cols)
    image, scale, legend = _heat_view(e, heat, opacity, cmap, size, label="brighter = more relevant to this class")
    same = ("" if method.class_specific else
            " This method does not depend on the class: every class gets this same map.")
    caption = (f"**{method.title} for “{e.label}” ({e.prob:.1%}):** the {e.grid[0]}×{e.grid[1]} patches, "
               f"brighter where the method puts more of the reason ({method.paper}).{same}")
    return View(image, caption, legend, f"{method.title}, {e.label}", scale)


CURVE_COLOURS = {"deletion": render.BLUE, "insertion": render.ORANGE}


def auc_text(value: float) -> str:
    """An area under a curve with three significant digits: 0.412, and 0.00213 for a class the model barely sees."""
    return f"{value:.3g}"


def curves_view(e, curves: dict, size: tuple[int, int] = DEPTH_PLOT_SIZE) -> View:
    """Deletion and insertion curves of an explanation, beside the same in a random order.

    Args:
        e: the :class:`~vit.explanations.maps.Explanation` tested.
        curves: ``{(mode, order): Curve}`` from :func:`vit.explanations.perturb.perturbation_curves`.
    """
    title = METHODS[e.method].title
    series = []
    for (mode, order), c in sorted(curves.items(), key=lambda kv: (kv[0][0], kv[0][1] != "saliency")):
        name = f"{mode}, {'map order' if order == 'saliency' else 'random order'} (AUC {auc_text(c.auc)})"
        series.append(render.Series(name, c.fractions, c.probs, CURVE_COLOURS[mode], dashed=order == "random"))
    top = max(max(c.probs) for c in curves.values())
    image = render.line_plot(series, "patches perturbed (most relevant first)", f"p({e.label})", top, size)
    verdicts = []
    for mode in ("deletion", "insertion"):
        ours, rand = curves.get((mode, "saliency")), curves.get((mode, "random"))
        if ours is None or rand is None:
            continue
        beats = ours.auc < rand.auc if mode == "deletion" else ours.auc > rand.auc
        verdicts.append(f"{mode} AUC {auc_text(ours.auc)} against {auc_text(rand.auc)} for random ({ours.better}: "
                        f"{'better than' if beats else 'no better than'} random)")
    base = next(iter(curves.values())).baseline
    caption = (f"**Is the {title} map right for “{e.label}”?** Patches replaced by the "
               f"{'normalisation mean (grey)' if base == 'mean' else 'blurred image'} in the order the map ranks "
               f"them: " + "; ".join(verdicts) + ".")
    legend = "solid: the map's order; dashed: a random order; deletion: lower is better; insertion: higher is better"
    return View(image, caption, legend, f"Deletion and insertion, {title}, {e.label}")


COMPARISON_HEADERS = ["method", "depends on the class", "deletion AUC (lower is better)",
                      "insertion AUC (higher is better)", "time (ms)"]


def comparison_rows(results: list) -> list[list[str]]:
    """One table row per (Explanation, curves) pair, and a last row for the random order."""
    rows = []
    for e, curves in results:
        m = METHODS[e.method]
        rows.append([m.title, "yes" if m.class_specific else "no", auc_text(curves["deletion", "saliency"].auc),
                     auc_text(curves["insertion", "saliency"].auc), f"{e.timings_ms['explain']:.0f}"])
    if results:
        curves = results[0][1]
        rows.append(["random order (chance)", "—", auc_text(curves["deletion", "random"].auc),
                     auc_text(curves["insertion", "random"].auc), "—"])
    return rows
