"""The Patches tab's views (chapter 11.4.1): the patch grid in token order, one patch's attention as the query, the
stage table and the top-k classes."""

from __future__ import annotations

import re

import numpy as np

from vit import i18n
from vit.i18n.names import class_name
from vit.model.families import class_names
from vit.views import base, describe, draw
from vit.views.base import DISPLAY_SIZE, Cells, View, display_size, fit_note, query_cell, token_index

STAGE_HEADERS = i18n.text("stage-headers").split("|")  # ["stage", "module", "notation", "shape", "params"]
_STAGE_KEYS = {"image": "stage-image", "patch conv": "stage-patch-conv", "patch tokens": "stage-patch-tokens",
               "with class token": "stage-with-class-token", "with position": "stage-with-position",
               "final norm": "stage-final-norm", "class token": "stage-class-token", "logits": "stage-logits"}
_LAYER_STAGES = {"attention weights": "stage-attention", "MLP hidden": "stage-mlp", "output": "stage-output"}


def stage_headers(lang: str = "en") -> list[str]:
    return i18n.text("stage-headers", lang).split("|")


def stage_note(lang: str = "en") -> str:
    return i18n.text("stage-note", lang)


def stage_name(name: str, lang: str = "en") -> str:
    """A stage's name (the tracer's, in English) in ``lang``: "layer 3 output" -> "第 3 层输出"."""
    if name in _STAGE_KEYS:
        return i18n.text(_STAGE_KEYS[name], lang)
    m = re.fullmatch(r"layer (\d+) (attention weights|MLP hidden|output)", name)
    return i18n.text(_LAYER_STAGES[m.group(2)], lang, n=m.group(1)) if m else name


def prefix_phrase(a, lang: str = "en") -> str:
    """"plus the class token: N+1 = 197", or the prefix tokens of DeiT's and the registers' models by name."""
    names = a.prefix_token_names
    if len(names) == 1:
        return i18n.text("prefix-class", lang, T=a.num_tokens)
    return i18n.text("prefix-tokens", lang, n=len(names), names=", ".join(names), last=len(names) - 1, T=a.num_tokens)


def grid_view(a, query: tuple[float, float] | None, size: int = DISPLAY_SIZE, lang: str = "en") -> View:
    """The patch grid in token order, the query's patch outlined (``query`` None: the page outlines it itself)."""
    rows, cols = a.grid
    cell = None if query is None else query_cell(query, a.grid)
    h, w = a.input_size
    p = a.num_prefix_tokens
    layout = draw.grid_layout(a.grid, display_size(a, size), p)
    if layout.in_cells:
        numbers = i18n.text("grid-numbers", lang, p=p, cols=cols)
    else:
        numbers = i18n.text("grid-margins", lang, rows=base.every_kth(layout.row_step, "row", lang),
                            columns=base.every_kth(layout.col_step, "column", lang), p=p, cols=cols)
    caption = i18n.text("grid-caption", lang, h=h, w=w, rows=rows, cols=cols, P=a.patch_size, N=a.num_patches,
                        prefix=prefix_phrase(a, lang), numbers=numbers)
    if cell is not None:
        caption += " " + i18n.text("grid-outlined", lang, r=cell[0], c=cell[1], token=token_index(cell, a.grid, p))
    caption += " " + i18n.text("grid-click", lang)
    image = draw.patch_grid(a.image, a.grid, size, mark=cell, prefix=p)
    names = ", ".join(a.prefix_token_names)
    prefix = i18n.text("alt-prefix-one", lang) if p == 1 else \
        i18n.text("alt-prefix-many", lang, n=p, names=names, last=p - 1)
    outlined = "" if cell is None else \
        i18n.text("alt-outlined", lang, r=cell[0], c=cell[1], token=token_index(cell, a.grid, p))
    alt = i18n.text("alt-grid", lang, rows=rows, cols=cols, P=a.patch_size, prefix=prefix, first=p,
                    last=p + rows * cols - 1, outlined=outlined)
    return View(image, caption, title=i18n.text("grid-title", lang, rows=rows, cols=cols, P=a.patch_size),
                note=fit_note(a, lang), alt=alt, cells=Cells(*layout.box, rows, cols))


def query_view(a, query: tuple[float, float], layer: int, head: int, opacity: float, cmap: str,
               size: int = DISPLAY_SIZE, lang: str = "en") -> View:
    """Where one patch looks: its row of softmax(QKᵀ/√d) at one layer and head, over the patches."""
    cell = query_cell(query, a.grid)
    token = token_index(cell, a.grid, a.num_prefix_tokens)
    heat = a.attention_map(layer, head, token).numpy()  # (rows, cols), head 1-based
    image, scale, legend = base.heat_view(a, heat, opacity, cmap, size, mark=cell, lang=lang)
    caption = i18n.text("query-caption", lang, r=cell[0], c=cell[1], token=token, layer=layer, head=head,
                        share=base.class_token_share(heat, lang))
    title = i18n.text("query-title", lang, token=token, layer=layer, head=head)
    alt = i18n.text("alt-query", lang, token=token, r=cell[0], c=cell[1], layer=layer, L=a.depth, head=head,
                    h=a.num_heads, top=describe.top(heat, a.num_prefix_tokens, lang),
                    focus=describe.focus_words(heat, lang))
    return View(image, caption, legend, title, scale, fit_note(a, lang), alt, base.patch_cells(a, size))


# --------------------------------------------------------------------------- tables


def stage_rows(a, lang: str = "en") -> list[list[str]]:
    """The stage table with a total (middle layers in one row when L > 3); parameters as
    :func:`vit.analysis.trace.counted_params` counts them, so the column sums to the model's."""
    from vit.analysis.trace import counted_params  # noqa: PLC0415 - torch is loaded already: the analysis holds tensors

    counted = counted_params(a.stages)
    layers = sorted({s.layer for s in a.stages if s.layer is not None})
    middle = layers[1:-1] if len(layers) > 3 else []

    def params(own: int, new: int) -> str:
        return f"{new:,}" if new else i18n.text("counted-above", lang) if own else "–"

    p = a.num_prefix_tokens
    words = i18n.text("stage-with-prefix", lang, names=", ".join(a.prefix_token_names))

    def named(stage) -> tuple[str, str]:  # the chapter's N+1 where this model has N+p tokens
        name = words if stage.name == "with class token" and p > 1 else stage_name(stage.name, lang)
        return name, stage.notation.replace("N+1", f"N+{p}") if p > 1 else stage.notation

    rows = []
    for s, new in zip(a.stages, counted):
        name, notation = named(s)
        if s.layer not in middle:
            rows.append([name, s.module, notation, str(tuple(s.shape)), params(s.params, new)])
        elif s.layer == middle[0] and s.name.endswith("output"):  # one row for the folded blocks
            total = sum(n for t, n in zip(a.stages, counted) if t.layer in middle)
            rows.append([i18n.text("stage-folded", lang, first=middle[0], last=middle[-1], count=len(middle)),
                         f"encoder.layers.{middle[0] - 1}–{middle[-1] - 1}", notation, str(tuple(s.shape)),
                         f"{total:,}"])
    rows.append([i18n.text("stage-total", lang), "", "", "", f"{a.params:,}"])
    return rows


def top_k(a, k: int, lang: str = "en") -> dict[str, float]:
    """{label: probability} of the k most probable classes (a repeated name gets its index); {} for a backbone."""
    if not a.has_classifier:
        return {}
    if k <= len(a.topk):
        pairs = [(p.index, p.label, p.prob) for p in a.topk[:k]]
    else:

        names = class_names(a.model)
        probs = a.probs.numpy()
        order = np.argsort(-probs, kind="stable")[:k]
        pairs = [(int(i), names[int(i)], float(probs[i])) for i in order]
    out: dict[str, float] = {}
    for index, label, prob in pairs:  # ImageNet names "crane" and "maillot" twice
        label = class_name(label, lang)
        out[label if label not in out else f"{label} ({index})"] = prob
    return out
