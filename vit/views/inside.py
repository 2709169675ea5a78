"""The Inside tab's views, inside the encoder (chapter 11.4.3-11.4.6): what attention and the MLP add to the
residual stream, every patch token read by the final norm and head (a lens), the token norms (Darcet et al.,
2024) and one head's whole attention matrix beside the same under a causal mask.
"""

from __future__ import annotations

import numpy as np

from vit.views import base, draw, plots
from vit.views.base import DEPTH_PLOT_SIZE, DISPLAY_SIZE, View, fit_note

BLOCK_SERIES = ("‖X‖ stream in", "‖MSA(LN(X))‖ attention", "‖MLP(LN(H))‖ MLP", "‖Y‖ block out")


def block_view(a, layer: int | None = None, size: tuple[int, int] = DEPTH_PLOT_SIZE) -> View:
    """Inside a block: H = X + MSA(LN(X)), Y = H + MLP(LN(H)) in this image's numbers.

    On top, the chosen layer's block as the chapter draws it, its norms on the arrows; under it,
    the same four norms for every layer.
    """
    res = a.residual()
    values = np.array([[r.stream, r.attention, r.mlp, r.output] for r in res])  # (L, 4)
    chart = plots.grouped_bars(values, BLOCK_SERIES, [str(r.layer) for r in res], "layer",
                               "mean ‖·‖₂ over the N+1 tokens", size)
    r = res[(a.depth if layer is None else min(max(layer, 1), a.depth)) - 1]
    diagram = plots.block_diagram(f"‖X‖ = {r.stream:.1f}", f"adds ‖·‖ = {r.attention:.1f}",
                                  f"adds ‖·‖ = {r.mlp:.1f}", f"‖Y‖ = {r.output:.1f}",
                                  f"Layer {r.layer} (encoder.layers.{r.layer - 1}), means over the N+1 tokens",
                                  chart.width)
    image = draw.stack(diagram, chart)
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


LENS_CLASSES = len(draw.PALETTE)  # the most frequent classes get a colour; the rest are grey


def lens_classes(indices: np.ndarray, k: int = LENS_CLASSES) -> list[tuple[int, int]]:
    """(class index, patch count) of the ``k`` most frequent classes, most frequent first (ties: lower index)."""
    values, counts = np.unique(np.asarray(indices).ravel(), return_counts=True)
    order = sorted(zip(values.tolist(), counts.tolist()), key=lambda vc: (-vc[1], vc[0]))
    return order[:k]


def lens_colours(indices: np.ndarray, classes: list[int]) -> np.ndarray:
    """(rows, cols) class indices -> (rows, cols, 3) uint8: the palette's colour of each legend class, else grey."""
    indices = np.asarray(indices)
    out = np.empty((*indices.shape, 3), dtype=np.uint8)
    out[:] = draw.OTHER
    for colour, c in zip(draw.PALETTE, classes):
        out[indices == c] = colour
    return out


def lens_view(a, layer: int, size: int = DISPLAY_SIZE, opacity: float = 0.7) -> View:
    """Token content: the final norm and head applied to every patch token at ``layer``, top-1 class per patch."""
    from vit.model.families import class_names  # noqa: PLC0415 - torchvision's names, read only when drawn

    names = class_names(a.model)
    indices, probs = (t.numpy() for t in a.patch_lens(layer))
    top = lens_classes(indices)
    classes = [c for c, _ in top]
    picture = draw.category_overlay(a.image, lens_colours(indices, classes), opacity, size)
    entries = [(colour, f"{names[c]} ({n})") for colour, (c, n) in zip(draw.PALETTE, top)]
    others = int(indices.size - sum(n for _, n in top))
    if others:
        entries.append((draw.OTHER, f"other classes ({others})"))
    image = draw.stack(picture, draw.swatch_legend(picture.width, entries))
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
    image, (lo, hi), legend = base.heat_view(a, heat, opacity, cmap, size, label="brighter = longer token vector")
    median = float(np.median(heat))
    caption = (
        f"**Token norms after layer {layer}:** the length ‖Y_{layer},i‖₂ of each patch token's "
        f"D = {a.queries[0].shape[-1]} numbers, from {lo:.1f} to {hi:.1f} (median {median:.1f}); the class "
        f"token's is {float(norms[0]):.1f}. On large trained models a few patch tokens, often in plain "
        f"background, grow far longer than the rest: the \"artifact\" tokens of Darcet et al. 2024 "
        f"(\"Vision Transformers Need Registers\"), which the model uses as scratch space for global information."
    )
    return View(image, caption, legend, f"Token norms, layer {layer}", (lo, hi), fit_note(a))


MATRIX_CMAP = "magma"


def matrix_factor(tokens: int, panel: int) -> int:
    """Patch tokens per displayed row/column so that a matrix of ``tokens`` fits ``panel`` px at >= 1 px each."""
    return max(1, -(-(tokens - 1) // panel))


def matrix_view(a, layer: int, head: int, size: int = DISPLAY_SIZE) -> View:
    """One head's whole (N+1)x(N+1) attention matrix beside the same under a causal mask (11.4.2)."""
    from vit.analysis import rollout  # noqa: PLC0415 - torch is loaded already: the analysis holds tensors

    full = a.attention_matrix(layer, head - 1)  # (N+1, N+1)
    masked = rollout.causal(full)
    panel = (size - 12) // 2
    factor = matrix_factor(a.num_tokens, panel)
    shown = [rollout.downsample_matrix(m, factor).numpy() for m in (full, masked)]
    lo, hi = float(min(m.min() for m in shown)), float(max(m.max() for m in shown))
    pictures = []
    for m in shown:
        p = draw.heat_image(m, (panel, panel), MATRIX_CMAP, (lo, hi))
        draw.outline_row(p, m.shape[0])
        pictures.append(p)
    sheet = draw.panels(pictures, ["encoder: every token sees all", "causal mask: only earlier tokens"])
    label = "brighter = more attention (row = query, column = key)"
    image = draw.with_colorbar(sheet, MATRIX_CMAP, base.bar_number(lo), base.bar_number(hi), label)
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
    legend = f"{label}; both halves coloured from {base.bar_number(lo)} to {base.bar_number(hi)}"
    return View(image, caption, legend, f"Attention matrix, layer {layer}, head {head}", (lo, hi))
