"""What the page needs around the pictures: captions, the grid's geometry, the stage table, Figure 7's weights from
the model cache. Which pictures there are and how each is drawn is :mod:`vit.views.registry` (shared with the CLI)."""

from __future__ import annotations

import contextvars
import functools
import html
import time
from concurrent.futures import ThreadPoolExecutor

import gradio as gr

from vit import i18n
from vit.ui.state import model_cache, picture_file
from vit.validate import Setting
from vit.views import base, patches, registry
from vit.views.patches import stage_headers, stage_note
from vit.views.registry import Display, Weights


def caption(view: base.View) -> str:
    parts = [view.caption]
    if view.legend:
        parts.append(f"*{view.legend}*")
    if view.note:
        parts.append(f"⚠ {view.note}")
    return "\n\n".join(parts)


def shown(view: base.View, encoding: str = "png") -> dict:
    """A picture as the page gets it: its file (its cells in the name, where it takes clicks) and its alt text."""
    return gr.update(value=picture_file(view.image, encoding, view.cells), alt_text=view.alt or None)


_DRAWERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="draw")  # PIL's encoders and numpy free the GIL


def drawn_files(a, displays: dict[str, Display], page: bool = True) -> dict[str, tuple]:
    """Each picture of ``displays`` drawn and saved, two at a time: {name: (picture, caption)}, the picture as the
    page gets it (:func:`shown`) or, ``page=False``, its file's path."""
    weights = model_weights(a)

    def one(name: str) -> tuple[dict | str, str]:
        view = registry.draw(a, name, displays[name], weights=weights)
        encoding = registry.PICTURES[name].encoding
        return (shown(view, encoding) if page else picture_file(view.image, encoding)), caption(view)

    jobs = {name: _DRAWERS.submit(contextvars.copy_context().run, one, name) for name in displays}  # its owner too
    return {name: job.result() for name, job in jobs.items()}


def model_weights(a) -> Weights:
    """Figure 7's weight pictures for the model the analysis ran: "filters" or "similarity" -> the array."""
    return functools.partial(_weights, a.model, a.weights, a.patch_size, a.depth)


@functools.lru_cache(maxsize=16)
def _weights(name: str, weights: str, patch_size: int, depth: int, kind: str):
    """A loaded model's principal patch filters ("filters": an SVD, so kept) or position similarity."""
    import vit  # noqa: PLC0415 - torch

    loaded = model_cache().get(Setting(name, patch_size, depth), "imagenet")
    return (vit.patch_filters if kind == "filters" else vit.position_similarity)(loaded)


def grid_info(a, cell: tuple[int, int]) -> str:
    """The query's ``cell`` (row, col) and its token, for the outline page.js draws over it on the patch grid."""
    token = base.token_index(cell, a.grid, a.num_prefix_tokens)
    return (f'<div id="grid-geometry" data-prefix="{a.num_prefix_tokens}" data-row="{cell[0]}" data-col="{cell[1]}" '
            f'data-token="{token}"></div>')


def stage_table(a, lang: str = "en") -> str:
    """The stage table as HTML: on a phone each row stacks instead of scrolling sideways."""
    headers = stage_headers(lang)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    rows = []
    for row in patches.stage_rows(a, lang):
        # Module paths break only after a dot ("encoder.layers.0.attn"), never inside a word.
        texts = [html.escape(str(v)).replace(".", ".<wbr>") if i == 1 else html.escape(str(v))
                 for i, v in enumerate(row)]
        cells = "".join(f'<td data-label="{html.escape(h)}">{t}</td>' for h, t in zip(headers, texts))
        rows.append(f"<tr>{cells}</tr>")
    note = f"{base.plain(stage_note(lang))} {i18n.text('stage-one-image', lang)}"
    return (f'<table class="stages"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'<p class="table-note">{html.escape(note)}</p>')


def redrawn(t0: float, run: str = "", lang: str = "en") -> str:
    """A redraw's time; on the page after the run's own timing line (``run``), which stays readable."""
    took = i18n.text("redrawn", lang, ms=1e3 * (time.perf_counter() - t0))
    return i18n.text("redrawn-after", lang, run=run, took=took) if run else i18n.text("redrawn-alone", lang, took=took)
