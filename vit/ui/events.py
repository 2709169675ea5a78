"""One handler per action, returning ``{elem_id: value}``. Analyze, redraw and top-k each read their inputs two
ways (:class:`Reading`): strictly for the API, as the controls show them for the page."""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import gradio as gr
from PIL import Image

from vit import cost as costs
from vit import i18n, validate
from vit.config import native_config, patch_size_range
from vit.errors import InputError
from vit.model.families import ASSETS, is_trained_here
from vit.serve.files import owned_by
from vit.serve.limits import LogQuota
from vit.ui import inputs, meter, models, pictures, runs, startup
from vit.ui.inputs import Number, Query
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
from vit.views import base, draw, patches, registry
from vit.views.registry import Display

log = logging.getLogger("vit.app")

DEFAULTS = Display()  # the display before anyone changes it (vit.views.registry: defined there once)
AUTO_DOWNLOAD_MB = 400  # larger checkpoints (ViT-L, ViT-H) download only when Analyze is pressed
BUSY = dict(interactive=False, value="Analyzing…")  # the Analyze button while any of the page's runs goes on
IDLE = dict(interactive=True, value="Analyze")

# The API's outputs in the order its clients receive them; /analyze's key is a gr.State (not sent to clients).
API_REDRAW_OUTPUTS = (*(n for p in registry.API_PICTURES for n in (p, f"{p}-caption")), "timing")
ANALYZE_OUTPUTS = ("banner", "stage-table", "predictions", "depth-plot", *API_REDRAW_OUTPUTS, "analysis-key")
# /analyze's inputs in its parameters' order: the api-* ones are None unless given (the model's own).
ANALYZE_INPUTS = ("image", "model", "api-patch-size", "api-depth", "top-k", "head-fusion", "discard-ratio",
                  "api-layer", "head", "opacity", "colormap", "query")
PAGE_ANALYZE_INPUTS = ("image", "model", "patch-size", "depth", "top-k", "head-fusion", "discard-ratio", "layer",
                       "head")
PAGE_ANALYZE_OUTPUTS = ("banner", "stage-table", "predictions", "timing", "analysis-key", "notice", "patch-size",
                        "depth", "layer", "head", "cost-meter", "offer")
REDRAW_PICTURES = registry.ANALYSIS_PICTURES  # the depth plot too: it is drawn to fill its frame
REDRAW_OUTPUTS = (*(n for p in REDRAW_PICTURES for n in (p, f"{p}-caption")), "grid-info", "timing")
MODEL_SETTINGS_OUTPUTS = ("patch-size", "depth", "cost-meter", "layer", "head")
METER_OUTPUTS = ("cost-meter", "notice")
BUTTON_OUTPUTS = ("analyze", "notice")


def click_outputs(tab: str) -> tuple[str, ...]:
    """A click's outputs on ``tab`` (not the patch grid: the page outlines the clicked patch itself)."""
    pictures = [n for n in registry.on_tab(tab) if n in REDRAW_PICTURES and "query" in registry.PICTURES[n].depends_on
                and not registry.PICTURES[n].marks_query]
    return ("query", *(x for p in pictures for x in (p, f"{p}-caption")), "grid-info", "timing")


def button(state: dict, request: gr.Request | None) -> dict:
    """The Analyze button's update (:data:`BUSY` or :data:`IDLE`) in the page's language."""
    key = "analyzing" if state is BUSY else "analyze"
    return gr.update(**{**state, "value": i18n.PAGE[key][language_of(request)]})


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
    """:func:`named` whose refusal is a toast, not a failure (gradio never reruns a failed ``always_last`` event)."""
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
    """Our errors become a student's message, others are logged; pictures in the result go out as files."""

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
    return language_of(_request(args, kwargs))


def _as_files(result):
    def encode(x, name=None):
        picture = registry.PICTURES.get(name)
        encoding = picture.encoding if picture else "png"
        if isinstance(x, base.View):
            return pictures.shown(x, encoding)
        return picture_file(x, encoding) if isinstance(x, Image.Image) else x

    if isinstance(result, dict):
        return {k: encode(v, k) for k, v in result.items()}
    if isinstance(result, tuple):
        return tuple(encode(x) for x in result)
    return encode(result)


@dataclass(frozen=True)
class Reading:
    """The API's inputs strictly, refused by name (:data:`STRICT`); the page's clamped as its controls show them."""

    page: bool

    def setting(self, model: str, patch_size: Number, depth: Number) -> Setting:
        return validate.setting(model, patch_size, depth, clamp=self.page)

    def top_k(self, value: Number, classes: int) -> int:
        return inputs.top_k(value, classes) if self.page else min(validate.top_k(value), classes)

    def discard_ratio(self, value: Number) -> float:
        return inputs.discard_ratio(value) if self.page else validate.discard_ratio(value)

    def layer_head(self, layer: Number, head: Number, depth: int, heads: int, layers: int) -> tuple[int, int]:
        """1-based (layer, head) of a run of ``depth`` of the model's ``layers``; a layer past it shows the last."""
        if self.page:
            return inputs.clamp(layer, 1, depth, depth), inputs.clamp(head, 1, heads, 1)
        return (depth if layer is None else min(validate.layer(layer, layers), depth)), validate.head(head, heads)

    def display(self, query: Query, layer: Number, head: Number, opacity: Number, colormap: str, depth: int,
                heads: int, layers: int, request: gr.Request | None, **more) -> Display:
        layer, head = self.layer_head(layer, head, depth, heads, layers)
        opacity = inputs.opacity(opacity, DEFAULTS.opacity) if self.page else validate.opacity(opacity)
        return Display(inputs.query_fraction(query), layer, head, opacity, inputs.colormap_name(colormap),
                       lang=self.language(request), **more)

    def language(self, request: gr.Request | None) -> str:
        return language_of(request) if self.page else "en"


STRICT, PAGE = Reading(page=False), Reading(page=True)


def _predictions(a, k: int, lang: str) -> dict | str:
    return patches.top_k(a, k, lang) or i18n.text("no-classifier", lang)  # a backbone has no classes to list


def _files(a, displays: dict[str, Display], page: bool) -> dict:
    """Each picture of ``displays`` drawn and encoded (:func:`vit.ui.pictures.drawn_files`), then its caption."""
    out = {}
    for name, (file, caption) in pictures.drawn_files(a, displays, page=page).items():
        out[name], out[f"{name}-caption"] = file, caption
    return out


@handler
def analysis(reading: Reading, image: object, model: str, patch_size: Number, depth: Number, top_k: Number,
             head_fusion: str, discard_ratio: Number, layer: Number, head: Number, opacity: Number = DEFAULTS.opacity,
             colormap: str = DEFAULTS.cmap, query: Query = DEFAULTS.query, progress=None, request: gr.Request = None,
             explicit: bool = False) -> dict:
    """Run the ViT and keep the analysis. The page's run is its session's (:func:`_claim`): a slow one waits for
    Analyze, the newest request wins."""
    t0 = time.perf_counter()
    if image is None and reading.page:
        return {}  # the image was cleared
    lang = reading.language(request)
    setting = reading.setting(model, patch_size, depth)
    native = setting.native
    top_k = reading.top_k(top_k, native.num_classes)  # the shapes model has 8 classes
    head_fusion, discard_ratio = validate.head_fusion(head_fusion), reading.discard_ratio(discard_ratio)
    out, session, number = {}, None, None
    if reading.page:
        # Only a clamped value goes back: echoing the others could overwrite what the student is typing meanwhile.
        sent = {"patch-size": patch_size, "depth": depth}
        out = {k: v for k, v in {"patch-size": setting.patch_size, "depth": setting.depth}.items() if v != sent[k]}
        session, wanted = SESSIONS.get(session_of(request)), Shown(inputs.image_id(image), setting)
        log.debug("page analysis asked for %s (explicit: %s, image %s)", meter.setting_words(setting), explicit,
                  wanted.image)
        number, notice = _claim(session, wanted, explicit, lang)
        if number is None:
            return {**out, "notice": notice}
    else:  # every value checked before the model runs
        display = reading.display(query, layer, head, opacity, colormap, setting.depth, native.num_heads,
                                  native.num_layers, request)
    progress = progress_in(progress, lang)
    try:
        source, filename = inputs.image_source(image)
        a, run_s = runs.run(source, filename, setting, top_k, head_fusion, discard_ratio, progress,
                            session_of(request), None if session is None else lambda: session.wants(number), lang)
        if a is None or (session is not None and session.latest != number):
            return {}  # a newer request of this session: it shows instead
        t2 = time.perf_counter()
        key = analysis_store().put(a)
        if session is not None:
            before = session.shown.setting if session.shown is not None else None
            show(session, wanted, key)  # the analysis it showed before goes, unless another session shows it
    finally:
        if session is not None:
            with session.lock:
                if session.running == wanted and session.latest == number:
                    session.running = None
    out.update({"banner": meter.banner_html(a, lang), "stage-table": pictures.stage_table(a, lang),
                "predictions": _predictions(a, top_k, lang), "analysis-key": key})
    if session is not None:
        out.update(_analysed(a, setting, before, layer, head, lang))
    else:
        progress(PROGRESS_DRAWING, "progress-drawing")
        out["depth-plot"] = registry.draw(a, "depth-plot").image
        out.update(_files(a, dict.fromkeys(registry.API_PICTURES, display), page=False))  # two at a time
    timing = runs.timing_fields(a, run_s, t0, t2)
    if session is not None:
        session.timing = timing  # a redraw writes the line again, in the page's language then
    out["timing"] = i18n.text("timing", lang, **timing)
    log.info("analysed %s: %s", meter.setting_words(setting), out["timing"])
    release_memory()
    return out


def analyze(image: object, model: str, patch_size: Number = None, depth: Number = None, top_k: Number = 5,
            head_fusion: str = "mean", discard_ratio: Number = 0.0, layer: Number = None, head: Number = 1,
            opacity: Number = DEFAULTS.opacity, colormap: str = DEFAULTS.cmap, query: Query = DEFAULTS.query,
            progress=gr.Progress(), request: gr.Request = None) -> tuple:
    """Run the ViT on one image and draw every view (``/analyze``: :data:`ANALYZE_OUTPUTS`, in that order).

    Args:
        image: the photo (any JPEG/PNG/WebP/GIF/BMP/TIFF).
        model: "ViT-B/16", "ViT-B/32", "ViT-L/16", "ViT-L/32", "ViT-H/14" (or "vit_b_16" ...), or
            "ViT-Tiny shapes, trained here" ("vit_tiny_shapes": 64 px, drawn shapes, no download).
        patch_size: P in pixels, 4 to 64 (4 to 32 for the shapes model). Not given: the checkpoint's own.
        depth: how many encoder blocks to run, 1 to L. Not given: all L of the model.
        top_k: how many predictions to list, 1 to 20.
        head_fusion: how rollout and the per-layer maps fuse the heads: "mean", "max" or "min".
        discard_ratio: fraction of each row's weakest attention links rollout drops, 0 to 0.99.
        layer: the layer to inspect, 1-based (a layer past ``depth`` shows the last one run). Not given: the last.
        head: the head to inspect, 1-based.
        opacity: of the heatmaps over the image, 0 to 1.
        colormap: "cividis", "viridis", "magma" or "gray".
    """
    out = analysis(STRICT, image, model, patch_size, depth, top_k, head_fusion, discard_ratio, layer, head, opacity,
                   colormap, query, progress, request)
    return tuple(out[k] for k in ANALYZE_OUTPUTS)


def page_analyze(image: object, model: str, patch_size: Number, depth: Number, top_k: Number, head_fusion: str,
                 discard_ratio: Number, layer: Number, head: Number, explicit: bool = False, progress=gr.Progress(),
                 request: gr.Request = None) -> dict:
    """The page's analysis; gradio gives ``progress`` and ``request`` at their places: right after the page's inputs."""
    return analysis(PAGE, image, model, patch_size, depth, top_k, head_fusion, discard_ratio, layer, head,
                    progress=progress, request=request, explicit=explicit)


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

        megabytes = costs.checkpoint_bytes(c.name) / 1e6  # the whole file, whatever the depth run
        if megabytes <= AUTO_DOWNLOAD_MB or hub.is_cached(c.name):
            return ""
        return i18n.text("reason-weights", lang, mb=f"{megabytes:,.0f}")
    from vit.model.checkpoints import CHECKPOINTS, cached_path  # noqa: PLC0415 - imports torch

    if not cached_path(c.name).is_file() and CHECKPOINTS[c.name].file_size_mb > AUTO_DOWNLOAD_MB:
        return i18n.text("reason-checkpoint", lang, mb=f"{CHECKPOINTS[c.name].file_size_mb:,.0f}")
    return ""


def _claim(session: Session, wanted: Shown, explicit: bool, lang: str = "en") -> tuple[int | None, str]:
    """Under the session's lock: (the run's number, "") if ``wanted`` runs now, else (None, the notice to show)."""
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


def _analysed(a, setting: Setting, before: Setting | None, layer: Number, head: Number, lang: str = "en") -> dict:
    """The page's own outputs for a new analysis: the notice cleared, the sliders' ranges, the meter, the offer."""
    same_model = before is not None and (before.name, before.depth) == (setting.name, setting.depth)
    return {
        "notice": "",
        "layer": _slider(layer, setting.depth, reset=not same_model),  # another model or depth: its last layer
        "head": _head(head, a.num_heads),
        "cost-meter": meter.cost_meter(setting, shown=True, lang=lang),
        "offer": gr.update(visible=meter.offers_trained(a)),  # the model trained here, beside the banner
    }


def _slider(value: Number, top: int, reset: bool = False) -> dict:
    """A 1..top slider after a run (hidden for a single value: a slider needs two ends). ``value`` is the control's
    when the run started: while it still fits, only the range is sent (a value chosen meanwhile stays)."""
    update = dict(minimum=1, maximum=max(top, 2), visible=top > 1)
    number = inputs.clamp(value, 1, top, top)
    if reset or number != value or top == 1:
        update["value"] = top if reset else number
    return gr.update(**update)


def _head(value: Number, heads: int) -> dict:
    """The head slider after a run: its new range; its value only when the one sent no longer fits."""
    number = inputs.clamp(value, 1, heads, 1)
    return gr.update(maximum=heads) if number == value else gr.update(maximum=heads, value=number)


@handler
def redraw(reading: Reading, key: str | None, query: Query, layer: Number, head: Number, opacity: Number,
           colormap: str, head_fusion: str, discard_ratio: Number, screen: str | bool = "", tab: str = "patches",
           request: gr.Request = None, only: tuple[str, ...] | None = None) -> dict:
    """``key``'s pictures again with other display settings (no model run): the API's all, the page's changed ones."""
    if key is None and reading.page:
        return {}
    t0 = time.perf_counter()
    a = runs.with_options(key, head_fusion, reading.discard_ratio(discard_ratio))
    projector, _ = inputs.screen(screen, tab)
    display = reading.display(query, layer, head, opacity, colormap, a.depth, a.num_heads,
                              native_config(a.model).num_layers, request, projector=projector,
                              marks=not reading.page)  # the page outlines the query's patch on the grid itself
    if not reading.page:
        return {**_files(a, dict.fromkeys(registry.API_PICTURES, display), page=False), "timing": pictures.redrawn(t0)}
    session = SESSIONS.get(session_of(request))
    number = session.redraw = SESSIONS.next_number()
    cell = base.query_cell(display.query, a.grid)
    own = {n: replace(display, frame=inputs.screen(screen, tab, n)[1]) for n in registry.on_tab(tab)}  # its frame
    drawn = {}
    for name in own:
        sig = registry.signature(registry.variant_key(key, name, a.head_fusion, a.discard_ratio), name, own[name], cell)
        gone = not os.path.exists(session.sent.get(name, ""))  # pruned since: the page can no longer fetch it
        if (session.drawn.get(name) != sig or gone) and (only is None or name in only):
            drawn[name] = sig
    out = _files(a, {n: own[n] for n in drawn}, page=True)
    for name in drawn:
        session.sent[name] = out[name]["value"]
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


def redraw_all(key: str | None, query_x: Number = DEFAULTS.query[0], query_y: Number = DEFAULTS.query[1],
               layer: Number = None, head: Number = 1, opacity: Number = DEFAULTS.opacity,
               colormap: str = DEFAULTS.cmap, head_fusion: str = "mean", discard_ratio: Number = 0.0,
               request: gr.Request = None) -> dict:
    """Every picture of this session's last analysis again, with other display settings (``/redraw``, no model run).

    Args:
        query_x, query_y: the query patch, as fractions of the picture's width and height (0 to 1).
        layer, head, opacity, colormap, head_fusion, discard_ratio: as for ``/analyze``.
    """
    return redraw(STRICT, key, (query_x, query_y), layer, head, opacity, colormap, head_fusion, discard_ratio,
                  request=request)


def page_redraw(key: str | None, query: Query, layer: Number, head: Number, opacity: Number, colormap: str,
                head_fusion: str, discard_ratio: Number, screen: str | bool = "", tab_on_screen: str = "patches",
                request: gr.Request = None, only: tuple[str, ...] | None = None) -> dict:
    """Any display control, a click or an arrow key, a new analysis or another tab: redraw what changed."""
    return redraw(PAGE, key, query, layer, head, opacity, colormap, head_fusion, discard_ratio, screen, tab_on_screen,
                  request=request, only=only)


@handler
def top_classes(reading: Reading, key: str | None, value: Number, request: gr.Request = None):
    """Another top-k, read from the kept probabilities (no model run)."""
    if key is None:
        return gr.skip()
    a = kept(key)
    return _predictions(a, reading.top_k(value, max(1, len(a.probs))), reading.language(request))


def predictions(key: str | None, top_k: Number, request: gr.Request = None):
    """``/top_k``: another top-k of this session's last analysis, 1 to 20."""
    return top_classes(STRICT, key, top_k, request)


def page_predictions(key: str | None, top_k: Number, request: gr.Request = None):
    """The page's top-k slider, clamped to what its box shows (no toast for a typed 0 or 50)."""
    return top_classes(PAGE, key, top_k, request)


def click(key: str | None, clicked: str):
    """The clicked patch (as vit/ui/page.js maps it) becomes the query: the fractions (x, y) of its centre."""
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
    """A click on a picture: the new query and its tab's pictures drawn for it, in one round trip."""
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
    r, c = base.query_cell(inputs.query_fraction(query), a.grid)
    dr, dc = MOVES.get(direction, (0, 0))
    r, c = min(max(r + dr, 0), rows - 1), min(max(c + dc, 0), cols - 1)
    return ((c + 0.5) / cols, (r + 0.5) / rows)


def page_closed(request: gr.Request = None) -> None:
    """``demo.unload``: the page was closed or reloaded; its run stops at the next layer, its analyses go."""
    end_session(session_of(request))


def analysis_started(model: str, patch_size: Number, depth: Number, explicit: bool = False,
                     request: gr.Request = None) -> dict:
    """First step of each analysis chain: the button is disabled; Analyze's own run (``explicit``) says so too."""
    session = SESSIONS.get(session_of(request))
    with session.lock:
        session.busy += 1
        session.asked += explicit
        shown = session.shown.setting if session.shown else None
    out = {"analyze": button(BUSY, request)}
    try:
        wanted = validate.setting(model, patch_size, depth, clamp=True)
    except InputError:
        return out  # the run itself says what is wrong
    if explicit and wanted != shown:
        out["notice"] = meter.running(shown, wanted, language_of(request))
    return out


def analysis_ended(model: str | None = None, patch_size: Number = None, depth: Number = None, explicit: bool = False,
                   request: gr.Request = None) -> dict:
    """Last step of each chain: the button comes back once nothing runs or waits (a replaced image fires twice); the
    notice is restated, as an earlier "Running…" could land after the run's own "" and stay."""
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
                                             validate.setting(model, patch_size, depth, clamp=True), lang)
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


def settings_changed(model: str, patch_size: Number, depth: Number, request: gr.Request = None) -> dict:
    """The meter and the out-of-date notice while the setting is being chosen (no model run)."""
    try:
        setting = validate.setting(model, patch_size, depth, clamp=True)
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
    """A finished stroke, or an undo: the canvas becomes the image, kept with the uploads."""
    return keep_drawing(inputs.drawing(data))


@handler
def model_settings(model: str, head: Number, request: gr.Request = None) -> dict:
    """A new model: its own P and depth, the sliders' ranges, the meter; Layer's and Head's too if none is shown."""
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


def use_trained_model() -> str:
    """The offer's button: switch the model dropdown to the model trained here (which then runs)."""
    return meter.TRAINED_MODEL


@handler
def download(key: str | None, which: str, query: Query, layer: Number, head: Number, opacity: Number, colormap: str,
             head_fusion: str, discard_ratio: Number, request: gr.Request = None) -> str:
    """One picture with its title, caption and legend, as one PNG file to save (the page's controls, clamped)."""
    a = runs.with_options(key, head_fusion, inputs.discard_ratio(discard_ratio))
    display = PAGE.display(query, layer, head, opacity, colormap, a.depth, a.num_heads, a.depth, request)
    view = registry.draw(a, which, display, weights=pictures.model_weights(a))
    with draw.language(display.lang):
        picture = base.captioned(view)
    return str(picture_folder().write(lambda path: picture.save(path, format="PNG", compress_level=1), ".png",
                                      readable=f"{which}-{a.model}-P{a.patch_size}-L{display.layer}"))


LANGUAGE_OUTPUTS = ("lang", "banner", "stage-table", "predictions", "cost-meter", "patch-size", "depth", "examples",
                    "start-examples")
EXAMPLES = sorted(p for p in ASSETS.glob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))  # the examples row


def example_names(lang: str = "en") -> list[str]:
    return [i18n.text(f"example-{p.stem}", lang) for p in EXAMPLES]


def page_language(key: str | None, model: str, patch_size: Number, depth: Number, top_k: Number, shown: str = "",
                  request: gr.Request = None) -> dict:
    """The page loaded or its language switched: the server's text again in ``shown`` (page.js's choice)."""
    lang = shown if shown in i18n.LANGUAGES else language_of(request)
    try:
        setting = validate.setting(model, patch_size, depth, clamp=True)
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
    out.update({"banner": meter.banner_html(a, lang), "stage-table": pictures.stage_table(a, lang),
                "predictions": _predictions(a, PAGE.top_k(top_k, max(1, len(a.probs))), lang),
                "cost-meter": meter.cost_meter(setting, shown=True, lang=lang)})
    return out

