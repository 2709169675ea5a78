"""The "What if?" tab: take patches away, switch heads off, watch the prediction change (results kept server-side)."""

from __future__ import annotations

import html
import time

import gradio as gr

from vit import cost as costs
from vit import i18n, validate
from vit.bounded import Kept
from vit.errors import InputError
from vit.explanations.methods import METHODS, forward_passes
from vit.i18n.names import class_name
from vit.serve.queue import Withdrawn, take_turn
from vit.ui import gpu, inputs, meter, runs
from vit.ui.events import DEFAULTS, handler, page_event
from vit.ui.inputs import Number
from vit.ui.lang import of as language_of
from vit.ui.lang import progress_in, t
from vit.ui.pictures import caption
from vit.ui.state import RUNS, SESSIONS, fair_queue, kept, session_of
from vit.ui.tabs.parts import (
    MODEL_WAITERS,
    PICTURE_MIN_WIDTH,
    changed,
    on,
    on_click,
    outputs,
    picture,
    pinned,
    private,
    wire_pictures,
)
from vit.views import registry
from vit.views import whatif as whatif_views
from vit.views.registry import Display

TAB = "whatif"
KEPT = 256  # interventions and head importances remembered (each ~0.2 MB at P = 16)
SHOW_OUTPUTS = ("whatif-map", "whatif-map-caption", "whatif-result", "whatif-heads", "whatif-heads-caption",
                "whatif-cost")
STATE = ("whatif-removed", "whatif-ablated")
ORDERS = ("rollout", *(m.name for m in METHODS.values() if m.name != "rollout"), "random")  # their words: i18n


def order_choices() -> list[tuple]:
    """:data:`ORDERS` as the dropdown shows them, in the page's language (gradio's I18n)."""
    return [(t("order-rollout"), "rollout"),
            *(((t(f"method-{m.name}") if f"method-{m.name}" in i18n.PAGE else m.title) + " " + t("order-model-run"),
               m.name) for m in METHODS.values() if m.name != "rollout"),
            (t("order-random"), "random")]


_kept = Kept(KEPT)  # (key, removed, ablated, ablation, grey) -> Intervention; (key, ablation) -> importance


def importance_forwards(depth: int, heads: int) -> float:
    """What head importance costs in bare forward passes: h (L + 1) / 2 (each layer's heads re-run the rest)."""
    return heads * (depth + 1) / 2


def _removed_list(a, removed) -> list[int]:
    n = a.grid[0] * a.grid[1]
    return [int(i) for i in (removed or []) if isinstance(i, int) and 0 <= i < n]


def _ablated_list(a, ablated) -> list[tuple[int, int]]:
    return [(int(l), int(h)) for l, h in (ablated or []) if 1 <= l <= a.depth and 1 <= h <= a.num_heads]


def intervention(image, key, removed, ablated, ablation, grey, request, progress):
    """The :class:`vit.Intervention` of the shown analysis, ``removed`` patches and ``ablated`` heads (kept or run)."""
    a = kept(key)
    removed, ablated = _removed_list(a, removed), _ablated_list(a, ablated)
    ablation = validate.choice("ablation", ablation, ("zero", "mean"))
    def run():
        with runs.model_turn(request, image, key, 2.0 + bool(grey), "What if", progress, TAB) as (setting, pil):
            return gpu.run_intervention(setting, pil, removed, ablated, ablation, bool(grey))

    return _kept.remember((key, tuple(removed), tuple(ablated), ablation, bool(grey)), run)


def result_html(w, lang: str = "en") -> str:
    """The top-k before and after, side by side, the followed class in bold."""
    rows = []
    for i in range(max(len(w.topk_before), len(w.topk))):
        cells = []
        for preds in (w.topk_before, w.topk):
            p = preds[i] if i < len(preds) else None
            text = "" if p is None else f"{html.escape(class_name(p.label, lang))} {p.prob:.1%}"
            cells.append(f"<td>{'<b>' + text + '</b>' if p is not None and p.index == w.target else text}</td>")
        rows.append(f"<tr><td>{i + 1}</td>{''.join(cells)}</tr>")
    grey = "" if w.grey_prob is None else i18n.text("result-grey", lang, p=f"{w.grey_prob:.1%}")
    change = whatif_views.change_words(w, lang) or i18n.text("result-nothing", lang)
    before, after = i18n.text("result-before", lang), i18n.text("result-after", lang)
    return (f'<div class="whatif-result"><p><b>p({html.escape(class_name(w.label, lang))})</b>: {w.prob_before:.1%} → '
            f"<b>{w.prob_after:.1%}</b>{grey} <span class='whatif-change'>({html.escape(change)})</span></p>"
            f"<table><thead><tr><th>#</th><th>{before}</th><th>{after}</th></tr></thead><tbody>{''.join(rows)}"
            f"</tbody></table></div>")


def cost_words(a, lang: str = "en") -> str:
    forwards = importance_forwards(a.depth, a.num_heads)
    seconds = meter.estimated_seconds(costs.estimate(meter.analysis_setting(a))) * forwards
    return i18n.text("cost-words", lang, L=a.depth, h=a.num_heads, forwards=f"{forwards:.0f}",
                     seconds=max(seconds, 0.1))


@handler
def show_page(image: object, key: str | None, removed, ablated, ablation: str, grey: bool, opacity: Number,
              colormap: str, screen: str | bool = "", tab_on_screen: str = TAB, progress=gr.Progress(),
              request: gr.Request = None):
    """The tab's pictures for what is taken away now (one model run in its turn, or what is kept)."""
    if tab_on_screen != TAB or key is None:
        return {}
    a = kept(key)
    lang = language_of(request)
    if not a.has_classifier:
        note = f"**{i18n.text('whatif-title-short', lang)}** {i18n.text('no-classifier-card', lang)}"
        return {"whatif-map": None, "whatif-map-caption": note, "whatif-result": "", "whatif-heads": None,
                "whatif-heads-caption": "", "whatif-cost": ""}
    w = intervention(image, key, removed, ablated, ablation, grey, request, progress)
    importance = _kept.get((key, w.ablation))
    projector, _ = inputs.screen(screen, TAB)
    shown = dict(opacity=inputs.opacity(opacity, DEFAULTS.opacity), cmap=inputs.colormap_name(colormap),
                 projector=projector, lang=lang)
    view = registry.draw(w, "whatif-map", Display(**shown, frame=inputs.screen(screen, TAB, "whatif-map")[1]))
    values, label = importance if importance is not None else (None, "")
    grid = whatif_views.HeadGrid(a.depth, a.num_heads, w.ablated, values, label, w.ablation)
    heads = registry.draw(grid, "whatif-heads", Display(**shown, frame=inputs.screen(screen, TAB, "whatif-heads")[1]))
    return {"whatif-map": view, "whatif-map-caption": caption(view), "whatif-result": result_html(w, lang),
            "whatif-heads": heads, "whatif-heads-caption": caption(heads), "whatif-cost": cost_words(a, lang)}


@handler
def click_map(key: str | None, removed, clicked: str = "", request: gr.Request = None):
    """A click on the map: that patch is removed, or put back (the new list of removed patches)."""
    if key is None:
        return gr.skip()
    a = kept(key)
    cell = inputs.clicked_cell(clicked, *a.grid)
    if cell is None:
        return gr.skip()
    removed = set(_removed_list(a, removed)) ^ {cell[0] * a.grid[1] + cell[1]}
    if len(removed) >= a.grid[0] * a.grid[1]:
        raise InputError(i18n.text("whatif-one-stays", language_of(request)))
    return sorted(removed)


@handler
def click_heads(key: str | None, ablated, clicked: str = ""):
    """A click on the grid of heads: that head is switched off, or back on (the new list of heads off)."""
    if key is None:
        return gr.skip()
    a = kept(key)
    cell = inputs.clicked_cell(clicked, a.depth, a.num_heads)
    if cell is None:
        return gr.skip()
    return [list(p) for p in sorted(set(_ablated_list(a, ablated)) ^ {(cell[0] + 1, cell[1] + 1)})]


@handler
def by_fraction(image: object, key: str | None, fraction: Number, order: str, which: str, progress=gr.Progress(),
                request: gr.Request = None):
    """"Keep only the top x %", "Remove the top x %", "Remove a random x %": the patches, ranked."""
    if key is None:
        raise InputError(i18n.text("whatif-first", language_of(request)))
    import torch  # noqa: PLC0415 - loaded by then

    from vit.interventions.run import ranked  # noqa: PLC0415

    a = kept(key)
    fraction = inputs.clamp(fraction, 5, 95, 30) / 100
    order = validate.choice("order", order, ORDERS)
    n = a.grid[0] * a.grid[1]
    if which == "random" or order == "random":
        chosen = ranked(torch.zeros(a.grid), fraction, "random", seed=0)
    elif order == "rollout":
        chosen = ranked(torch.as_tensor(a.rollout()), fraction)
    else:
        def explained():
            with runs.model_turn(request, image, key, forward_passes(order, *a.grid), METHODS[order].title, progress,
                                 TAB) as (setting, pil):
                return gpu.run_explanation(setting, pil, order, int(a.topk[0].index))

        e, _ = _kept.remember((key, "explain", order), explained)
        chosen = ranked(e.map, fraction)
    if which == "keep":
        chosen = sorted(set(range(n)) - set(chosen))
    if len(chosen) >= n:
        chosen = chosen[1:]  # at least one patch stays
    return chosen


@handler
def importance_page(image: object, key: str | None, ablation: str, progress=gr.Progress(), request: gr.Request = None):
    """"Head importance": the top-1's drop with each head off; outside ZeroGPU each head takes a turn of its own."""
    lang = language_of(request)
    if key is None:
        raise InputError(i18n.text("whatif-first", lang))
    a = kept(key)
    if not a.has_classifier:
        raise InputError(i18n.text("no-classifier-card", lang))
    ablation = validate.choice("ablation", ablation, ("zero", "mean"))
    factor = importance_forwards(a.depth, a.num_heads)
    seconds = meter.estimated_seconds(costs.estimate(meter.analysis_setting(a))) * factor
    runs.check_duration(seconds, i18n.text("what-importance", lang), lang)
    target = int(a.topk[0].index)
    progress = progress_in(progress, request)
    t0 = time.perf_counter()
    if gpu.spaces is not None:  # the GPU worker runs it whole: one turn
        def whole():
            with runs.model_turn(request, image, key, factor, "Head importance", progress, TAB) as (setting, pil):
                return gpu.run_head_importance(setting, pil, target, ablation), a.topk[0].label

        _kept.remember((key, ablation), whole)
    else:
        per_head = seconds / (a.depth * a.num_heads)  # a head's turn, on average: at most one forward pass
        _kept.remember((key, ablation), lambda: _importance_by_head(image, key, target, ablation, per_head, request,
                                                                    progress))
    return i18n.text("cost-measured", lang, words=cost_words(a, lang), seconds=time.perf_counter() - t0)


def _importance_by_head(image, key: str, target: int, ablation: str, per_head_s: float, request, progress):
    """Head importance with a turn at the model per head (others go first between them), while its page is there."""
    setting, pil = runs.shown_image(request, image, key, TAB)
    session_name = session_of(request)
    session = SESSIONS.get(session_name)
    deadline = time.monotonic() + runs.PATIENCE_S

    def turn():
        if session.ended:  # its page is gone: nobody waits for the rest
            raise runs.ClientGone(runs.GONE)
        return take_turn(fair_queue(), session_name, per_head_s, resource=setting,
                         give_up=lambda: time.monotonic() > deadline, wanted=lambda: not session.ended)

    def on_layer(done: int, total: int) -> None:
        progress(0.3 + 0.7 * done / total, "progress-importance", n=done, total=total)

    progress(0.05, "progress-importance-waiting")
    try:
        drops = gpu.run_head_importance(setting, pil, target, ablation, on_layer=on_layer, turn=turn)
    except Withdrawn:  # its page went while it waited for a turn
        raise runs.ClientGone(runs.GONE) from None
    RUNS["whatif"] += 1
    return drops, kept(key).topk[0].label


@handler
def swap(key: str | None, removed):
    """"Swap": the patches kept become the removed ones (nothing removed: nothing to swap)."""
    if key is None:
        return gr.skip()
    a = kept(key)
    removed = set(_removed_list(a, removed))
    return [i for i in range(a.grid[0] * a.grid[1]) if i not in removed] if removed else gr.skip()


def new_analysis(key: str | None):
    """A new analysis: every patch back, every head on."""
    return [], []


def build(c: dict) -> None:
    with gr.Tab(t("tab-whatif"), id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        c["whatif-removed"] = gr.State([])  # patch indices taken away (small, checked against the analysis)
        c["whatif-ablated"] = gr.State([])  # [layer, head] pairs switched off, 1-based
        with gr.Row(equal_height=False):
            picture(c, "whatif-map")
            with gr.Column(min_width=PICTURE_MIN_WIDTH):
                c["whatif-result"] = gr.HTML("", elem_id="whatif-result")
                with gr.Row(equal_height=True):
                    c["whatif-fraction"] = gr.Slider(5, 95, value=30, step=5, label=t("whatif-fraction"),
                                                     elem_id="whatif-fraction", min_width=240)
                    c["whatif-order"] = gr.Dropdown(order_choices(), value="rollout", label=t("whatif-order"),
                                                    elem_id="whatif-order", min_width=200)
                with gr.Row(equal_height=True):
                    c["whatif-keep-top"] = gr.Button(t("whatif-keep-top"), size="sm", elem_id="whatif-keep-top")
                    c["whatif-remove-top"] = gr.Button(t("whatif-remove-top"), size="sm", elem_id="whatif-remove-top")
                    c["whatif-remove-random"] = gr.Button(t("whatif-remove-random"), size="sm",
                                                          elem_id="whatif-remove-random")
                    c["whatif-swap"] = gr.Button(t("whatif-swap"), size="sm", elem_id="whatif-swap")
                    c["whatif-all-back"] = gr.Button(t("whatif-all-back"), size="sm", elem_id="whatif-all-back")
                c["whatif-grey"] = gr.Checkbox(False, label=t("whatif-grey"), elem_id="whatif-grey")
            pinned(c, TAB)
        with gr.Row(equal_height=False):
            picture(c, "whatif-heads")
            with gr.Column(min_width=PICTURE_MIN_WIDTH):
                c["whatif-ablation"] = gr.Dropdown([(t("zero-output"), "zero"), (t("mean-output"), "mean")],
                                                   value="zero", label=t("whatif-ablation"),
                                                   elem_id="whatif-ablation")
                with gr.Row(equal_height=True):
                    c["whatif-importance"] = gr.Button(t("whatif-importance"), variant="primary",
                                                       elem_id="whatif-importance")
                    c["whatif-heads-on"] = gr.Button(t("whatif-heads-on"), elem_id="whatif-heads-on")
                c["whatif-cost"] = gr.Markdown("", elem_id="whatif-cost")


def wire(c: dict) -> None:
    show = dict(fn=page_event(show_page, SHOW_OUTPUTS),
                inputs=outputs(c, ["image", "analysis-key", *STATE, "whatif-ablation", "whatif-grey", "opacity",
                                   "colormap", "screen", "tab-on-screen"]),
                outputs=outputs(c, SHOW_OUTPUTS), preprocess=False, concurrency_id="model",
                concurrency_limit=MODEL_WAITERS, trigger_mode="always_last",
                show_progress="minimal")  # no overlay over the map: a click while it redraws is not lost
    quick = dict(preprocess=False, queue=False, show_progress="hidden")
    changed(c, "analysis-key")(new_analysis, c["analysis-key"], outputs(c, STATE), **quick,
                               **private("whatif_new_analysis")).then(**show, **private("whatif_analysed"))
    c[f"tab-{TAB}"].select(lambda: TAB, None, c["tab-on-screen"], queue=False, show_progress="hidden",
                           **private(f"show_tab_{TAB}")).then(**show, **private("whatif_shown"))
    clicked = dict(preprocess=False, show_progress="hidden")  # queued: clicks count against the client's limits
    on_click(c, "whatif-map", click_map, outputs(c, ["analysis-key", "whatif-removed"]), c["whatif-removed"],
             **clicked, **private("whatif_click_map")).then(**show, **private("whatif_clicked_map"))
    on_click(c, "whatif-heads", click_heads, outputs(c, ["analysis-key", "whatif-ablated"]), c["whatif-ablated"],
             **clicked, **private("whatif_click_heads")).then(**show, **private("whatif_clicked_heads"))
    for name, which in (("whatif-keep-top", "keep"), ("whatif-remove-top", "top"), ("whatif-remove-random", "random")):
        c[name].click(by_fraction,
                      [*outputs(c, ["image", "analysis-key", "whatif-fraction", "whatif-order"]), gr.State(which)],
                      c["whatif-removed"], preprocess=False, concurrency_id="model", concurrency_limit=MODEL_WAITERS,
                      show_progress_on=[c["whatif-map"]], **private(name.replace("-", "_"))).then(
            **show, **private(name.replace("-", "_") + "_shown"))
    c["whatif-swap"].click(swap, outputs(c, ["analysis-key", "whatif-removed"]), c["whatif-removed"], **quick,
                           **private("whatif_swap")).then(**show, **private("whatif_swap_shown"))
    c["whatif-all-back"].click(lambda: [], None, c["whatif-removed"], **quick, **private("whatif_all_back")).then(
        **show, **private("whatif_all_back_shown"))
    c["whatif-heads-on"].click(lambda: [], None, c["whatif-ablated"], **quick, **private("whatif_heads_on")).then(
        **show, **private("whatif_heads_on_shown"))
    c["whatif-importance"].click(importance_page,
                                 outputs(c, ["image", "analysis-key", "whatif-ablation"]), c["whatif-cost"],
                                 preprocess=False, concurrency_id="model", concurrency_limit=MODEL_WAITERS,
                                 show_progress_on=[c["whatif-heads"]], **private("whatif_importance")).then(
        **show, **private("whatif_importance_shown"))
    on(c, ("opacity", "colormap", "screen"), "whatif_redraw",
       others=(c["whatif-ablation"].change, c["whatif-grey"].change), **show)
    wire_pictures(c, TAB, clicks=False)
