"""What happens when someone does something: one function per event, returning outputs by name.

Every handler returns ``{elem_id: value}`` (the names of :mod:`vit.ui.layout`'s components),
so no output is ever matched by position; :func:`named` turns that into gradio's
``{component: value}``. Two kinds of callers:

* the page (private events): controls are clamped to what they show, a setting that is
  slow or needs a large download waits for the Analyze button (the pictures say they are
  out of date), the newest request of a session wins and older results are dropped, and
  pictures are redrawn only when what they show changes (:func:`page_redraw`);
* the API (``/analyze``, ``/redraw``, ``/top_k``, ...): strict, every bad value named in
  its message, every picture returned.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import replace

import gradio as gr
from PIL import Image

from vit import cost as costs
from vit import i18n, validate, views
from vit.config import patch_size_range
from vit.errors import InputError
from vit.model.families import ASSETS, is_trained_here
from vit.serve.files import owned_by
from vit.serve.limits import LogQuota
from vit.ui import inputs, meter, models, pictures, runs, startup
from vit.ui.inputs import Number, Query, layer_head
from vit.ui.lang import of as language_of
from vit.ui.lang import progress_in
from vit.ui.runs import PROGRESS_DRAWING
from vit.ui.state import (
    SESSIONS,
    Session,
    Shown,
    analysis_store,
    end_session,
    keep_drawing,
    kept,
    owner_of,
    picture_file,
    picture_folder,
    release_memory,
    session_of,
    show,
)
from vit.validate import Setting
from vit.views import registry
from vit.views.registry import Display

log = logging.getLogger("vit.app")

DEFAULTS = Display()  # the display before anyone changes it (vit.views.registry: defined there once)
NO_CLASSIFIER = i18n.text("no-classifier")  # what the top-k box says then
AUTO_DOWNLOAD_MB = 400  # larger checkpoints (ViT-L, ViT-H) download only when Analyze is pressed

# /analyze's outputs, in the order API clients receive them.
ANALYZE_OUTPUTS = ("banner", "patch-grid", "patch-grid-caption", "stage-table", "rollout-view",
                   "rollout-view-caption", "head-views", "head-views-caption", "layer-views",
                   "layer-views-caption", "query-view", "query-view-caption", "predictions", "depth-plot",
                   "timing", "analysis-key")
REDRAW_PICTURES = registry.ANALYSIS_PICTURES  # the depth plot too: it is drawn to fill its frame
REDRAW_OUTPUTS = tuple(n for p in REDRAW_PICTURES for n in (p, f"{p}-caption")) + ("grid-info", "timing")


def click_outputs(tab: str) -> tuple[str, ...]:
    """A click on a picture of ``tab``: the new query patch, the pictures of that tab that the query changes and their
    captions, the grid's geometry (where the page outlines the clicked patch), the timing (an event with fewer
    outputs is a quicker round trip). The patch grid is not among them: the page outlines the patch itself."""
    pictures = [n for n in registry.on_tab(tab) if n in REDRAW_PICTURES and "query" in registry.PICTURES[n].depends_on
                and not registry.PICTURES[n].marks_query]
    return ("query", *(x for p in pictures for x in (p, f"{p}-caption")), "grid-info", "timing")
# /redraw's outputs (the API's five pictures, each followed by its caption, then the timing).
API_REDRAW_OUTPUTS = tuple(n for p in registry.API_PICTURES for n in (p, f"{p}-caption")) + ("timing",)
# The inputs of /analyze and of the page's analyses, in the order of the handlers' arguments.
# /analyze's inputs: the API's own P, depth and layer (None unless given: the model's own), the page's others.
ANALYZE_INPUTS = ("image", "model", "api-patch-size", "api-depth", "top-k", "head-fusion", "discard-ratio",
                  "api-layer", "head", "opacity", "colormap", "query")
PAGE_ANALYZE_INPUTS = ("image", "model", "patch-size", "depth", "top-k", "head-fusion", "discard-ratio", "layer",
                       "head")
MODEL_SETTINGS_OUTPUTS = ("patch-size", "depth", "cost-meter", "layer", "head")
METER_OUTPUTS = ("cost-meter", "notice")
BUTTON_OUTPUTS = ("analyze", "notice")
BUSY = dict(interactive=False, value="Analyzing…")  # the Analyze button while any of the page's runs goes on
IDLE = dict(interactive=True, value="Analyze")


def button(state: dict, request: gr.Request | None) -> dict:
    """The Analyze button's update (:data:`BUSY` or :data:`IDLE`) in the page's language."""
    key = "analyzing" if state is BUSY else "analyze"
    return gr.update(**{**state, "value": i18n.PAGE[key][language_of(request)]})
PAGE_ANALYZE_OUTPUTS = ("banner", "stage-table", "predictions", "timing",
                        "analysis-key", "notice", "patch-size", "depth", "layer", "head", "cost-meter")


def named(fn: Callable[..., dict], names: tuple[str, ...]) -> Callable[..., tuple]:
    """``fn`` returning ``{elem_id: value}`` as gradio wants it: a value (or ``gr.skip()``) per output of ``names``."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        unknown = set(result) - set(names)
        if unknown:
            raise KeyError(f"{fn.__name__} returned outputs it does not declare: {sorted(unknown)}")
        return tuple(result.get(n, gr.skip()) for n in names)

    return wrapper


def page_event(fn: Callable[..., dict], names: tuple[str, ...]) -> Callable[..., tuple]:
    """:func:`named` for an ``always_last`` event of the page: a refusal (or a failure) is its toast and changes
    nothing, and the event ends as a success. In gradio 6.31's page an ``always_last`` event that failed never runs
    again (it stays "submitted"): one refused image stopped every later analysis of that page."""
    wrapped = named(fn, names)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return wrapped(*args, **kwargs)
        except gr.Error as exc:
            refused(_request(args, kwargs), "%s refused: %s", fn.__name__, ascii(str(exc.message)[:200]))
            gr.Warning(exc.message, title=exc.title)
            return tuple(gr.skip() for _ in names)

    return wrapper


def handler(fn: Callable) -> Callable:
    """Our errors become messages a student reads; anything else is logged and the server keeps serving.

    Pictures in the result go out as files, each in its registry's encoding (:func:`vit.ui.state.picture_file`).
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            with owned_by(*owner_of(_request(args, kwargs))):  # the files it makes count against their budgets
                return _as_files(fn(*args, **kwargs))
        except gr.Error:
            raise
        except InputError as exc:
            refused(_request(args, kwargs), "%s refused: %s", fn.__name__, exc)  # in full, paths included: the log's
            lang = _language(args, kwargs)
            raise gr.Error(exc.words(lang), title=i18n.text("check-title", lang),
                           print_exception=False) from None
        except Exception:
            log.exception("%s failed", fn.__name__)
            lang = _language(args, kwargs)
            raise gr.Error(i18n.text("server-error", lang), title=i18n.text("server-error-title", lang),
                           print_exception=False) from None

    return wrapper


LOG_QUOTA = LogQuota()  # refusals in the log, per client


def refused(request: gr.Request | None, message: str, *args) -> None:
    """A refusal's line in the server's log, within its client's quota (:class:`vit.serve.limits.LogQuota`)."""
    write, left_out = LOG_QUOTA.allow(owner_of(request)[1])
    if left_out:
        log.info("(%d more refusals of this client were left out of the log)", left_out)
    if write:
        log.info(message, *args)


def _request(args, kwargs) -> gr.Request | None:
    """A handler's ``gr.Request``, wherever gradio passed it."""
    return next((x for x in (*args, *kwargs.values()) if isinstance(x, gr.Request)), None)


def _language(args, kwargs) -> str:
    """The language of the page a handler answers."""
    return language_of(_request(args, kwargs))


def _as_files(result):
    def encode(x, name=None):
        picture = registry.PICTURES.get(name)
        encoding = picture.encoding if picture else "png"
        if isinstance(x, views.View):
            return pictures.shown(x, encoding)
        return picture_file(x, encoding) if isinstance(x, Image.Image) else x

    if isinstance(result, dict):
        return {k: encode(v, k) for k, v in result.items()}
    if isinstance(result, tuple):
        return tuple(encode(x) for x in result)
    return encode(result)


# --------------------------------------------------------------------------- the API's events


@handler
def analyze(image: object, model: str, patch_size: Number = None, depth: Number = None, top_k: Number = 5,
            head_fusion: str = "mean", discard_ratio: Number = 0.0, layer: Number = None, head: Number = 1,
            opacity: Number = DEFAULTS.opacity,
            colormap: str = DEFAULTS.cmap, query: Query = DEFAULTS.query, progress=gr.Progress(),
            request: gr.Request = None) -> tuple:
    """Run the ViT on one image and draw every view.

    Args:
        image: the photo (any JPEG/PNG/WebP/GIF/BMP/TIFF).
        model: "ViT-B/16", "ViT-B/32", "ViT-L/16", "ViT-L/32", "ViT-H/14" (or "vit_b_16" ...), or
            "ViT-Tiny shapes, trained here" ("vit_tiny_shapes": 64 px, drawn shapes, no download).
        patch_size: P in pixels, 4 to 64 (4 to 32 for the shapes model); the grid becomes
            round(224 / P) per side (round(64 / P) for the shapes model). Not given: the checkpoint's own.
        depth: how many encoder blocks to run, 1 to L. Not given: all L of the model.
        top_k: how many predictions to list, 1 to 20.
        head_fusion: how rollout and the per-layer maps fuse the heads: "mean", "max" or "min".
        discard_ratio: fraction of each row's weakest attention links rollout drops, 0 to 0.99.
        layer: the layer to inspect, 1-based (a layer past ``depth`` shows the last one run). Not given: the last.
        head: the head to inspect, 1-based.
        opacity: of the heatmaps over the image, 0 to 1.
        colormap: "cividis", "viridis", "magma" or "gray".

    Returns:
        The weights banner, the patch grid and its caption, the stage table, the rollout,
        per-head and per-layer maps and the query-patch view with their captions, the
        top-k predictions, the depth plot and the timings (in that order).
    """
    t0 = time.perf_counter()
    source, filename = inputs.image_source(image)
    setting = validate.setting(model, patch_size, depth)  # once: everything below takes the record
    native = setting.native
    top_k = min(validate.top_k(top_k), native.num_classes)  # the shapes model has 8 classes
    head_fusion = validate.head_fusion(head_fusion)
    discard_ratio = validate.discard_ratio(discard_ratio)
    layer = setting.depth if layer is None else min(validate.layer(layer, native.num_layers), setting.depth)
    display = Display(inputs.query_fraction(query), layer, validate.head(head, native.num_heads),
                      validate.opacity(opacity), inputs.colormap_name(colormap))
    a, run_s = runs.run(source, filename, setting, top_k, head_fusion, discard_ratio, progress, session_of(request))
    progress_in(progress, "en")(PROGRESS_DRAWING, "progress-drawing")  # the API's words: English
    t2 = time.perf_counter()
    out = {"banner": meter.banner_html(a), "stage-table": pictures.stage_table(a), "predictions": views.top_k(a, top_k),
           "depth-plot": registry.draw(a, "depth-plot").image}
    api = dict.fromkeys(registry.API_PICTURES, display)
    for name, (file, caption) in pictures.drawn_files(a, api, page=False).items():
        out[name], out[f"{name}-caption"] = file, caption  # drawn and encoded two at a time
    out["timing"] = runs.timing(a, run_s, t0, t2)
    out["analysis-key"] = analysis_store().put(a)
    log.info("analysed %s: %s", meter.setting_words(setting), out["timing"])
    release_memory()
    out = _as_files(out)  # each picture in its encoding, by name
    return tuple(out[k] for k in ANALYZE_OUTPUTS)


@handler
def redraw_all(key: str | None, query_x: Number = DEFAULTS.query[0], query_y: Number = DEFAULTS.query[1],
               layer: Number = None, head: Number = 1, opacity: Number = DEFAULTS.opacity,
               colormap: str = DEFAULTS.cmap, head_fusion: str = "mean", discard_ratio: Number = 0.0) -> dict:
    """Every picture of this session's last analysis again, with other display settings (no model run).

    Args:
        query_x, query_y: the query patch, as fractions of the picture's width and height (0 to 1).
        layer, head, opacity, colormap, head_fusion, discard_ratio: as for ``/analyze``.

    Returns:
        The five pictures, each followed by its caption: patch grid, query patch, rollout,
        per head, per layer; then the timing.
    """
    t0 = time.perf_counter()
    a = runs.with_options(key, head_fusion, discard_ratio)
    layer, head = layer_head(a, layer, head)
    display = Display(inputs.query_fraction((query_x, query_y)), layer, head, validate.opacity(opacity),
                      inputs.colormap_name(colormap))
    out = {}
    api = dict.fromkeys(registry.API_PICTURES, display)
    for name, (file, caption) in pictures.drawn_files(a, api, page=False).items():
        out[name], out[f"{name}-caption"] = file, caption  # drawn and encoded two at a time
    out["timing"] = pictures.redrawn(t0)
    return out


@handler
def predictions(key: str | None, top_k: Number):
    """Another top-k: read from the kept probabilities."""
    if key is None:
        return gr.skip()
    a = kept(key)
    return views.top_k(a, min(validate.top_k(top_k), max(1, len(a.probs)))) or NO_CLASSIFIER


# --------------------------------------------------------------------------- the page's events


@handler
def page_predictions(key: str | None, top_k: Number, request: gr.Request = None):
    """The page's top-k slider: another top-k, clamped to what the box shows (no toast for a typed 0 or 50)."""
    if key is None:
        return gr.skip()
    a = kept(key)
    lang = language_of(request)
    return views.top_k(a, inputs.top_k(top_k, max(1, len(a.probs))), lang) or i18n.text("no-classifier", lang)


def _auto_reason(c: costs.Cost, lang: str = "en") -> str:
    """Why a setting does not run by itself (it waits for Analyze), or ""."""
    seconds = meter.estimated_seconds(c)
    if meter.over_budget(c):
        return i18n.text("reason-too-big", lang)
    if seconds > meter.SLOW_S:
        return i18n.text("reason-slow", lang, seconds=seconds)
    if is_trained_here(c.name):
        return ""
    if models.is_hub(c.name):  # its weights' size from its parameters (float32), until they are cached
        from vit.model import hub  # noqa: PLC0415 - huggingface_hub and safetensors

        megabytes = costs.estimate(c.name).weights_bytes / 1e6  # the whole file, whatever the depth run
        if megabytes <= AUTO_DOWNLOAD_MB or hub.is_cached(c.name):
            return ""
        return i18n.text("reason-weights", lang, mb=f"{megabytes:,.0f}")
    from vit.model.checkpoints import CHECKPOINTS, cached_path  # noqa: PLC0415 - imports torch

    if not cached_path(c.name).is_file() and CHECKPOINTS[c.name].file_size_mb > AUTO_DOWNLOAD_MB:
        return i18n.text("reason-checkpoint", lang, mb=f"{CHECKPOINTS[c.name].file_size_mb:,.0f}")
    return ""


def _slider(value: Number, top: int, reset: bool = False) -> dict:
    """A 1..top slider after a run; with a single value (depth 1) it is hidden: a slider needs two ends.

    ``value`` is the control's value when the run started: while it still fits, only the range is sent, so
    a value the student chose while the run went on stays; one that no longer fits (or ``reset``) is set.
    """
    update = dict(minimum=1, maximum=max(top, 2), visible=top > 1)
    number = inputs.clamp(value, 1, top, top)
    if reset or number != value or top == 1:
        update["value"] = top if reset else number
    return gr.update(**update)


def _claim(session: Session, wanted: Shown, explicit: bool, lang: str = "en") -> tuple[int | None, str]:
    """Under the session's lock: (the run's number, "") if ``wanted`` runs now, else (None, the notice to show).

    A setting already shown or running is not run again (two triggers of one change, Enter and the box
    losing focus, run once); a slow one waits for Analyze unless ``explicit``.
    """
    with session.lock:
        if wanted == session.running:  # Enter and the box losing focus, or a blur and Analyze: it runs once
            return None, meter.running(session.shown.setting if session.shown else None, wanted.setting, lang)
        if wanted == session.shown:
            return None, ""
        reason = "" if explicit else _auto_reason(costs.estimate(wanted.setting), lang)
        if reason and session.asked:  # Analyze was pressed meanwhile (a blur and a click): its run says so
            return None, meter.running(session.shown.setting if session.shown else None, wanted.setting, lang)
        if reason:
            shown = session.shown.setting if session.shown else None
            return None, (meter.out_of_date(shown, wanted.setting, reason, lang) if shown
                          else meter.not_run(wanted.setting, reason, lang))
        session.latest = number = SESSIONS.next_number()
        session.running = wanted
        return number, ""


@handler
def page_analyze(image: object, model: str, patch_size: Number, depth: Number, top_k: Number, head_fusion: str,
                 discard_ratio: Number, layer: Number, head: Number, progress=gr.Progress(), request: gr.Request = None,
                 explicit: bool = False) -> dict:
    """The page's analysis: Analyze (``explicit``), or a new image, patch size, depth or model.

    Controls are read as they show (clamped); a setting already shown or running is not run
    again; a slow one waits for Analyze; the newest request of a session wins. Pictures are not
    drawn here: the new analysis key triggers :func:`page_redraw` with the controls as they are then.
    """
    t0 = time.perf_counter()
    if image is None:
        return {}
    session = SESSIONS.get(session_of(request))
    setting = inputs.page_setting(model, patch_size, depth)
    # A clamped value goes back to its control, so the control shows what runs; others are left alone
    # (echoing them could overwrite what the student is typing meanwhile).
    sent = {"patch-size": patch_size, "depth": depth}
    controls = {k: v for k, v in {"patch-size": setting.patch_size, "depth": setting.depth}.items() if v != sent[k]}
    wanted = Shown(inputs.image_id(image), setting)
    log.debug("page analysis asked for %s (explicit: %s, image %s)", meter.setting_words(setting), explicit,
              wanted.image)
    lang = language_of(request)
    number, notice = _claim(session, wanted, explicit, lang)
    if number is None:
        return {**controls, "notice": notice}
    top_k = inputs.top_k(top_k, setting.native.num_classes)
    progress = progress_in(progress, request)  # its words in the page's language
    try:
        source, filename = inputs.image_source(image)
        a, run_s = runs.run(source, filename, setting, top_k, validate.head_fusion(head_fusion),
                            inputs.discard_ratio(discard_ratio), progress, session_of(request),
                            still_wanted=lambda: session.wants(number), lang=language_of(request))
        if a is None or session.latest != number:  # a newer request of this session: it shows instead
            return {}
        t2 = time.perf_counter()
        before = session.shown.setting if session.shown is not None else None
        key = analysis_store().put(a)
        show(session, wanted, key)  # the analysis it showed before goes, unless another session shows it
    finally:
        with session.lock:
            if session.running == wanted and session.latest == number:
                session.running = None
    out = {**controls, **_analysed(a, key, setting, before, layer, head, top_k, lang)}
    session.timing = runs.timing_fields(a, run_s, t0, t2)
    out["timing"] = i18n.text("timing", lang, **session.timing)
    log.info("analysed %s: %s", meter.setting_words(setting), out["timing"])
    release_memory()
    return out


def _analysed(a, key: str, setting: Setting, before: Setting | None, layer, head, top_k: int,
              lang: str = "en") -> dict:
    """A new analysis's outputs on the page (its pictures follow from the new key: :func:`page_redraw`)."""
    same_model = before is not None and (before.name, before.depth) == (setting.name, setting.depth)
    return {
        "banner": meter.banner_html(a, lang), "stage-table": pictures.stage_table(a, lang),
        "predictions": views.top_k(a, top_k, lang) or i18n.text("no-classifier", lang), "analysis-key": key,
        "notice": "",
        "layer": _slider(layer, setting.depth, reset=not same_model),  # another model or depth: its last layer
        "head": _head(head, a.num_heads),
        "cost-meter": meter.cost_meter(setting, shown=True, lang=lang),
    }


def _head(value: Number, heads: int) -> dict:
    """The head slider after a run: its new range; its value only when the one sent no longer fits."""
    number = inputs.clamp(value, 1, heads, 1)
    return gr.update(maximum=heads) if number == value else gr.update(maximum=heads, value=number)


def page_analyze_now(image: object, model: str, patch_size: Number, depth: Number, top_k: Number, head_fusion: str,
                     discard_ratio: Number, layer: Number, head: Number, progress=gr.Progress(),
                     request: gr.Request = None) -> dict:
    """The Analyze button: runs whatever the setting costs (within the server's budget).

    The same parameters as :func:`page_analyze`, spelled out: gradio passes ``progress`` and
    ``request`` only to a function that names them.
    """
    return page_analyze(image, model, patch_size, depth, top_k, head_fusion, discard_ratio, layer, head,
                        progress=progress, request=request, explicit=True)


@handler
def page_redraw(key: str | None, query: Query, layer: Number, head: Number, opacity: Number, colormap: str,
                head_fusion: str, discard_ratio: Number, screen: str | bool = "", tab_on_screen: str = "patches",
                request: gr.Request = None, only: tuple[str, ...] | None = None) -> dict:
    """Any display control, a click or an arrow key, a new analysis or another tab: redraw what changed.

    No model run. Only the pictures of the tab on screen whose inputs changed are drawn and sent (``only``: of
    these names, a click's); a redraw of an analysis the browser session no longer shows, or one overtaken by a
    newer redraw, is dropped.
    """
    if key is None:
        return {}
    t0 = time.perf_counter()
    session = SESSIONS.get(session_of(request))
    number = session.redraw = SESSIONS.next_number()
    a = runs.with_options(key, head_fusion, inputs.discard_ratio(discard_ratio))
    layer = inputs.clamp(layer, 1, a.depth, a.depth)
    head = inputs.clamp(head, 1, a.num_heads, 1)
    projector, _ = inputs.screen(screen, tab_on_screen)
    display = Display(inputs.query_fraction(query), layer, head, inputs.opacity(opacity, DEFAULTS.opacity),
                      inputs.colormap_name(colormap), projector, lang=language_of(request),
                      marks=False)  # the page outlines the query's patch on the grid itself
    cell = views.query_cell(display.query, a.grid)
    out, drawn = {}, {}
    own = {n: replace(display, frame=inputs.screen(screen, tab_on_screen, n)[1])  # each picture's frame
           for n in registry.on_tab(tab_on_screen)}
    for name in registry.on_tab(tab_on_screen):
        sig = registry.signature(registry.variant_key(key, name, a.head_fusion, a.discard_ratio), name, own[name], cell)
        gone = not os.path.exists(session.sent.get(name, ""))  # pruned since: the page can no longer fetch it
        if (session.drawn.get(name) != sig or gone) and (only is None or name in only):
            drawn[name] = sig
    for name, (file, caption) in pictures.drawn_files(a, {n: own[n] for n in drawn}).items():
        out[name], out[f"{name}-caption"] = file, caption
        session.sent[name] = file["value"]
    if "patch-grid" in own:  # where the page outlines the query's patch
        drawn["grid-info"] = (key, cell)
        if session.drawn.get("grid-info") != drawn["grid-info"]:
            out["grid-info"] = pictures.grid_info(a, cell)
    if not out or session.redraw != number or session.key not in (None, key):
        return {}  # nothing changed, or a newer redraw or analysis of this session shows instead
    session.drawn.update(drawn)
    run = i18n.text("timing", display.lang, **session.timing) if session.timing and session.key == key else ""
    out["timing"] = pictures.redrawn(t0, run, display.lang)
    return out


def click(key: str | None, clicked: str):
    """A click on a picture of the model's view: the patch the page says was clicked (vit/ui/page.js maps the
    pointer through the picture's cells) becomes the query, as the fractions (x, y) of its centre."""
    a = analysis_store().get(key)
    cell = None if a is None else inputs.clicked_cell(clicked, *a.grid)
    if cell is None:
        return gr.skip()
    rows, cols = a.grid
    return (cell[1] + 0.5) / cols, (cell[0] + 0.5) / rows


@handler
def click_redraw(key: str | None, which: str, query: Query, layer: Number, head: Number, opacity: Number,
                 colormap: str, head_fusion: str, discard_ratio: Number, screen: str, tab_on_screen: str,
                 clicked: str, request: gr.Request = None) -> dict:
    """A click on a picture: the new query patch and the pictures drawn for it, in one round trip.

    The picture's own tab is the one on screen (it was clicked): its pictures are the ones redrawn."""
    tab = registry.PICTURES[which].tab if which in registry.PICTURES else tab_on_screen
    clicked = click(key, clicked)
    if not isinstance(clicked, tuple):
        return {}
    out = page_redraw(key, clicked, layer, head, opacity, colormap, head_fusion, discard_ratio, screen, tab,
                      request=request, only=click_outputs(tab))
    return {"query": clicked, **(out if isinstance(out, dict) else {})}


MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}  # (rows, columns) per arrow key


def move(key: str | None, query: Query, direction: str):
    """An arrow key (or a presenter's clicker): the query patch moves one patch."""
    a = analysis_store().get(key)
    if a is None:
        return gr.skip()
    rows, cols = a.grid
    r, c = views.query_cell(inputs.query_fraction(query), a.grid)
    dr, dc = MOVES.get(direction, (0, 0))
    r, c = min(max(r + dr, 0), rows - 1), min(max(c + dc, 0), cols - 1)
    return ((c + 0.5) / cols, (r + 0.5) / rows)


def page_closed(request: gr.Request = None) -> None:
    """``demo.unload``: the page was closed or reloaded; its run stops at the next layer, its analyses go."""
    end_session(session_of(request))


def analysis_started(model: str, patch_size: Number, depth: Number, request: gr.Request = None,
                     explicit: bool = False) -> dict:
    """The first step of each of the page's analysis chains (Analyze, a new image, P, depth or model): the button
    says "Analyzing…" and is disabled; Analyze's own run says so in the notice too."""
    session = SESSIONS.get(session_of(request))
    with session.lock:
        session.busy += 1
        session.asked += explicit
        shown = session.shown.setting if session.shown else None
    out = {"analyze": button(BUSY, request)}
    try:
        wanted = inputs.page_setting(model, patch_size, depth)
    except InputError:
        return out  # the run itself says what is wrong
    if explicit and wanted != shown:
        out["notice"] = meter.running(shown, wanted, language_of(request))
    return out


def analyze_started(model: str, patch_size: Number, depth: Number, request: gr.Request = None) -> dict:
    """The Analyze button's chain: :func:`analysis_started`, with the notice."""
    return analysis_started(model, patch_size, depth, request=request, explicit=True)


def analysis_ended(model: str | None = None, patch_size: Number = None, depth: Number = None,
                   request: gr.Request = None, explicit: bool = False) -> dict:
    """The last step of each analysis chain: the button comes back only when no other chain is still under way
    (a blur's chain that ends while Analyze's run goes on leaves it disabled, and the notice says "running").

    It comes back, too, once nothing of the page runs, waits or was asked for: gradio fires a replaced image's change
    twice (the old value cleared, the new one set), which starts its chain twice while the run, an ``always_last``
    event, may run and end once (a refused file then left the button "Analyzing…" for good).

    The last chain to end restates the notice from the session as it is then, for the controls (``model``,
    ``patch_size``, ``depth``) as they are: an earlier step's "Running…" answered while the run went on could
    otherwise land after the run's own "" and stay over pictures that nothing is changing."""
    session = SESSIONS.get(session_of(request))
    with session.lock:
        session.busy = max(session.busy - 1, 0)
        session.asked = max(session.asked - explicit, 0)
        if session.running is None and not session.asked:  # nothing of this page runs, waits or was asked for
            session.busy = 0
        running, shown = session.running, session.shown
        busy = session.busy
    lang = language_of(request)
    if busy == 0:
        out = {"analyze": button(IDLE, request)}
        if model is not None and running is None:
            try:
                out["notice"] = _idle_notice(shown.setting if shown else None,
                                             inputs.page_setting(model, patch_size, depth), lang)
            except InputError:
                out["notice"] = ""  # the meter says what is wrong (settings_changed)
        return out
    out = {"analyze": button(BUSY, request)}
    if running is not None:
        out["notice"] = meter.running(shown.setting if shown else None, running.setting, lang)
    return out


def _idle_notice(shown: Setting | None, setting: Setting, lang: str) -> str:
    """The notice while ``setting`` (the controls') is not running: "" where the pictures show it, else why not."""
    return meter.out_of_date(shown, setting, _auto_reason(costs.estimate(setting), lang), lang)


def analyze_ended(model: str | None = None, patch_size: Number = None, depth: Number = None,
                  request: gr.Request = None) -> dict:
    """The Analyze button's chain: :func:`analysis_ended`."""
    return analysis_ended(model, patch_size, depth, request=request, explicit=True)


def settings_changed(model: str, patch_size: Number, depth: Number, request: gr.Request = None) -> dict:
    """The meter and the out-of-date notice while the setting is being chosen (no model run)."""
    try:
        setting = inputs.page_setting(model, patch_size, depth)
    except InputError as exc:
        return {"cost-meter": f"⚠ {exc}", "notice": ""}
    lang = language_of(request)
    session = SESSIONS.get(session_of(request))
    shown = session.shown.setting if session.shown else None
    running = session.running.setting if session.running is not None else None
    # What the controls say is running, or Analyze was pressed and its run has not started yet (it runs them).
    if running == setting or (running is None and session.asked):
        return {"cost-meter": meter.cost_meter(setting, lang=lang), "notice": meter.running(shown, setting, lang)}
    reason = _auto_reason(costs.estimate(setting), lang)
    # A setting that runs by itself runs once the control is let go (its run says "Running…" then): no "Out of date …
    # press Analyze" over the pictures meanwhile, for the moment before that run starts.
    notice = meter.out_of_date(shown, setting, reason, lang) if reason else ""
    return {"cost-meter": meter.cost_meter(setting, shown=shown == setting, lang=lang), "notice": notice}


@handler
def drawn(data: str, request: gr.Request = None):
    """A finished stroke, or an undo: the page's canvas (``inputs.drawing``) becomes the image, and the image's own
    chain analyses it as it does an upload: at once where the setting is quick (the shapes model), else on Analyze.
    It is kept with the uploads, under the same rules (:func:`vit.ui.state.keep_drawing`), not as a picture."""
    return keep_drawing(inputs.drawing(data))


@handler
def model_settings(model: str, head: Number, request: gr.Request = None) -> dict:
    """A new model: its own patch size and depth, the sliders' ranges, and the cost meter. With no analysis on the
    page, the Layer and Head sliders take the new model's ranges too (else they stay the shown analysis's until the
    new one comes: :func:`_analysed`)."""
    own = validate.setting(model)  # the family at its own patch size and depth
    P, L = own.patch_size, own.depth
    lo, hi = patch_size_range(own.name)
    lang = language_of(request)
    out = {
        "patch-size": gr.update(value=P, minimum=lo, maximum=hi, info=i18n.text("patch-size-info", lang, P=P)),
        "depth": gr.update(maximum=L, value=L, info=i18n.text("depth-info", lang, L=L)),
        "cost-meter": meter.cost_meter(own, lang=lang),
    }
    if SESSIONS.get(session_of(request)).shown is None:
        out.update({"layer": _slider(None, L, reset=True), "head": _head(head, own.native.num_heads)})
    return out


def offer_button(banner: str) -> dict:
    """Show the "try the model trained here" button while the banner offers it."""
    return gr.update(visible=isinstance(banner, str) and "data-offer=" in banner)


def use_trained_model() -> str:
    """The offer's button: switch the model dropdown to the model trained here (which then runs)."""
    return meter.TRAINED_MODEL


@handler
def download(key: str | None, which: str, query: Query, layer: Number, head: Number, opacity: Number, colormap: str,
             head_fusion: str, discard_ratio: Number, request: gr.Request = None) -> str:
    """One picture with its title, caption and legend, as one PNG file to save (the page's controls, clamped)."""
    a = runs.with_options(key, head_fusion, inputs.discard_ratio(discard_ratio))
    layer, head = inputs.clamp(layer, 1, a.depth, a.depth), inputs.clamp(head, 1, a.num_heads, 1)
    display = Display(inputs.query_fraction(query), layer, head, inputs.opacity(opacity, DEFAULTS.opacity),
                      inputs.colormap_name(colormap), lang=language_of(request))
    view = registry.draw(a, which, display, weights=pictures.model_weights(a))
    with views.drawing_language(display.lang):
        picture = views.captioned(view)
    return str(picture_folder().write(lambda path: picture.save(path, format="PNG", compress_level=1), ".png",
                                      readable=f"{which}-{a.model}-P{a.patch_size}-L{layer}"))


LANGUAGE_OUTPUTS = ("lang", "banner", "stage-table", "predictions", "cost-meter", "patch-size", "depth", "examples",
                    "start-examples")
EXAMPLES = sorted(p for p in ASSETS.glob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))  # the examples row


def example_names(lang: str = "en") -> list[str]:
    """The examples' names under their pictures, in ``lang``."""
    return [i18n.text(f"example-{p.stem}", lang) for p in EXAMPLES]


def page_language(key: str | None, model: str, patch_size: Number, depth: Number, top_k: Number, shown: str = "",
                  request: gr.Request = None) -> dict:
    """The page loaded, or its language switched: the text the server wrote, again in the page's language
    (the components' own words the browser translates itself), and the switch set to it. No model run, no picture.

    ``shown``: the language the page shows, as its script chose it (vit/ui/page.js: the address's ``?lang=``, the
    switch's last choice, the browser's); the request's own (its cookie) where it says nothing."""
    lang = shown if shown in i18n.LANGUAGES else language_of(request)
    try:
        setting = inputs.page_setting(model, patch_size, depth)
        native = validate.setting(model)
    except InputError:
        return {}
    out = {"lang": lang, "cost-meter": meter.cost_meter(setting, lang=lang),
           "patch-size": gr.update(info=i18n.text("patch-size-info", lang, P=native.patch_size)),
           "depth": gr.update(info=i18n.text("depth-info", lang, L=native.depth))}
    for examples in ("examples", "start-examples"):  # gr.Examples' labels are not gr.I18n's to translate
        out[examples] = gr.Dataset(sample_labels=example_names(lang))
    a = analysis_store().get(key) if key is not None else None
    if a is None:
        return {**out, "banner": startup.startup_banner(lang)}
    top = views.top_k(a, inputs.top_k(top_k, max(1, len(a.probs))), lang)
    out.update({"banner": meter.banner_html(a, lang), "stage-table": pictures.stage_table(a, lang),
                "predictions": top or i18n.text("no-classifier", lang),
                "cost-meter": meter.cost_meter(setting, shown=True, lang=lang)})
    return out

