"""The controls (the sidebar, the banner, the view controls above the tabs) and their events, the API's too."""

from __future__ import annotations

import gradio as gr

from vit import i18n, validate
from vit.config import DISPLAY_NAMES, MAX_PATCH_SIZE, MIN_PATCH_SIZE, PRESETS
from vit.ui import events, inputs, meter, models, startup
from vit.ui.events import EXAMPLES
from vit.ui.lang import t
from vit.ui.tabs.parts import DISPLAY, MODEL_WAITERS, REDRAW_CONCURRENCY, on, outputs, private, redraw
from vit.validate import HEAD_FUSIONS, MAX_DISCARD_RATIO, MAX_TOP_K
from vit.views.draw import COLORMAPS
from vit.views.registry import Display

DEFAULT = next(k for k, v in DISPLAY_NAMES.items() if v == startup.DEFAULT_MODEL)  # the family shown first
DIRECTIONS = ("up", "down", "left", "right")  # the arrow keys' hidden buttons (vit/ui/page.js clicks them)
STARTUP_TICK_S = 1.0  # how often a Space's page asks how far the startup download is
SIDEBAR_WIDTH, MAIN_WIDTH = 300, 320  # px, the columns' narrowest
PEN_WIDTHS = [4, 8, 16]  # px on the 256 px canvas: 1, 2 and 4 px in the shapes model's 64 px drawings
LANGUAGE_CHOICES = [("English", "en"), ("中文", "zh")]  # each in its own language, as a switch should be


# The page's screen (vit.views.registry.SCREENS), "+projector" in projector mode.
_SCREEN = ("((on) => (innerWidth <= 640 ? 'phone' : innerWidth >= 1600 && innerHeight >= 900 ? 'wide' : 'laptop')"
           " + (on ? '+projector' : ''))")
SCREEN_ON_LOAD = ("() => { const on = new URLSearchParams(location.search).has('projector'); "
                  f"document.body.classList.toggle('projector', on); return [{_SCREEN}(on), on]; }}")
# The page's language, as vit/ui/page.js chooses it (it may not have run yet when the page's load event starts).
PAGE_LANGUAGE_JS = ("((asked, kept) => asked === 'zh' || asked === 'en' ? asked : kept === 'zh' || kept === 'en' ? kept"
                    " : (navigator.language || 'en').toLowerCase().startsWith('zh') ? 'zh' : 'en')"
                    "(new URLSearchParams(location.search).get('lang'), "
                    "(() => { try { return localStorage.getItem('vit-anatomy-lang'); } catch (e) { return null; } })()"
                    ")")
PROJECTOR_JS = f"(on) => {{ document.body.classList.toggle('projector', Boolean(on)); return [{_SCREEN}(on)]; }}"


def _examples(c: dict, label: str, elem_id: str = "examples") -> gr.Dataset:
    """The pictures in assets/, a click away (named in the page's language by :func:`events.page_language`)."""
    return gr.Examples(examples=[[str(p)] for p in EXAMPLES], inputs=[c["image"]], label=t(label),
                       example_labels=events.example_names(), examples_per_page=max(1, len(EXAMPLES)),
                       api_visibility="private", elem_id=elem_id).dataset


def model_choices(menu: list[str]) -> list[tuple]:
    """The model menu as (shown, value): each value the English name the API takes, shown in the page's language."""
    keys = {shown: key for key, shown in DISPLAY_NAMES.items()}
    return [(t(f"model-{keys[name]}") if f"model-{keys.get(name)}" in i18n.PAGE else name, name) for name in menu]


def build_sidebar(c: dict) -> None:
    """The sidebar: the image, its setting, Analyze and the top-k first; examples, cost, timing, projector under."""
    native = PRESETS[DEFAULT]
    gr.Markdown("# ViT Anatomy\n(B, C, H, W) → (B, N+1, D) → (B, K)", elem_id="title")
    # The page's language (vit/ui/page.js sets it to what the page shows, and switches on a click).
    c["lang"] = gr.Radio(LANGUAGE_CHOICES, value=None, label=t("lang-switch"), show_label=False, container=False,
                         elem_id="lang", min_width=120)
    c["image"] = gr.Image(type="pil", sources=["upload", "webcam", "clipboard"], label=t("your-image"), height=120,
                          placeholder=t("upload-here"), elem_id="input-image")
    # Draw: a canvas in the upload box's place (page.js); each finished stroke, and an undo, becomes the image through
    # the hidden "drawn" button. On a phone, #pen-view beside it shows the tab's picture that follows the pen.
    c["draw"] = gr.Checkbox(False, label=t("draw"), elem_id="draw", container=False)
    with gr.Group(elem_id="draw-box"):
        gr.HTML(f'<div class="pen-row"><canvas id="draw-canvas" width="{inputs.DRAWING_PX}" '
                f'height="{inputs.DRAWING_PX}"></canvas><figure id="pen-view" hidden><img alt="">'
                '<figcaption></figcaption></figure></div>', elem_id="draw-area", padding=False)
        c["pen"] = gr.Radio(PEN_WIDTHS, value=PEN_WIDTHS[1], label=t("pen"), elem_id="pen",
                            interactive=True)  # no event of its own: the page reads it at each stroke
        with gr.Row(elem_id="draw-tools"):
            c["undo"] = gr.Button(t("undo"), size="sm", elem_id="draw-undo", min_width=80)
            c["clear-drawing"] = gr.Button(t("clear-drawing"), size="sm", elem_id="draw-clear", min_width=80)
    c["drawing"] = gr.Textbox("", visible=False, max_length=inputs.MAX_DRAWING_CHARS, elem_id="drawing")
    c["drawn"] = gr.Button("drawn", elem_id="drawn", elem_classes="hidden-helper")
    c["model"] = gr.Dropdown(model_choices(models.menu()), value=startup.DEFAULT_MODEL, label=t("model"),
                             elem_id="model")
    c["patch-size"] = gr.Slider(MIN_PATCH_SIZE, MAX_PATCH_SIZE, value=native.patch_size, step=1,
                                label=t("patch-size"), info=f"checkpoint's own: {native.patch_size}",
                                elem_id="patch-size")
    c["depth"] = gr.Slider(1, native.num_layers, value=native.num_layers, step=1, label=t("depth"),
                           info=f"blocks run, 1 to L = {native.num_layers}", elem_id="depth")
    c["analyze"] = gr.Button(t("analyze"), variant="primary", size="lg", elem_id="analyze-btn")
    c["api-analyze"] = gr.Button("Analyze (API)", visible=False)  # /analyze and /redraw: strict
    c["api-redraw"] = gr.Button("Redraw (API)", visible=False)
    c["api-top-k"] = gr.Button("Top-k (API)", visible=False)  # /top_k: strict (the page's slider clamps)
    centre = Display().query
    c["query-x"] = gr.Number(centre[0], visible=False, label="query_x")  # /redraw's query patch, as fractions
    c["query-y"] = gr.Number(centre[1], visible=False, label="query_y")
    # The API's own P, depth and layer: not given, the model's own (not the page's controls: ViT-B/16's at first).
    for name in ("api-patch-size", "api-depth", "api-layer"):
        c[name] = gr.Number(None, visible=False, label=name.removeprefix("api-").replace("-", "_"))
    c["predictions"] = gr.Label(num_top_classes=MAX_TOP_K, label=t("top-k-label"),
                                elem_id="predictions")
    c["top-k"] = gr.Slider(1, MAX_TOP_K, value=5, step=1, label=t("top-k"), elem_id="top-k")
    display = Display()
    c["opacity"] = gr.Slider(0.0, 1.0, value=display.opacity, step=0.05, label=t("opacity"), elem_id="opacity")
    c["colormap"] = gr.Dropdown(list(COLORMAPS), value=display.cmap, label=t("colormap"), elem_id="colormap")
    c["examples"] = _examples(c, "examples")
    c["cost-meter"] = gr.Markdown(meter.cost_meter(validate.setting(DEFAULT)), elem_id="cost-meter")
    c["timing"] = gr.Markdown("", elem_id="timing")
    c["projector"] = gr.Checkbox(False, label=t("projector"), elem_id="projector")


def build_view_controls(c: dict) -> None:
    """Above the tabs: the banner, the out-of-date notice, and the controls every picture shares."""
    native, display = PRESETS[DEFAULT], Display()
    with gr.Row(elem_id="top", equal_height=False):
        c["banner"] = gr.HTML(meter.banner_html(), elem_id="banner")
        c["offer"] = gr.Button(t("offer"), visible=False,
                               size="sm", elem_id="offer-trained", scale=0, min_width=200)
    c["notice"] = gr.HTML("", elem_id="notice")
    # Before the first analysis, where the eye is: the examples again (page.css hides them once there is a picture).
    c["start-examples"] = _examples(c, "examples-start", "start-examples")
    # One row over every tab: what the pictures are drawn from (opacity and colormap wait in the sidebar).
    with gr.Row(elem_id="view-controls", equal_height=True):
        c["layer"] = gr.Slider(1, native.num_layers, value=native.num_layers, step=1, label=t("layer"), elem_id="layer")
        c["head"] = gr.Slider(1, native.num_heads, value=display.head, step=1, label=t("head"), elem_id="head")
        c["head-fusion"] = gr.Dropdown(fusion_choices(), value="mean", label=t("head-fusion"), elem_id="head-fusion",
                                       min_width=120)
        c["discard-ratio"] = gr.Slider(0.0, MAX_DISCARD_RATIO, value=0.0, step=0.01,
                                       label=t("discard-ratio"), elem_id="discard-ratio")


def fusion_choices() -> list[tuple]:
    """Head fusion's choices in the page's language, each value the API's ("mean", "max", "min")."""
    return [(t(f"fusion-{value}"), value) for value in HEAD_FUSIONS]


def build_helpers(c: dict) -> None:
    """Hidden helpers of the page's script: the grid's geometry, the download, the arrow keys' buttons."""
    c["grid-info"] = gr.HTML("", elem_id="grid-info", elem_classes="hidden-helper")
    # The screen the page is on ("laptop+projector" and the like: vit.ui.inputs.screen): pictures are drawn for it.
    c["screen"] = gr.Textbox("", visible=False, max_length=40, elem_id="screen")
    c["clicked"] = gr.Textbox("", visible=False, max_length=40, elem_id="clicked")  # a click's cell (parts.on_click)
    c["download-file"] = gr.File(label=t("download"), elem_id="download-file", elem_classes="hidden-helper",
                                 interactive=False)
    with gr.Row(elem_classes="hidden-helper"):
        for direction in DIRECTIONS:
            c[f"move-{direction}"] = gr.Button(direction, elem_id=f"move-{direction}")


def wire(c: dict) -> None:
    _wire_api(c)
    _wire_analyses(c)
    _wire_redraws(c)
    if startup.on_space():  # the startup download's progress in the banner
        c["startup-timer"] = ticker = gr.Timer(STARTUP_TICK_S)
        ticker.tick(events.named(startup.startup_status, startup.STARTUP_OUTPUTS), [c["analysis-key"]],
                    outputs(c, startup.STARTUP_OUTPUTS), **private("startup_status"),
                    queue=False, show_progress="hidden")


def _wire_api(c: dict) -> None:
    """The API (strict, every picture): /analyze and /redraw."""
    c["api-analyze"].click(events.analyze, outputs(c, events.ANALYZE_INPUTS), outputs(c, events.ANALYZE_OUTPUTS),
                           api_name="analyze", preprocess=False, concurrency_id="model",
                           concurrency_limit=MODEL_WAITERS)
    c["api-redraw"].click(events.named(events.redraw_all, events.API_REDRAW_OUTPUTS),
                          outputs(c, ["analysis-key", "query-x", "query-y", "api-layer", *DISPLAY[3:]]),
                          outputs(c, events.API_REDRAW_OUTPUTS), api_name="redraw", preprocess=False,
                          concurrency_limit=REDRAW_CONCURRENCY)
    c["api-top-k"].click(events.predictions, outputs(c, ["analysis-key", "top-k"]), c["predictions"],
                         preprocess=False, api_name="top_k")


def _wire_analyses(c: dict) -> None:
    """The page's analyses: Analyze, a new image, patch size, depth or model; the meter meanwhile."""
    run = dict(fn=events.page_event(events.page_analyze, events.PAGE_ANALYZE_OUTPUTS),
               outputs=outputs(c, events.PAGE_ANALYZE_OUTPUTS), preprocess=False, show_progress_on=[c["banner"]],
               concurrency_id="model", concurrency_limit=MODEL_WAITERS, trigger_mode="always_last")
    # While any of the session's analysis chains is under way the Analyze button is disabled and says
    # "Analyzing…" (the server counts them: a blur's quick chain must not re-enable it during Analyze's run).
    button = dict(outputs=outputs(c, events.BUTTON_OUTPUTS), preprocess=False, queue=False, show_progress="hidden")

    def analysis(trigger, name: str) -> None:
        explicit = gr.State(name == "now")  # the Analyze button's chain: it runs whatever the setting costs
        setting = [*outputs(c, ["model", "patch-size", "depth"]), explicit]
        # The run is a page event (events.page_event): a refusal is a toast, never a failure, so the button's last
        # step follows it (gradio 6.31 runs a `.then` only after a success).
        trigger(events.named(events.analysis_started, events.BUTTON_OUTPUTS), setting, **button,
                trigger_mode="always_last", **private(f"busy_{name}")).then(
            inputs=[*outputs(c, events.PAGE_ANALYZE_INPUTS), explicit], **run, **private(f"analyze_{name}")).then(
            events.named(events.analysis_ended, events.BUTTON_OUTPUTS), setting, **button, **private(f"idle_{name}"))

    page = "window.vitAnatomy && window.vitAnatomy"
    c["draw"].change(None, c["draw"], None, js=f"(on) => {{ {page}.drawMode(on); return []; }}", **private("draw"))
    c["undo"].click(None, js=f"() => {{ {page}.canvas('undo'); return []; }}", **private("undo"))
    c["clear-drawing"].click(None, js=f"() => {{ {page}.canvas('clear'); return []; }}", **private("clear_drawing"))
    c["drawn"].click(events.drawn, c["drawing"], c["image"], js=f"(d) => ({page}.drawing()) || [d]",
                     queue=False, show_progress="hidden", **private("drawn"))
    analysis(c["analyze"].click, "now")
    analysis(c["image"].change, "new_image")
    analysis(c["patch-size"].release, "new_patch_size")
    analysis(c["depth"].release, "new_depth")
    analysis(c["model"].change(events.named(events.model_settings, events.MODEL_SETTINGS_OUTPUTS),
                               outputs(c, ["model", "head"]), outputs(c, events.MODEL_SETTINGS_OUTPUTS),
                               preprocess=False, queue=False, api_name="model_settings").then, "new_model")
    gr.on([c["patch-size"].change, c["depth"].change], events.named(events.settings_changed, events.METER_OUTPUTS),
          outputs(c, ["model", "patch-size", "depth"]), outputs(c, events.METER_OUTPUTS), preprocess=False,
          queue=False, show_progress="hidden", **private("settings_changed"))
    c["offer"].click(events.use_trained_model, None, c["model"], queue=False, api_name="use_trained_model")


def _wire_redraws(c: dict) -> None:
    """Redraws (no model run): a new analysis, a display control, an arrow key; another top-k."""
    on(c, ("analysis-key", "screen", "layer", "head", "opacity", "colormap"), "redraw_page",
       others=(c["head-fusion"].change, c["discard-ratio"].change), **redraw(c))
    # The screen the page opens on (and ?projector in its address), named anew by projector mode: a change redraws.
    c["demo"].load(None, None, outputs(c, ["screen", "projector"]), js=SCREEN_ON_LOAD, **private("screen_on_load"))
    c["projector"].change(None, c["projector"], c["screen"], js=PROJECTOR_JS, **private("projector"))
    # The language switch: the page's script shows the other language, then the server writes its own text in it.
    language = dict(fn=events.named(events.page_language, events.LANGUAGE_OUTPUTS),
                    inputs=outputs(c, ["analysis-key", "model", "patch-size", "depth", "top-k", "lang"]),
                    outputs=outputs(c, events.LANGUAGE_OUTPUTS), preprocess=False, queue=False, show_progress="hidden")
    c["language-switched"] = c["lang"].input(
        None, c["lang"], None, js="(lang) => window.vitAnatomy && window.vitAnatomy.language(lang, true)",
        **private("language_js")).then(**language, **private("language"))
    c["language-switched"].then(**redraw(c), **private("redraw_language"))  # the pictures' captions and words too
    # On load, the language page.js chose (address, last choice, browser): the server writes its text in it.
    c["demo"].load(**language, js=f"(...args) => [...args.slice(0, -1), {PAGE_LANGUAGE_JS}]",
                   **private("language_on_load"))
    c["top-k"].change(events.page_predictions, outputs(c, ["analysis-key", "top-k"]), c["predictions"],
                      preprocess=False, trigger_mode="always_last", show_progress="hidden", **private("page_top_k"))
    # Arrow keys set the query with queue=False (fast), then redraw: such outputs do not fire .change.
    for direction in DIRECTIONS:
        c[f"move-{direction}"].click(lambda key, q, d=direction: events.move(key, q, d),
                                     outputs(c, ["analysis-key", "query"]), c["query"], queue=False,
                                     show_progress="hidden", **private(f"move_{direction}")).then(
            **redraw(c), **private(f"redraw_after_move_{direction}"))
