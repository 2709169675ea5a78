"""The page: one idea per tab, the controls beside the pictures they change, and the wiring.

Every main part has a stable ``elem_id`` (README, "Embedding and styling"): ``banner``,
``model``, ``patch-size``, ``depth``, ``cost-meter``, ``predictions``, ``layer``, ``head``,
``patch-grid``, ``query-view``, ``rollout-view``, ``head-views``, ``layer-views``,
``depth-plot``, ``stage-table``, ``why-map``, ``why-curves``, ``why-table``; each picture's caption is
``<picture>-caption``.
Components live in one dict by elem_id, and handlers (:mod:`vit.ui.events`) return
their outputs by the same names.
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from vit import views
from vit.config import DISPLAY_NAMES, MAX_PATCH_SIZE, MIN_PATCH_SIZE, PRESETS
from vit.model.families import ASSETS
from vit.ui import events, gpu, meter, pictures, why
from vit.ui.events import DEFAULT_COLORMAP, DEFAULT_OPACITY
from vit.ui.inputs import CENTRE
from vit.ui.state import STATE_TTL_S

TAB_WHY = why.TAB
MODEL_WAITERS = 16  # requests admitted to vit.serve.queue.FairQueue at once; the rest wait in gradio's queue (64)
EXAMPLES = sorted(p for p in ASSETS.glob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
HERE = Path(__file__).resolve().parent
CSS = (HERE / "page.css").read_text()
SCRIPT = (HERE / "page.js").read_text()  # gradio runs it once the page has loaded

# Fonts the viewer's own machine has: nothing is fetched, so a classroom without internet looks the same.
FONTS = ("system-ui", "-apple-system", "Segoe UI", "Roboto", "DejaVu Sans", "Helvetica Neue", "Arial", "sans-serif")
MONO_FONTS = ("ui-monospace", "DejaVu Sans Mono", "Menlo", "Consolas", "monospace")


def theme():
    size = gr.themes.Size(xxs="12px", xs="14px", sm="16px", md="18px", lg="21px", xl="26px", xxl="32px")
    theme = gr.themes.Default(primary_hue="blue", secondary_hue="orange", text_size=size, font=FONTS,
                              font_mono=MONO_FONTS)
    # Gradio's pale greys vanish on a projector: labels and hints in dark grey.
    return theme.set(block_label_text_color="*neutral_700", block_title_text_color="*neutral_800",
                     block_info_text_color="*neutral_600")


def _example_name(path: Path) -> str:
    return path.stem.replace("shapes-", "drawn ").replace("_", " ")


def _picture(c: dict, name: str, label: str, what_is: str, clickable: bool = False, download: bool = True) -> None:
    """A picture with its caption, its buttons (download, pin, full screen) and "what is this?"."""
    with gr.Column(min_width=280, elem_classes="picture", elem_id=f"{name}-block"):
        gr.Markdown(f"**{label}**", elem_classes="picture-title")
        c[name] = gr.Image(type="pil", format="png", interactive=False, show_label=False, label=label,
                           buttons=[], elem_id=name, elem_classes="clickable" if clickable else None)
        c[f"{name}-caption"] = gr.Markdown(elem_classes="caption", elem_id=f"{name}-caption")
        with gr.Row(elem_classes="picture-buttons"):
            if download:
                c[f"{name}-download"] = gr.Button("⬇ Download", size="sm", min_width=60, elem_id=f"{name}-download")
            c[f"{name}-pin"] = gr.Button("Pin to compare", size="sm", min_width=60, elem_id=f"{name}-pin")
            c[f"{name}-fullscreen"] = gr.Button("Full screen", size="sm", min_width=60, elem_id=f"{name}-fullscreen")
        with gr.Accordion("What is this?", open=False, elem_classes="what-is"):
            gr.Markdown(views.WHAT_IS.get(what_is) or WHAT_IS[what_is])


# "What is this?" for the pictures beyond the chapter's first views.
WHAT_IS = {
    "block": "Each encoder block is pre-norm: H = X + MSA(LN(X)), then Y = H + MLP(LN(H)). The chart gives, per "
             "layer, the average length ||·||₂ of the tokens entering the block (the residual stream), of what "
             "attention adds, of what the MLP adds, and of the tokens leaving it. The shape never changes; the "
             "content does (11.4.1).",
    "lens": "The final norm and the classification head applied to every patch token after this layer, not only "
            "to the class token: which class each patch would vote for on its own. Early layers vote noise; "
            "later, patches on the object agree with the final answer.",
    "norms": "How long each patch token's vector is after this layer. On large trained models a few background "
             "patches grow very long: they are used as scratch space (Darcet et al. 2024, 'Vision Transformers "
             "Need Registers').",
    "matrix": "The whole softmax(QKᵀ/√d) of one head: row i is where token i looks, column j who looks at token j; "
              "row 0 is the class token. Beside it, the same matrix under a causal mask, as a decoder would see "
              "it: each token only sees those before it. The ViT encoder has no such mask (11.4.2).",
    "filters": "The first principal components of the patch-embedding kernels (the D filters of the patch "
               "convolution), as in the ViT paper's Figure 7 (left): what the first layer looks for in a patch.",
    "position": "Cosine similarity between the learned position embeddings: one small map per patch position, "
                "bright where another position's embedding is similar. Trained models learn rows and columns "
                "(ViT paper, Figure 7, centre); after a patch-size change these are the resampled embeddings.",
    "distance": "For each head and layer, how far (in pixels) the patches look on average: the attention-weighted "
                "distance between a patch and the patches it attends to (ViT paper, Figure 7, right). Some heads "
                "look far from the first layer; others stay local until late.",
}


def _pinned(c: dict, tab: str) -> None:
    """The tab's pinned picture: a copy kept beside the live ones (set in the browser, no server)."""
    with gr.Column(min_width=280, elem_classes="picture pinned", elem_id=f"{tab}-pinned-block"):
        gr.Markdown("**Pinned, to compare**", elem_classes="picture-title")
        c[f"{tab}-pinned"] = gr.Image(type="filepath", format="png", interactive=False, label="Pinned",
                                      show_label=False,
                                      buttons=[], elem_id=f"{tab}-pinned")
        c[f"{tab}-pinned-caption"] = gr.Markdown(elem_classes="caption", elem_id=f"{tab}-pinned-caption")


def build_demo() -> gr.Blocks:
    """The app's layout and wiring; nothing runs and nothing downloads until a request comes."""
    from vit.views.draw import COLORMAPS  # noqa: PLC0415 - numpy and PIL only
    from vit.validate import HEAD_FUSIONS, MAX_DISCARD_RATIO, MAX_TOP_K  # noqa: PLC0415

    default = next(k for k, v in DISPLAY_NAMES.items() if v == gpu.DEFAULT_MODEL)
    native = PRESETS[default]
    c: dict = {}

    # delete_cache: a classroom session makes ~1 MB of pictures per redraw; keep an hour of them.
    with gr.Blocks(title="ViT Anatomy", analytics_enabled=False, delete_cache=(1800, 3600)) as demo:
        c["analysis"] = gr.State(None, time_to_live=STATE_TTL_S)  # the key of the tab's vit.Analysis in the store
        c["query"] = gr.State(CENTRE)  # the query patch, as fractions (x, y) of the picture
        c["tab-on-screen"] = gr.State("patches")  # only its pictures are drawn

        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=300, elem_id="sidebar"):
                gr.Markdown("# ViT Anatomy\nChapter 11.4: (B, C, H, W) → (B, N, D) → (B, N+1, D) → L blocks → "
                            "h_cls → (B, K)", elem_id="title")
                c["image"] = gr.Image(type="pil", sources=["upload", "webcam", "clipboard"], label="Your image",
                                      height=190, elem_id="input-image")
                gr.Examples(examples=[[str(p)] for p in EXAMPLES], inputs=[c["image"]],
                            label="Examples: click one", example_labels=[_example_name(p) for p in EXAMPLES],
                            examples_per_page=max(1, len(EXAMPLES)), api_visibility="private",
                            elem_id="examples")
                c["model"] = gr.Dropdown(list(DISPLAY_NAMES.values()), value=gpu.DEFAULT_MODEL, label="Model",
                                         info="five torchvision checkpoints, and one trained here on drawn shapes",
                                         elem_id="model")
                c["patch-size"] = gr.Slider(MIN_PATCH_SIZE, MAX_PATCH_SIZE, value=native.patch_size, step=1,
                                            label="Patch size P (pixels)",
                                            info=f"checkpoint's own: {native.patch_size}", elem_id="patch-size")
                c["depth"] = gr.Slider(1, native.num_layers, value=native.num_layers, step=1,
                                       label="Depth: encoder blocks to run", info=f"1 to L = {native.num_layers}",
                                       elem_id="depth")
                c["analyze"] = gr.Button("Analyze", variant="primary", size="lg", elem_id="analyze-btn")
                c["api-analyze"] = gr.Button("Analyze (API)", visible=False)  # /analyze and /redraw: strict
                c["api-redraw"] = gr.Button("Redraw (API)", visible=False)
                c["query-x"] = gr.Number(0.5, visible=False, label="query_x")  # /redraw's query patch, as fractions
                c["query-y"] = gr.Number(0.5, visible=False, label="query_y")
                c["cost-meter"] = gr.Markdown(meter.cost_meter(default, native.patch_size, native.num_layers),
                                              elem_id="cost-meter")
                c["predictions"] = gr.Label(num_top_classes=MAX_TOP_K, label="Top-k predictions: softmax(h_cls W + b)",
                                            elem_id="predictions")
                c["top-k"] = gr.Slider(1, MAX_TOP_K, value=5, step=1, label="Top-k", elem_id="top-k")
                c["timing"] = gr.Markdown("", elem_id="timing")
                c["projector"] = gr.Checkbox(False, label="Projector mode: bigger text and pictures (or add "
                                             "?projector to the address)", elem_id="projector")

            with gr.Column(scale=3, min_width=320, elem_id="main"):
                with gr.Row(elem_id="top", equal_height=False):
                    c["banner"] = gr.HTML(meter.banner_html(), elem_id="banner")
                    c["offer"] = gr.Button(f"No ImageNet weights? Try {meter.TRAINED_MODEL} (no download)",
                                           visible=False, size="sm", elem_id="offer-trained", scale=0, min_width=220)
                c["notice"] = gr.HTML("", elem_id="notice")
                with gr.Row(elem_id="view-controls", equal_height=True):
                    c["layer"] = gr.Slider(1, native.num_layers, value=native.num_layers, step=1, label="Layer",
                                           elem_id="layer")
                    c["head"] = gr.Slider(1, native.num_heads, value=1, step=1, label="Head", elem_id="head")
                    c["opacity"] = gr.Slider(0.0, 1.0, value=DEFAULT_OPACITY, step=0.05, label="Heatmap opacity",
                                             elem_id="opacity")
                    c["colormap"] = gr.Dropdown(list(COLORMAPS), value=DEFAULT_COLORMAP, label="Colormap",
                                                elem_id="colormap", min_width=140)
                with gr.Tabs(elem_id="tabs") as c["tabs"]:
                    with gr.Tab("Patches & shapes", id="patches", elem_id="tab-patches") as c["tab-patches"]:
                        with gr.Row(equal_height=False):
                            _picture(c, "patch-grid", "Patch grid: click a patch, or use ← ↑ → ↓",
                                     "patches", clickable=True)
                            _picture(c, "query-view", "What the clicked patch attends to", "attention",
                                     clickable=True)
                            _pinned(c, "patches")
                        c["stage-table"] = gr.HTML(elem_id="stage-table")
                    with gr.Tab("Attention", id="attention", elem_id="tab-attention") as c["tab-attention"]:
                        with gr.Row(equal_height=True):
                            c["head-fusion"] = gr.Radio(list(HEAD_FUSIONS), value="mean", label="Head fusion",
                                                        info="how rollout and the per-layer maps merge the h heads",
                                                        elem_id="head-fusion")
                            c["discard-ratio"] = gr.Slider(0.0, MAX_DISCARD_RATIO, value=0.0, step=0.01,
                                                           label="Discard ratio",
                                                           info="rollout drops each row's weakest links",
                                                           elem_id="discard-ratio")
                        with gr.Row(equal_height=False):
                            _picture(c, "rollout-view", "Attention rollout: where the class token looks",
                                     "rollout", clickable=True)
                            _picture(c, "head-views", "Class token, per head", "heads")
                            _pinned(c, "attention")
                    with gr.Tab("Across depth", id="depth", elem_id="tab-depth") as c["tab-depth"]:
                        with gr.Row(equal_height=False):
                            _picture(c, "layer-views", "Class token, per layer", "layers")
                            with gr.Column(min_width=280, elem_classes="picture", elem_id="depth-plot-block"):
                                gr.Markdown("**How the prediction forms (early exit)**", elem_classes="picture-title")
                                c["depth-plot"] = gr.Image(type="pil", format="png", interactive=False,
                                                           show_label=False,
                                                           label="How the prediction forms (early exit)",
                                                           buttons=[], elem_id="depth-plot")
                                c["depth-plot-caption"] = gr.Markdown(elem_classes="caption",
                                                                      elem_id="depth-plot-caption")
                                with gr.Row(elem_classes="picture-buttons"):
                                    c["depth-plot-download"] = gr.Button("⬇ Download", size="sm",
                                                                         min_width=60, elem_id="depth-plot-download")
                                    c["depth-plot-pin"] = gr.Button("Pin to compare", size="sm",
                                                                    min_width=60, elem_id="depth-plot-pin")
                                    c["depth-plot-fullscreen"] = gr.Button("Full screen", size="sm",
                                                                           min_width=60,
                                                                           elem_id="depth-plot-fullscreen")
                                with gr.Accordion("What is this?", open=False, elem_classes="what-is"):
                                    gr.Markdown(views.WHAT_IS["early_exit"])
                            _pinned(c, "depth")
                    with gr.Tab("Why this class?", id="why", elem_id="tab-why") as c["tab-why"]:
                        with gr.Row(equal_height=True):
                            c["why-target"] = gr.Dropdown([], label="Class to explain (or click a prediction)",
                                                          elem_id="why-target", min_width=220, scale=2)
                            # Wide enough for the four methods on two lines: the map stays on a laptop's screen.
                            c["why-method"] = gr.Radio(why.methods(), value="grad_rollout", label="Method",
                                                       elem_id="why-method", scale=3)
                            c["why-baseline"] = gr.Radio([("grey (the mean)", "mean"), ("blurred", "blur")],
                                                         value="mean", label="Test: replace patches with",
                                                         elem_id="why-baseline", min_width=200, scale=2)
                        with gr.Row(equal_height=False):
                            _picture(c, "why-map", "Why this class? The map for the chosen class", "explanation",
                                     download=False)
                            with gr.Column(min_width=280):
                                c["why-test"] = gr.Button("Test it: delete and insert patches in the map's order",
                                                          variant="primary", elem_id="why-test")
                                _picture(c, "why-curves", "Is it right? Deletion and insertion", "curves",
                                         download=False)
                            _pinned(c, TAB_WHY)
                        c["why-compare"] = gr.Button("Compare all methods on this class", elem_id="why-compare")
                        c["why-table"] = gr.HTML("", elem_id="why-table")
                    with gr.Tab("Inside", id="inside", elem_id="tab-inside") as c["tab-inside"]:
                        with gr.Row(equal_height=False):
                            _picture(c, "block-view", "Inside a block: what attention and the MLP add", "block")
                            _picture(c, "lens-view", "Token content: each patch's own vote (chosen layer)",
                                     "lens")
                        with gr.Row(equal_height=False):
                            _picture(c, "token-norms", "Token lengths ||Y|| after the chosen layer", "norms")
                            _picture(c, "matrix-view", "The whole matrix of the chosen layer and head, and "
                                     "under a causal mask", "matrix")
                            _pinned(c, "inside")
                    with gr.Tab("Figure 7", id="figure7", elem_id="tab-figure7") as c["tab-figure7"]:
                        with gr.Row(equal_height=False):
                            _picture(c, "filters-view", "Patch-embedding filters: principal components",
                                     "filters")
                            _picture(c, "position-view", "Position-embedding similarity", "position")
                            _picture(c, "distance-view", "Mean attention distance per head", "distance")
                            _pinned(c, "figure7")
                    with gr.Tab("Lesson", id="lesson", elem_id="tab-lesson") as c["tab-lesson"]:
                        c["lesson-step"] = gr.State(0)
                        with gr.Row(elem_id="lesson-nav"):
                            c["lesson-prev"] = gr.Button("← Previous", elem_id="lesson-prev", scale=0,
                                                         min_width=140)
                            c["lesson-progress"] = gr.Markdown("", elem_id="lesson-progress")
                            c["lesson-next"] = gr.Button("Next →", elem_id="lesson-next", variant="primary",
                                                         scale=0, min_width=140)
                        with gr.Row(equal_height=False):
                            with gr.Column(scale=1, min_width=280):
                                c["lesson-text"] = gr.Markdown(
                                    "Analyse an image, then walk through 11.4.1 → 11.4.7 with its numbers. "
                                    "Next/Previous, or the arrow keys (a presenter's clicker).",
                                    elem_id="lesson-text", elem_classes="caption")
                            with gr.Column(scale=1, min_width=280, elem_classes="picture"):
                                c["lesson-picture"] = gr.Image(type="pil", format="png", interactive=False,
                                                               show_label=False, buttons=[],
                                                               elem_id="lesson-picture")
                                c["lesson-table"] = gr.HTML("", elem_id="lesson-table")
                c["grid-info"] = gr.HTML("", elem_id="grid-info", elem_classes="hidden-helper")
                c["download-file"] = gr.File(label="Download", elem_id="download-file",
                                             elem_classes="hidden-helper", interactive=False)
                with gr.Row(elem_classes="hidden-helper"):
                    for direction in ("up", "down", "left", "right"):
                        c[f"move-{direction}"] = gr.Button(direction, elem_id=f"move-{direction}")
        _wire(c)
        if gpu.on_space():  # the startup download's progress in the banner
            ticker = gr.Timer(1.0)
            ticker.tick(gpu.startup_status, [c["analysis"]], [c["banner"], ticker], api_name="startup_status",
                        api_visibility="private", queue=False, show_progress="hidden")
    return demo


def _wire(c: dict) -> None:
    """Every event of the page and of the API."""

    def outputs(names) -> list:
        return [c[n] for n in names]

    def private(name: str) -> dict:
        return dict(api_name=name, api_visibility="private")

    # ---------------------------------------------------------------- the API (strict, every picture)
    analyze_inputs = outputs(["image", "model", "patch-size", "depth", "top-k", "head-fusion", "discard-ratio",
                              "layer", "head", "opacity", "colormap", "query"])
    c["api-analyze"].click(events.analyze, analyze_inputs, outputs(events.ANALYZE_OUTPUTS), api_name="analyze",
                           preprocess=False, concurrency_id="model", concurrency_limit=MODEL_WAITERS)
    display = ["analysis", "query", "layer", "head", "opacity", "colormap", "head-fusion", "discard-ratio"]
    c["api-redraw"].click(events.redraw_all, outputs(["analysis", "query-x", "query-y", *display[2:]]),
                          outputs(events.API_REDRAW_OUTPUTS), api_name="redraw", preprocess=False,
                          concurrency_limit=4)

    # ---------------------------------------------------------------- the page's analyses
    page_inputs = outputs(["image", "model", "patch-size", "depth", "top-k", "head-fusion", "discard-ratio",
                           "layer", "head"])
    run = dict(inputs=page_inputs, outputs=outputs(events.PAGE_ANALYZE_OUTPUTS), preprocess=False,
               show_progress_on=[c["banner"]], concurrency_id="model", concurrency_limit=MODEL_WAITERS,
               trigger_mode="always_last")
    auto = events.named(events.page_analyze, events.PAGE_ANALYZE_OUTPUTS)
    now = events.named(events.page_analyze_now, events.PAGE_ANALYZE_OUTPUTS)
    # While a run is going the Analyze button is disabled and says so; every trigger goes through it.
    busy, idle = gr.update(interactive=False, value="Analyzing…"), gr.update(interactive=True, value="Analyze")

    def analysis(trigger, fn, name: str) -> None:
        trigger(lambda: busy, None, c["analyze"], queue=False, show_progress="hidden", trigger_mode="always_last",
                **private(f"busy_{name}")).then(
            fn, **run, **private(f"analyze_{name}")).then(
            lambda: idle, None, c["analyze"], queue=False, show_progress="hidden", **private(f"idle_{name}"))

    analysis(c["analyze"].click, now, "now")
    analysis(c["image"].change, auto, "new_image")
    analysis(c["patch-size"].release, auto, "new_patch_size")
    analysis(c["depth"].release, auto, "new_depth")
    analysis(c["model"].change(events.model_settings, outputs(["model", "head"]),
                               outputs(["patch-size", "depth", "cost-meter"]), preprocess=False, queue=False,
                               api_name="model_settings").then, auto, "new_model")
    meter_inputs = outputs(["model", "patch-size", "depth"])
    gr.on([c["patch-size"].change, c["depth"].change], events.settings_changed, meter_inputs,
          outputs(["cost-meter", "notice"]), preprocess=False, queue=False, show_progress="hidden",
          **private("settings_changed"))
    c["banner"].change(events.offer_button, c["banner"], c["offer"], queue=False, show_progress="hidden",
                       **private("offer_button"))
    c["offer"].click(events.use_trained_model, None, c["model"], queue=False, api_name="use_trained_model")

    # ---------------------------------------------------------------- redraws (no model run)
    # Clicks and arrow keys set the query with queue=False (fast), then redraw: such outputs do not fire .change.
    triggers = [c["analysis"].change, c["projector"].change, c["layer"].change, c["head"].change,
                c["opacity"].change, c["colormap"].change, c["head-fusion"].change, c["discard-ratio"].change]
    redraw = dict(fn=events.named(events.page_redraw, events.REDRAW_OUTPUTS),
                  inputs=outputs([*display, "projector", "tab-on-screen"]), outputs=outputs(events.REDRAW_OUTPUTS),
                  preprocess=False, trigger_mode="always_last", concurrency_limit=4,
                  show_progress="minimal")  # a fusion recompute at P = 4 takes seconds
    gr.on(triggers, **redraw, **private("redraw_page"))
    lesson = dict(fn=events.named(events.lesson, events.LESSON_OUTPUTS), outputs=outputs(events.LESSON_OUTPUTS),
                  preprocess=False, trigger_mode="always_last", show_progress="hidden")
    lesson_inputs = ["analysis", "lesson-step", "layer", "head", "opacity", "colormap", "projector", "tab-on-screen"]

    def lesson_moves(delta: int) -> list:
        return [c["analysis"], c["lesson-step"], gr.State(delta), *outputs(lesson_inputs[2:])]

    for tab in (*pictures.ON_TAB, "lesson"):  # another tab: its pictures are drawn now
        shown = c[f"tab-{tab}"].select(lambda t=tab: t, None, c["tab-on-screen"], queue=False,
                                       show_progress="hidden", **private(f"show_tab_{tab}"))
        if tab == "lesson":
            shown.then(inputs=lesson_moves(0), **lesson, **private("lesson_shown"))
        else:
            shown.then(**redraw, **private(f"redraw_tab_{tab}"))
    c["lesson-next"].click(inputs=lesson_moves(1), **lesson, **private("lesson_next"))
    c["lesson-prev"].click(inputs=lesson_moves(-1), **lesson, **private("lesson_previous"))
    c["analysis"].change(inputs=lesson_moves(0), **lesson, **private("lesson_new_analysis"))
    c["top-k"].change(events.predictions, outputs(["analysis", "top-k"]), c["predictions"], preprocess=False,
                      trigger_mode="always_last", show_progress="hidden", api_name="top_k")
    for name in ("patch-grid", "query-view", "rollout-view"):
        c[name].select(events.click, [c["analysis"], gr.State(name), c["projector"]], c["query"], preprocess=False,
                       queue=False, show_progress="hidden", **private(f"click_{name.replace('-', '_')}")).then(
            **redraw, **private(f"redraw_after_click_{name.replace('-', '_')}"))
    for direction in ("up", "down", "left", "right"):
        c[f"move-{direction}"].click(lambda key, q, d=direction: events.move(key, q, d),
                                     outputs(["analysis", "query"]), c["query"], queue=False,
                                     show_progress="hidden", **private(f"move_{direction}")).then(
            **redraw, **private(f"redraw_after_move_{direction}"))

    # ---------------------------------------------------------------- why this class?
    model_run = dict(preprocess=False, concurrency_id="model", concurrency_limit=MODEL_WAITERS,
                     trigger_mode="always_last")
    explain = dict(fn=events.named(why.explain_page, why.MAP_OUTPUTS),
                   inputs=outputs(["image", "analysis", "why-target", "why-method", "opacity", "colormap",
                                   "projector", "tab-on-screen"]),
                   outputs=outputs(why.MAP_OUTPUTS), show_progress_on=[c["why-map"]], **model_run)
    c["analysis"].change(events.named(why.targets, why.TARGET_OUTPUTS), c["analysis"], outputs(why.TARGET_OUTPUTS),
                         preprocess=False, show_progress="hidden", **private("why_targets")).then(
        **explain, **private("why_new_analysis"))
    c["tab-why"].select(lambda: TAB_WHY, None, c["tab-on-screen"], queue=False, show_progress="hidden",
                        **private("show_tab_why")).then(**explain, **private("why_shown"))
    c["predictions"].select(events.named(why.pick, why.PICK_OUTPUTS), c["analysis"], outputs(why.PICK_OUTPUTS),
                            preprocess=False, queue=False, show_progress="hidden", **private("why_pick")).then(
        **explain, **private("why_picked"))
    gr.on([c["why-target"].input, c["why-method"].change, c["opacity"].change, c["colormap"].change],
          **explain, **private("why_map"))
    c["why-test"].click(events.named(why.test_page, why.CURVE_OUTPUTS),
                        outputs(["image", "analysis", "why-target", "why-method", "why-baseline"]),
                        outputs(why.CURVE_OUTPUTS), show_progress_on=[c["why-curves"]], **model_run,
                        **private("why_test"))
    c["why-compare"].click(events.named(why.compare_page, ("why-table",)),
                           outputs(["image", "analysis", "why-target", "why-baseline"]), c["why-table"],
                           show_progress_on=[c["why-table"]], **model_run, **private("why_compare"))
    for name in ("why-map", "why-curves"):
        c[f"{name}-pin"].click(None, outputs([name, f"{name}-caption"]),
                               outputs([f"{TAB_WHY}-pinned", f"{TAB_WHY}-pinned-caption"]),
                               js="(picture, caption) => [picture, '**Pinned:** ' + (caption || '')]")
        c[f"{name}-fullscreen"].click(None, js=f"() => window.vitAnatomy && window.vitAnatomy.fullscreen('{name}')")

    # ---------------------------------------------------------------- save, compare, full screen, projector
    tabs_of = {name: tab for tab, names in pictures.ON_TAB.items() for name in names}
    for name, tab in (*tabs_of.items(), ("depth-plot", "depth")):
        which = gr.State(name)
        c[f"{name}-download"].click(events.download, [c["analysis"], which, *outputs(display[1:])],
                                    c["download-file"], preprocess=False, show_progress="hidden",
                                    **private(f"download_{name.replace('-', '_')}")).then(
            None, js="() => window.vitAnatomy && window.vitAnatomy.saveDownload()")
        # Pinning copies what the page shows, in the browser: nothing goes back to the server.
        c[f"{name}-pin"].click(None, outputs([name, f"{name}-caption"]),
                               outputs([f"{tab}-pinned", f"{tab}-pinned-caption"]),
                               js="(picture, caption) => [picture, '**Pinned:** ' + (caption || '')]")
        c[f"{name}-fullscreen"].click(None, js=f"() => window.vitAnatomy && window.vitAnatomy.fullscreen('{name}')")
    c["projector"].change(None, c["projector"], None,
                          js="(on) => window.vitAnatomy && window.vitAnatomy.projector(on)").then(
        **explain, **private("why_projector"))  # a listener of its own on .change would stop the js one
