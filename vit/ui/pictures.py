"""The pictures of a tab and their captions, from a kept analysis (``vit.views`` draws them).

A redraw sends only the pictures whose inputs changed: :func:`signature` says what each depends on.
"""

from __future__ import annotations

import functools
import html
import time

from vit import validate, views
from vit.errors import InputError

# The pictures of an analysis, each with its caption (elem_ids; the caption's is "<picture>-caption").
PICTURES = ("patch-grid", "query-view", "rollout-view", "head-views", "layer-views")
# ... and those of the tabs beyond the chapter's first views (the page only: /analyze returns the five above).
INSIDE = ("block-view", "lens-view", "token-norms", "matrix-view")
FIGURE7 = ("filters-view", "position-view", "distance-view")
# Which tab shows which pictures: a redraw draws and sends only those of the tab on screen.
ON_TAB = {"patches": ("patch-grid", "query-view"), "attention": ("rollout-view", "head-views"),
          "depth": ("layer-views",), "inside": INSIDE, "figure7": FIGURE7}
ALL_PICTURES = PICTURES + INSIDE + FIGURE7


OWN_PICTURES = ("why",)  # tabs that draw their own pictures (vit.ui.why): a redraw draws none of these


def on_tab(tab) -> tuple[str, ...]:
    """The pictures of the tab on screen (the first tab's for anything else)."""
    return () if tab in OWN_PICTURES else ON_TAB.get(tab, ON_TAB["patches"])


def caption(view: views.View) -> str:
    parts = [view.caption]
    if view.legend:
        parts.append(f"*{view.legend}*")
    if view.note:
        parts.append(f"⚠ {view.note}")
    return "\n\n".join(parts)


PROJECTOR_SIZE = 900  # px: a main picture in projector mode (drawn this large, never enlarged by the browser)
PROJECTOR_TILE = 280  # px: one small-multiples tile in projector mode


def sizes(projector: bool = False) -> tuple[int, int]:
    """(main picture, small-multiples tile) in pixels, as drawn."""
    return (PROJECTOR_SIZE, PROJECTOR_TILE) if projector else (views.DISPLAY_SIZE, views.TILE_SIZE)


def draw(a, which: str, query, layer: int, head: int, opacity: float, cmap: str,
         projector: bool = False) -> views.View:
    """One of :data:`PICTURES` for an analysis and display settings (larger in projector mode)."""
    size, tile = sizes(projector)
    if which == "patch-grid":
        return views.grid_view(a, query, size)
    if which == "query-view":
        return views.query_view(a, query, layer, head, opacity, cmap, size)
    if which == "rollout-view":
        return views.rollout_view(a, layer, opacity, cmap, size)
    if which == "head-views":
        return views.heads_view(a, layer, opacity, cmap, tile)
    if which == "layer-views":
        return views.layers_view(a, opacity, cmap, tile)
    if which == "block-view":
        return views.block_view(a, layer)
    if which == "lens-view":
        return views.lens_view(a, layer, size)
    if which == "token-norms":
        return views.token_norm_view(a, layer, opacity, cmap, size)
    if which == "matrix-view":
        return views.matrix_view(a, layer, head)
    if which == "distance-view":
        return views.distance_view(a)
    if which in ("filters-view", "position-view"):  # properties of the weights: from the loaded model
        return _weights_view(a, which)
    raise InputError(f"picture must be one of {', '.join(ALL_PICTURES)}, got {validate.show(which)}")


def _weights_view(a, which: str) -> views.View:
    """Figure 7's weight pictures for the model the analysis ran (the server's model cache has it)."""
    if which == "filters-view":
        return views.filters_view(_filters(a.model, a.weights, a.patch_size, a.depth))
    return views.position_view(_similarity(a.model, a.weights, a.patch_size, a.depth), a.grid)


@functools.lru_cache(maxsize=8)
def _filters(name: str, weights: str, patch_size: int, depth: int):
    """The principal patch filters of a model as loaded (an SVD: seconds on 2 cores, so kept per model)."""
    import vit  # noqa: PLC0415 - torch

    return vit.patch_filters(_loaded(name, patch_size, depth))


@functools.lru_cache(maxsize=8)
def _similarity(name: str, weights: str, patch_size: int, depth: int):
    import vit  # noqa: PLC0415 - torch

    return vit.position_similarity(_loaded(name, patch_size, depth))


def _loaded(name: str, patch_size: int, depth: int):
    from vit.ui.state import model_cache  # noqa: PLC0415

    return model_cache().get(name, "imagenet", patch_size, depth)


# The pictures drawn from the analysis's head fusion or discard ratio; the others are the same for all of them.
ON_FUSION = ("rollout-view", "layer-views")
ON_DISCARD = ("rollout-view",)


def variant_key(key: str, which: str, head_fusion: str, discard_ratio: float) -> str:
    """The analysis's key plus the options ``which`` is drawn from: a fusion or discard change redraws only those."""
    fusion = f"|{head_fusion}" if which in ON_FUSION else ""
    discard = f"|{discard_ratio}" if which in ON_DISCARD else ""
    return f"{key}{fusion}{discard}"


def signature(key: str, which: str, cell, layer, head, opacity, cmap) -> tuple:
    """What a picture depends on: it is redrawn only when this changes."""
    return {
        "patch-grid": (key, cell),
        "query-view": (key, cell, layer, head, opacity, cmap),
        "rollout-view": (key, layer, opacity, cmap),
        "head-views": (key, layer, opacity, cmap),
        "layer-views": (key, opacity, cmap),
        "block-view": (key, layer),
        "lens-view": (key, layer),
        "token-norms": (key, layer, opacity, cmap),
        "matrix-view": (key, layer, head),
        "distance-view": (key,),
        "filters-view": (key,),
        "position-view": (key,),
    }[which]


def grid_info(a, projector: bool = False) -> str:
    """The grid's geometry for the page's hover (read by the page's script)."""
    rows, cols = a.grid
    size = sizes(projector)[0]
    x0, y0, w, h = views.picture_box(a, size)
    ow, oh = views.display_size(a, size)
    return (f'<div id="grid-geometry" data-rows="{rows}" data-cols="{cols}" data-x0="{x0}" data-y0="{y0}" '
            f'data-w="{w}" data-h="{h}" data-overlay-w="{ow}" data-overlay-h="{oh}"></div>')


def stage_table(a) -> str:
    """The stage table as HTML: on a phone each row stacks instead of scrolling sideways."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in views.STAGE_HEADERS)
    rows = []
    for row in views.stage_rows(a):
        # Module paths break only after a dot ("encoder.layers.0.attn"), never inside a word.
        texts = [html.escape(str(v)).replace(".", ".<wbr>") if i == 1 else html.escape(str(v))
                 for i, v in enumerate(row)]
        cells = "".join(f'<td data-label="{html.escape(h)}">{t}</td>' for h, t in zip(views.STAGE_HEADERS, texts))
        rows.append(f"<tr>{cells}</tr>")
    return (f'<table class="stages"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'<p class="table-note">{html.escape(views.plain(views.STAGE_NOTE))} B = 1 image.</p>')


def redrawn(t0: float) -> str:
    return f"Time: redrawn in {1e3 * (time.perf_counter() - t0):.0f} ms, without running the model"
