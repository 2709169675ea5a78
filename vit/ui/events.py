"""What happens when someone does something: one function per event, returning outputs by name.

Every handler returns ``{elem_id: value}`` (the names of :mod:`vit.ui.layout`'s components),
so no output is ever matched by position; :func:`named` turns that into gradio's
``{component: value}``. Two kinds of callers:

* the page (private events): controls are clamped to what they show, a setting that is
  slow or needs a large download waits for the Analyze button (the pictures say they are
  out of date), the newest request of a tab wins and older results are dropped, and
  pictures are redrawn only when what they show changes (:func:`redraw`);
* the API (``/analyze``, ``/redraw``, ``/top_k``, ...): strict, every bad value named in
  its message, every picture returned.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections import OrderedDict
from typing import Any

import gradio as gr

from vit import cost as costs
from vit import validate, views
from vit.config import PRESETS, patch_size_range
from vit.errors import InputError
from vit.ui import gpu, meter
from vit.ui.state import RUNS, TABS, analysis_store, fair_queue, kept, png_file, release_memory, session_of

log = logging.getLogger("vit.app")

DEFAULT_OPACITY = 0.6
DEFAULT_COLORMAP = "cividis"  # reads the same to colour-blind viewers and in greyscale
CENTRE = (0.5, 0.5)  # the query patch before any click, as a fraction of (width, height)
AUTO_DOWNLOAD_MB = 400  # larger checkpoints (ViT-L, ViT-H) download only when Analyze is pressed
NO_IMAGE = "No image yet: upload a photo, take one with the webcam, paste one, or click an example."
SERVER_ERROR = "Something went wrong on the server (it has been logged). Try again, or another image or setting."

# The pictures of an analysis, each with its caption (elem_ids; the caption's is "<picture>-caption").
PICTURES = ("patch-grid", "query-view", "rollout-view", "head-views", "layer-views")
# /analyze's outputs, in the order API clients receive them.
ANALYZE_OUTPUTS = ("banner", "patch-grid", "patch-grid-caption", "stage-table", "rollout-view",
                   "rollout-view-caption", "head-views", "head-views-caption", "layer-views",
                   "layer-views-caption", "query-view", "query-view-caption", "predictions", "depth-plot",
                   "timing", "analysis")
REDRAW_OUTPUTS = tuple(n for p in PICTURES for n in (p, f"{p}-caption")) + ("grid-info", "timing")
PAGE_ANALYZE_OUTPUTS = ("banner", "stage-table", "predictions", "depth-plot", "depth-plot-caption", "timing",
                        "analysis", "notice", "patch-size", "depth", "layer", "head", "cost-meter")


def named(fn, names: tuple[str, ...]):
    """``fn`` returning ``{elem_id: value}`` as gradio wants it: a value (or ``gr.skip()``) per output of ``names``."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        unknown = set(result) - set(names)
        if unknown:
            raise KeyError(f"{fn.__name__} returned outputs it does not declare: {sorted(unknown)}")
        return tuple(result.get(n, gr.skip()) for n in names)

    return wrapper


def handler(fn):
    """Our errors become messages a student reads; anything else is logged and the server keeps serving.

    Pictures in the result go out as fast-encoded PNG files (:func:`vit.ui.state.png_file`).
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return _as_files(fn(*args, **kwargs))
        except gr.Error:
            raise
        except InputError as exc:
            log.info("%s refused: %s", fn.__name__, exc)  # in full, paths included: for the server's log only
            raise gr.Error(getattr(exc, "public", str(exc)), title="Please check", print_exception=False) from None
        except Exception:
            log.exception("%s failed", fn.__name__)
            raise gr.Error(SERVER_ERROR, title="Server error", print_exception=False) from None

    return wrapper


def _as_files(result):
    from PIL import Image  # noqa: PLC0415

    def encode(x):
        return png_file(x) if isinstance(x, Image.Image) else x

    if isinstance(result, dict):
        return {k: encode(v) for k, v in result.items()}
    if isinstance(result, tuple):
        return tuple(encode(x) for x in result)
    return encode(result)


# --------------------------------------------------------------------------- reading the controls


def clamp(value, lo: int, hi: int, default: int) -> int:
    """A control's number as the page shows it: rounded and clamped to [lo, hi]; not a number -> default.

    A browser's number box accepts 100 in a 4..64 slider and shows 64; what runs is what it shows.
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if math.isnan(number):
        return default
    return int(min(max(round(number), lo), hi))


def page_setting(model, patch_size, depth) -> tuple[str, int, int]:
    """(name, P, depth) from the page's controls, clamped to the model's ranges."""
    name = validate.model_name(model)
    native = PRESETS[name]
    lo, hi = patch_size_range(name)
    return (name, clamp(patch_size, lo, hi, native.patch_size),
            clamp(depth, 1, native.num_layers, native.num_layers))


def colormap_name(value) -> str:
    from vit import render  # noqa: PLC0415

    if isinstance(value, str) and value.strip().lower() in render.COLORMAPS:
        return value.strip().lower()
    raise InputError(f"colormap must be one of {', '.join(map(repr, render.COLORMAPS))}, got {validate.show(value)}")


def query_fraction(value) -> tuple[float, float]:
    """The query patch as fractions (x, y) of the picture; anything else is the centre."""
    try:
        fx, fy = (float(v) for v in value)
    except (TypeError, ValueError):
        return CENTRE
    return (fx, fy) if 0 <= fx < 1 and 0 <= fy < 1 else CENTRE


def layer_head(a, layer, head) -> tuple[int, int]:
    """Strict 1-based (layer, head) for an analysis; a layer past the depth run shows the last one."""
    native = PRESETS[a.model]
    layer = a.depth if layer is None else min(validate.layer(layer, native.num_layers), a.depth)
    return layer, validate.head(head, a.num_heads)


def _image_source(image):
    """The one gate for every image that comes with a request, public event or internal.

    A gr.Image payload names a file; only a file that gradio itself received as an
    upload (or one of the app's own examples) is ever opened: the path is resolved,
    symlinks followed, and must lie under :func:`upload_roots`. Anything else (another
    path, a URL, a ``data:`` string, a dict without a path) gets one sentence that says
    nothing about the path. PIL images and arrays come only from Python callers.

    Returns:
        (what ``vit.images.load_image`` reads, the name the student knows the file by).
    """
    from vit.server import proven_file  # noqa: PLC0415

    if image is None or image == "" or image == {}:
        raise InputError(NO_IMAGE)
    if isinstance(image, dict):
        path, name = image.get("path"), image.get("orig_name")
    elif isinstance(image, str):
        path, name = image, None
    elif hasattr(image, "path"):  # a gradio FileData object
        path, name = image.path, getattr(image, "orig_name", None)
    else:
        return image, None  # a PIL image or an array, from Python: nothing on disk
    real = proven_file(path, upload_roots())
    return real, (name if isinstance(name, str) and name else real.name)


def upload_roots() -> tuple[str, ...]:
    """The folders whose files a request may name: gradio's upload folder and the app's assets."""
    from gradio.utils import get_upload_folder  # noqa: PLC0415

    from vit.families import ASSETS  # noqa: PLC0415

    return get_upload_folder(), str(ASSETS)


def _load_image(source, name):
    """Decode the upload; messages name the file as the student knows it, not the server's path."""
    from vit.images import load_image  # noqa: PLC0415

    try:
        return load_image(source)
    except InputError as exc:
        if name is None:
            raise
        raise InputError(str(exc).replace(str(source), repr(name))) from None


def _image_id(image) -> str:
    """Which picture a page request is about: gradio names every upload with a fresh path."""
    if isinstance(image, dict):
        return str(image.get("path"))
    return str(getattr(image, "path", id(image)))


# --------------------------------------------------------------------------- running the model


def _progress_reporter(progress, label: str):
    def report(done: int, total: int) -> None:
        if total:
            progress((done // 1_000_000, total // 1_000_000), desc=f"downloading the {label} weights", unit="MB")
        else:
            progress(None, desc=f"downloading the {label} weights: {done / 1e6:.0f} MB")

    return report


def _run(source, filename, setting, top_k, head_fusion, discard_ratio, progress, session, still_wanted=None):
    """Decode, wait for the model's turn, fetch weights, run: the :class:`vit.Analysis` and timings.

    ``still_wanted()`` (the page) says whether the tab still wants this run; while another run of
    the same tab holds the model, the request waits instead of being refused, and gives up
    when it is no longer wanted (``None`` is returned).
    """
    from vit.server import Busy  # noqa: PLC0415

    name, patch_size, depth = setting
    c = costs.estimate(name, patch_size, depth)
    costs.check_budget(c)  # before any download or model run
    pil = _load_image(source, filename)  # a bad file fails here, before any weights load
    display = c.display_name
    progress(0.02, desc="waiting for the model (one analysis at a time, the quickest first)")
    while True:
        if still_wanted is not None and not still_wanted():
            return None, 0.0
        try:
            with fair_queue().turn(session, meter.estimated_seconds(c)):
                if still_wanted is not None and not still_wanted():
                    return None, 0.0
                progress(0.05, desc=f"loading {display}")
                gpu.fetch_weights(name, _progress_reporter(progress, display))
                progress(0.4, desc=f"running {display} on your image (~{meter.estimated_seconds(c):.0f} s)")
                t1 = time.perf_counter()
                a = gpu.run_model(name, patch_size, depth, pil, top_k, head_fusion, discard_ratio)
                RUNS["model"] += 1
                return a, time.perf_counter() - t1
        except Busy:
            if still_wanted is None:
                raise
            time.sleep(0.05)  # this tab's previous run is finishing; it will be dropped


def _timing(a, run_s: float, t0: float, t2: float) -> str:
    return (f"Time: model run {1e3 * run_s:.0f} ms (traced forward {a.timings_ms.get('forward_traced', 0):.0f} ms)"
            f" · drawing {1e3 * (time.perf_counter() - t2):.0f} ms · total {1e3 * (time.perf_counter() - t0):.0f} ms")


def _caption(view: views.View) -> str:
    parts = [view.caption]
    if view.legend:
        parts.append(f"*{view.legend}*")
    if view.note:
        parts.append(f"⚠ {view.note}")
    return "\n\n".join(parts)


def draw(a, which: str, query, layer: int, head: int, opacity: float, cmap: str) -> views.View:
    """One of :data:`PICTURES` for an analysis and display settings."""
    if which == "patch-grid":
        return views.grid_view(a, query)
    if which == "query-view":
        return views.query_view(a, query, layer, head, opacity, cmap)
    if which == "rollout-view":
        return views.rollout_view(a, layer, opacity, cmap)
    if which == "head-views":
        return views.heads_view(a, layer, opacity, cmap)
    if which == "layer-views":
        return views.layers_view(a, opacity, cmap)
    raise InputError(f"picture must be one of {', '.join(PICTURES)}, got {validate.show(which)}")


def _signature(key: str, which: str, cell, layer, head, opacity, cmap) -> tuple:
    """What a picture depends on: it is redrawn only when this changes."""
    return {
        "patch-grid": (key, cell),
        "query-view": (key, cell, layer, head, opacity, cmap),
        "rollout-view": (key, layer, opacity, cmap),
        "head-views": (key, layer, opacity, cmap),
        "layer-views": (key, opacity, cmap),
    }[which]


def grid_info(a) -> str:
    """The grid's geometry for the page's hover and arrow keys (read by the page's script)."""
    rows, cols = a.grid
    x0, y0, w, h = views.picture_box(a)
    ow, oh = views.display_size(a)
    return (f'<div id="grid-geometry" data-rows="{rows}" data-cols="{cols}" data-x0="{x0}" data-y0="{y0}" '
            f'data-w="{w}" data-h="{h}" data-overlay-w="{ow}" data-overlay-h="{oh}"></div>')


# --------------------------------------------------------------------------- the API's events


@handler
def analyze(image, model, patch_size, depth, top_k=5, head_fusion="mean", discard_ratio=0.0,
            layer=None, head=1, opacity=DEFAULT_OPACITY, colormap=DEFAULT_COLORMAP,
            query=CENTRE, progress=gr.Progress(), request: gr.Request = None):
    """Run the ViT on one image and draw every view.

    Args:
        image: the photo (any JPEG/PNG/WebP/GIF/BMP/TIFF).
        model: "ViT-B/16", "ViT-B/32", "ViT-L/16", "ViT-L/32", "ViT-H/14" (or "vit_b_16" ...), or
            "ViT-Tiny shapes, trained here" ("vit_tiny_shapes": 64 px, drawn shapes, no download).
        patch_size: P in pixels, 4 to 64 (4 to 32 for the shapes model); the grid becomes
            round(224 / P) per side (round(64 / P) for the shapes model).
        depth: how many encoder blocks to run, 1 to L.
        top_k: how many predictions to list, 1 to 20.
        head_fusion: how rollout and the per-layer maps fuse the heads: "mean", "max" or "min".
        discard_ratio: fraction of each row's weakest attention links rollout drops, 0 to 0.99.
        layer: the layer to inspect, 1-based (a layer past ``depth`` shows the last one run).
        head: the head to inspect, 1-based.
        opacity: of the heatmaps over the image, 0 to 1.
        colormap: "cividis", "viridis", "magma" or "gray".

    Returns:
        The weights banner, the patch grid and its caption, the stage table, the rollout,
        per-head and per-layer maps and the query-patch view with their captions, the
        top-k predictions, the depth plot and the timings (in that order).
    """
    t0 = time.perf_counter()
    source, filename = _image_source(image)
    s = validate.setting(model, patch_size, depth)
    setting = (s.name, s.patch_size, s.depth)
    native = PRESETS[s.name]
    top_k = min(validate.top_k(top_k), native.num_classes)  # the shapes model has 8 classes
    head_fusion = validate.head_fusion(head_fusion)
    discard_ratio = validate.discard_ratio(discard_ratio)
    layer = s.depth if layer is None else min(validate.layer(layer, native.num_layers), s.depth)
    head = validate.head(head, native.num_heads)
    opacity = validate.opacity(opacity)
    cmap = colormap_name(colormap)
    query = query_fraction(query)
    a, run_s = _run(source, filename, setting, top_k, head_fusion, discard_ratio, progress, session_of(request))
    progress(0.8, desc="drawing")
    t2 = time.perf_counter()
    out = {"banner": meter.banner_html(a), "stage-table": stage_table(a), "predictions": views.top_k(a, top_k),
           "depth-plot": views.depth_view(a).image}
    for which in PICTURES:
        view = draw(a, which, query, layer, head, opacity, cmap)
        out[which], out[f"{which}-caption"] = view.image, _caption(view)
    out["timing"] = _timing(a, run_s, t0, t2)
    out["analysis"] = analysis_store().put(a)
    log.info("analysed %s: %s", meter.setting_words(*setting), out["timing"])
    release_memory()
    return tuple(out[k] for k in ANALYZE_OUTPUTS)


@handler
def redraw_all(key, query_x=0.5, query_y=0.5, layer=None, head=1, opacity=DEFAULT_OPACITY,
               colormap=DEFAULT_COLORMAP, head_fusion="mean", discard_ratio=0.0):
    """Every picture of this tab's last analysis again, with other display settings (no model run).

    Args:
        query_x, query_y: the query patch, as fractions of the picture's width and height (0 to 1).
        layer, head, opacity, colormap, head_fusion, discard_ratio: as for ``/analyze``.

    Returns:
        The five pictures, each followed by its caption: patch grid, query patch, rollout,
        per head, per layer; then the timing.
    """
    t0 = time.perf_counter()
    a = _with_options(key, head_fusion, discard_ratio)
    layer, head = layer_head(a, layer, head)
    q, cmap, alpha = query_fraction((query_x, query_y)), colormap_name(colormap), validate.opacity(opacity)
    out = []
    for which in PICTURES:
        view = draw(a, which, q, layer, head, alpha, cmap)
        out += [view.image, _caption(view)]
    return (*out, _redrawn(t0))


@handler
def predictions(key, top_k):
    """Another top-k: read from the kept probabilities."""
    if key is None:
        return gr.skip()
    a = kept(key)
    return views.top_k(a, min(validate.top_k(top_k), len(a.probs)))


def _redrawn(t0: float) -> str:
    return f"Time: redrawn in {1e3 * (time.perf_counter() - t0):.0f} ms, without running the model"


_variants: OrderedDict[tuple, str] = OrderedDict()  # (key, fusion, discard) -> the store's key of that variant
_variants_lock = threading.Lock()  # one recompute at a time: two redraws of one variant wait for the first


def _with_options(key: str, head_fusion, discard_ratio):
    """The analysis of ``key`` with another head fusion or discard ratio, kept in the store for the next redraw."""
    a = kept(key)
    fusion, discard = validate.head_fusion(head_fusion), validate.discard_ratio(discard_ratio)
    if (fusion, discard) == (a.head_fusion, a.discard_ratio):
        return a
    with _variants_lock:
        found = analysis_store().get(_variants.get((key, fusion, discard)))
        if found is None:
            from vit.server import trim_memory  # noqa: PLC0415

            found = a.with_options(fusion, discard)
            _variants[(key, fusion, discard)] = analysis_store().put(found)
            while len(_variants) > 4096:
                _variants.popitem(last=False)
            trim_memory()  # recomputing every layer's maps at P=4 takes and frees ~0.5 GB
    return found


def stage_table(a) -> str:
    """The stage table as HTML: on a phone each row stacks instead of scrolling sideways."""
    import html  # noqa: PLC0415

    head = "".join(f"<th>{html.escape(h)}</th>" for h in views.STAGE_HEADERS)
    rows = []
    for row in views.stage_rows(a):
        cells = "".join(f'<td data-label="{html.escape(h)}">{html.escape(str(v))}</td>'
                        for h, v in zip(views.STAGE_HEADERS, row))
        rows.append(f"<tr>{cells}</tr>")
    return (f'<table class="stages"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'<p class="table-note">{html.escape(views.plain(views.STAGE_NOTE))} B = 1 image.</p>')


# --------------------------------------------------------------------------- the page's events


def _auto_reason(c) -> str:
    """Why a setting does not run by itself (it waits for Analyze), or ""."""
    from vit.families import is_trained_here  # noqa: PLC0415
    from vit.weights import CHECKPOINTS, cached_path  # noqa: PLC0415

    seconds = meter.estimated_seconds(c)
    if meter.over_budget(c):
        return "too big for this server: choose a larger patch size or fewer layers"
    if seconds > meter.SLOW_S:
        return f"takes ~{seconds:.0f} s here"
    if (not is_trained_here(c.name) and not cached_path(c.name).is_file()
            and CHECKPOINTS[c.name].file_size_mb > AUTO_DOWNLOAD_MB):
        return f"needs its {CHECKPOINTS[c.name].file_size_mb:,.0f} MB checkpoint first"
    return ""


def _slider(value: int, top: int):
    """A 1..top slider; with a single value (depth 1) it is hidden: a slider needs two ends."""
    return gr.update(minimum=1, maximum=max(top, 2), value=min(value, top), visible=top > 1)


@handler
def page_analyze(image, model, patch_size, depth, top_k, head_fusion, discard_ratio, layer, head,
                 progress=gr.Progress(), request: gr.Request = None, explicit: bool = False):
    """The page's analysis: Analyze (``explicit``), or a new image, patch size, depth or model.

    Controls are read as they show (clamped); a setting already shown or running is not run
    again; a slow one waits for Analyze; the newest request of a tab wins. Pictures are not
    drawn here: the new analysis key triggers :func:`page_redraw` with the controls as they are then.
    """
    t0 = time.perf_counter()
    if image is None:
        return {}
    tab = TABS.get(session_of(request))
    setting = page_setting(model, patch_size, depth)
    name, patch_size, depth = setting
    controls = {"patch-size": patch_size, "depth": depth}
    ident = (_image_id(image), *setting)
    if ident in (tab.running, tab.shown):
        return {**controls, "notice": ""}
    c = costs.estimate(*setting)
    reason = "" if explicit else _auto_reason(c)
    if reason:
        shown = tab.shown[1:] if tab.shown else None
        notice = meter.out_of_date(shown or ("", 0, 0), setting, reason) if shown else (
            f'<div class="stale" role="status">⚠ {meter.setting_words(*setting)} {reason}: press <b>Analyze</b>.</div>')
        return {**controls, "notice": notice}
    source, filename = _image_source(image)
    number = TABS.next_number()
    tab.latest, tab.running = number, ident
    native = PRESETS[name]
    top_k = clamp(top_k, 1, min(validate.MAX_TOP_K, native.num_classes), 5)
    try:
        a, run_s = _run(source, filename, setting, top_k, validate.head_fusion(head_fusion),
                        validate.discard_ratio(discard_ratio), progress, session_of(request),
                        still_wanted=lambda: tab.latest == number)
    finally:
        if tab.latest == number:
            tab.running = None
    if a is None or tab.latest != number:  # a newer request of this tab: it shows instead
        return {}
    t2 = time.perf_counter()
    same_model = tab.shown is not None and tab.shown[1] == name and tab.shown[3] == depth
    layer = clamp(layer, 1, depth, depth) if same_model else depth  # another model or depth: its last layer
    head = clamp(head, 1, a.num_heads, 1)
    key = analysis_store().put(a)
    tab.shown, tab.key = ident, key
    depth_view = views.depth_view(a)
    out = {
        **controls,
        "banner": meter.banner_html(a), "stage-table": stage_table(a), "predictions": views.top_k(a, top_k),
        "depth-plot": depth_view.image, "depth-plot-caption": _caption(depth_view),
        "analysis": key, "notice": "",
        "layer": _slider(layer, depth),
        "head": gr.update(maximum=a.num_heads, value=head),
        "cost-meter": meter.cost_meter(*setting),
    }
    out["timing"] = _timing(a, run_s, t0, t2)
    log.info("analysed %s: %s", meter.setting_words(*setting), out["timing"])
    release_memory()
    return out


def page_analyze_now(*args, **kwargs):
    """The Analyze button: runs whatever the setting costs (within the server's budget)."""
    return page_analyze(*args, **kwargs, explicit=True)


@handler
def page_redraw(key, query, layer, head, opacity, colormap, head_fusion, discard_ratio,
                request: gr.Request = None):
    """Any display control, a click or an arrow key, or a new analysis: redraw what changed (no model run).

    Only the pictures whose inputs changed are sent; a redraw of an analysis the tab no longer
    shows is dropped.
    """
    if key is None:
        return {}
    t0 = time.perf_counter()
    tab = TABS.get(session_of(request))
    number = tab.redraw = TABS.next_number()
    a = _with_options(key, head_fusion, discard_ratio)
    layer = clamp(layer, 1, a.depth, a.depth)
    head = clamp(head, 1, a.num_heads, 1)
    opacity = clamp(100 * (opacity if isinstance(opacity, (int, float)) else DEFAULT_OPACITY), 0, 100, 60) / 100
    cmap = colormap_name(colormap)
    q = query_fraction(query)
    cell = views.query_cell(q, a.grid)
    variant = f"{key}|{a.head_fusion}|{a.discard_ratio}"
    out, drawn = {}, {}
    for which in PICTURES:
        sig = _signature(key if which in ("patch-grid", "query-view", "head-views") else variant,
                         which, cell, layer, head, opacity, cmap)
        if tab.drawn.get(which) == sig:
            continue
        view = draw(a, which, q, layer, head, opacity, cmap)
        out[which], out[f"{which}-caption"] = view.image, _caption(view)
        drawn[which] = sig
    if not out or tab.redraw != number or tab.key not in (None, key):
        return {}  # nothing changed, or a newer redraw or analysis of this tab shows instead
    tab.drawn.update(drawn)
    if "patch-grid" in out:
        out["grid-info"] = grid_info(a)
    out["timing"] = _redrawn(t0)
    return out


def click(key, which: str, evt: gr.SelectData):
    """A click on a picture of the model's view: that patch becomes the query (fractions x, y).

    The patch grid has margins on fine grids (:func:`vit.views.picture_box`); the overlays start at (0, 0).
    """
    a = analysis_store().get(key)
    if a is None or evt is None:
        return gr.skip()
    box = views.picture_box(a) if which == "patch-grid" else views.display_size(a)
    try:
        return views.clicked_fraction(evt.index, box)
    except InputError:
        return gr.skip()


def move(key, query, direction: str):
    """An arrow key (or a presenter's clicker): the query patch moves one patch."""
    a = analysis_store().get(key)
    if a is None:
        return gr.skip()
    rows, cols = a.grid
    r, c = views.query_cell(query_fraction(query), a.grid)
    dr, dc = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}.get(direction, (0, 0))
    r, c = min(max(r + dr, 0), rows - 1), min(max(c + dc, 0), cols - 1)
    return ((c + 0.5) / cols, (r + 0.5) / rows)


def settings_changed(model, patch_size, depth, request: gr.Request = None):
    """The meter and the out-of-date notice while the setting is being chosen (no model run)."""
    try:
        setting = page_setting(model, patch_size, depth)
    except InputError as exc:
        return f"⚠ {exc}", ""
    tab = TABS.get(session_of(request))
    shown = tab.shown[1:] if tab.shown else None
    reason = _auto_reason(costs.estimate(*setting))
    return meter.cost_meter(*setting), meter.out_of_date(shown, setting, reason)


@handler
def model_settings(model, head):
    """A new model: its own patch size and depth, the sliders' ranges, and the cost meter."""
    name = validate.model_name(model)
    native = PRESETS[name]
    L, h, P = native.num_layers, native.num_heads, native.patch_size
    head = clamp(head, 1, h, 1)
    lo, hi = patch_size_range(name)
    return (
        gr.update(value=P, minimum=lo, maximum=hi, info=f"checkpoint's own: {P}"),
        gr.update(maximum=L, value=L, info=f"1 to L = {L}"),
        meter.cost_meter(name, P, L),
    )


def offer_button(banner: str):
    """Show the "try the model trained here" button while the banner offers it."""
    return gr.update(visible=isinstance(banner, str) and "data-offer=" in banner)


def use_trained_model():
    """The offer's button: switch the model dropdown to the model trained here (which then runs)."""
    return meter.TRAINED_MODEL


@handler
def download(key, which, query, layer, head, opacity, colormap, head_fusion, discard_ratio):
    """One picture with its title, caption and legend, as one PNG file to save."""
    a = _with_options(key, head_fusion, discard_ratio)
    layer, head = clamp(layer, 1, a.depth, a.depth), clamp(head, 1, a.num_heads, 1)
    if which == "depth-plot":
        view = views.depth_view(a)
    else:
        view = draw(a, which, query_fraction(query), layer, head, validate.opacity(opacity), colormap_name(colormap))
    from vit.ui.state import picture_folder  # noqa: PLC0415

    unique = picture_folder().new_path(".png")
    path = unique.with_name(f"{which}-{a.model}-P{a.patch_size}-L{layer}-{unique.stem[-6:]}.png")
    views.captioned(view).save(path, format="PNG", compress_level=1)
    return str(path)

