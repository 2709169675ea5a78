"""The "Why this class?" tab: an explanation map for a picked class, "why A rather than B?", its test, a comparison."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, replace

import gradio as gr

from vit import cost as costs
from vit import i18n, validate
from vit.bounded import Kept
from vit.errors import InputError
from vit.explanations.methods import AUTO, DEFAULT_METHOD, METHODS, default_gradcam_layer, forward_passes
from vit.i18n.names import class_name
from vit.model.families import class_names
from vit.ui import gpu, inputs, meter, runs
from vit.ui.events import DEFAULTS, handler, named, page_event
from vit.ui.inputs import Number
from vit.ui.lang import of as language_of
from vit.ui.lang import progress_in, t
from vit.ui.pictures import caption
from vit.ui.state import SESSIONS, kept, session_of
from vit.ui.tabs.parts import (
    MODEL_WAITERS,
    PICTURE_MIN_WIDTH,
    changed,
    on,
    outputs,
    picture,
    pinned,
    private,
    wire_pictures,
)
from vit.views import registry, why
from vit.views.registry import Display
from vit.views.why import comparison_headers

TAB = "why"
TARGETS_SHOWN = 10  # classes offered in the list: the top 10 (a click on a prediction adds it if it is not there)
MAP_OUTPUTS = ("why-map", "why-map-caption", "why-curves", "why-curves-caption")  # the curves go with another map
CURVE_OUTPUTS = ("why-curves", "why-curves-caption")
TARGET_OUTPUTS = ("why-target", "why-versus", "why-layer", "why-cost", "why-curves", "why-curves-caption",
                  "why-table", "why-map", "why-map-caption")
NONE = "none"  # the rival list's "no rival": the plain question
DEFAULT_LAYER = 0  # the layer list's "default" entry: the model's own default block (methods.default_gradcam_layer)
PICK_OUTPUTS = ("why-target", "tabs", "tab-on-screen")
KEPT = 256  # explanations and curve sets remembered (each ~0.2 MB at P = 16)

_kept = Kept(KEPT)  # Asked -> (Explanation, curves)


def methods() -> list[tuple[str, str]]:
    """(title, key) pairs for the method radio, the class-specific methods first."""
    return [(t(f"method-{m.name}") if f"method-{m.name}" in i18n.PAGE else m.title, m.name)
            for m in sorted(METHODS.values(), key=lambda m: not m.class_specific)]


def _class_names(a) -> list[str]:
    return class_names(a.model)


def target_choices(a, shown: int = TARGETS_SHOWN, lang: str = "en") -> list[tuple[str, int]]:
    """The analysis' top classes as (label with probability, class index), most probable first."""
    names = _class_names(a)
    order = a.probs.argsort(descending=True, stable=True)[:shown].tolist()
    return [(f"{class_name(names[i], lang)} ({float(a.probs[i]):.1%})", int(i)) for i in order]


def versus_choices(a, lang: str = "en") -> list[tuple[str, str]]:
    """The rivals of "why A rather than B?": the strongest other class, none, then the top classes (as text)."""
    return ([(i18n.text("why-versus-auto", lang), AUTO), (i18n.text("why-versus-none", lang), NONE)]
            + [(label, str(i)) for label, i in target_choices(a, lang=lang)])


def _versus(a, method: str, value, target: int, lang: str) -> int | str | None:
    """The rival asked for: AUTO, None (the plain question, and every method that cannot contrast), or a class."""
    if not METHODS[method].contrastive or value in (None, "", NONE):
        return None
    if value == AUTO:
        return AUTO
    versus = validate.class_index(value, len(a.probs), "versus")
    if versus == target:
        raise InputError(i18n.text("why-versus-same", lang))
    return versus


def cost_words(a, method: str, lang: str = "en") -> str:
    """What a map costs, before it runs: forward passes of the analysis' setting, and the seconds they take here."""
    passes = forward_passes(method, *a.grid)
    seconds = meter.estimated_seconds(costs.estimate(meter.analysis_setting(a))) * passes
    time = i18n.text("about-seconds", lang, seconds=seconds) if seconds >= 0.05 else i18n.text("under-a-tenth", lang)
    return i18n.text("why-cost", lang, passes=f"{passes:g}", seconds=time)


def layer_choices(a, lang: str = "en") -> list[tuple[str, int]]:
    """Grad-CAM's blocks for the analysis' model and depth: "default (block k)" first, then 1..L."""
    default = default_gradcam_layer(a.model, a.depth)
    return ([(i18n.text("why-default-block", lang, n=default), DEFAULT_LAYER)]
            + [(i18n.text("why-block", lang, n=i), i) for i in range(1, a.depth + 1)])


def _layer(a, method: str, layer: Number) -> int | None:
    """The Grad-CAM block asked for (None: the default, or another method, which takes none)."""
    if method != "gradcam" or layer in (None, "", DEFAULT_LAYER):
        return None
    return validate.class_index(layer, a.depth + 1, "Grad-CAM's layer") or None


@handler
def targets(key: str | None, method: str = DEFAULT_METHOD, request: gr.Request = None):
    """A new analysis: its top classes in the list, the top-1 chosen, old curves and table cleared, the map's cost."""
    from vit.explanations.maps import method_name  # noqa: PLC0415 - imports torch

    if key is None:
        return {}
    lang = language_of(request)
    a = kept(key)
    choices = target_choices(a, lang=lang)
    cleared = {"why-curves": None, "why-curves-caption": "", "why-table": ""}
    if not choices:  # a backbone: nothing to explain; the map says why
        return {"why-target": gr.update(choices=[], value=None), "why-versus": gr.update(choices=[], value=None),
                **cleared, "why-map": None,
                "why-map-caption": f"**{i18n.text('why-title-short', lang)}** {i18n.text('no-classifier-card', lang)}"}
    return {"why-target": gr.update(choices=choices, value=choices[0][1]),
            "why-versus": gr.update(choices=versus_choices(a, lang), value=AUTO),
            "why-cost": cost_words(a, method_name(method), lang),
            "why-layer": gr.update(choices=layer_choices(a, lang), value=DEFAULT_LAYER), **cleared}


@handler
def cost_page(key: str | None, method: str, request: gr.Request = None):
    """The line under the method: what its map costs on this analysis' setting, before it runs (one output)."""
    from vit.explanations.maps import method_name  # noqa: PLC0415 - imports torch

    return "" if key is None else cost_words(kept(key), method_name(method), language_of(request))


@handler
def pick(key: str | None, evt: gr.SelectData, request: gr.Request = None):
    """A click on a prediction of the top-k: this tab opens with that class."""
    if key is None or evt is None:
        return {}
    lang = language_of(request)
    a = kept(key)
    label = str(evt.value if not isinstance(evt.value, dict) else evt.value.get("label", ""))
    names = _class_names(a)
    shown = [class_name(n, lang) for n in names]  # the predictions name a shape in the page's language
    numbered = re.fullmatch(r"(.*) \((\d+)\)", label)  # "crane (517)": ImageNet names two classes "crane"
    if numbered and int(numbered[2]) < len(names) and names[int(numbered[2])] == numbered[1]:
        index = int(numbered[2])
    elif label in names:
        index = names.index(label)
    elif label in shown:
        index = shown.index(label)
    else:
        return {}
    choices = target_choices(a, lang=lang)
    if index not in [i for _, i in choices]:
        choices.append((f"{shown[index]} ({float(a.probs[index]):.1%})", index))
    return {"why-target": gr.update(choices=choices, value=index), "tabs": gr.Tabs(selected=TAB),
            "tab-on-screen": TAB}


def _target(a, target) -> int:
    return validate.class_index(target, len(a.probs), "target")


@dataclass(frozen=True)
class Asked:
    """What an explanation is of: an analysis (its store key), a method, a class, and the test's baseline."""

    key: str
    method: str
    target: int
    baseline: str | None = None  # None: the map alone, no curves
    layer: int | None = None  # Grad-CAM's block; None: the model's default (and every other method)
    versus: int | str | None = None  # the rival class, AUTO, or None (the plain question; every non-contrastive map)

    def map_only(self) -> Asked:
        return replace(self, baseline=None)


def _recall(asked: Asked) -> tuple | None:
    """(Explanation, curves) kept for ``asked``; a map alone is also in any entry that has curves."""
    found = _kept.get(asked)
    if found is None and asked.baseline is None:
        found = _kept.find(lambda k: k.map_only() == asked)
    return found


def _explained(image: object, key: str, method: str, target: Number, baseline: str | None, request, progress,
               layer: Number = DEFAULT_LAYER, versus: str | None = AUTO) -> tuple:
    """(Explanation, curves) for this analysis, from what is kept or by running the model in its turn."""
    from vit.explanations.maps import method_name  # noqa: PLC0415 - imports torch

    a = kept(key)
    method = method_name(method)
    target = _target(a, target)
    asked = Asked(key, method, target, baseline, _layer(a, method, layer),
                  _versus(a, method, versus, target, language_of(request)))
    found = _recall(asked)
    if found is not None:
        return found
    passes = forward_passes(asked.method, *a.grid) + (gpu.CURVES_FACTOR if baseline else 0)
    running = "progress-explaining-testing" if baseline else "progress-method-running"
    with runs.model_turn(request, image, key, passes, METHODS[method].title, progress, TAB, running) as (setting, pil):
        result = gpu.run_explanation(setting, pil, asked.method, asked.target, curves=baseline is not None,
                                     baseline=baseline or "mean", layer=asked.layer, versus=asked.versus)
    _kept[asked] = result
    return result


@handler
def explain_page(image: object, key: str | None, target: Number, method: str, opacity: Number, colormap: str,
                 screen: str | bool = "", tab_on_screen: str = TAB, layer: Number = DEFAULT_LAYER,
                 versus: str | None = AUTO, progress=gr.Progress(), request: gr.Request = None):
    """The map for the chosen class and method, over the image (drawn only while this tab is on screen)."""
    if tab_on_screen != TAB or key is None or target is None:
        return {}
    session = SESSIONS.get(session_of(request))
    number = session.explained = SESSIONS.next_number()
    e, _ = _explained(image, key, method, target, None, request, progress, layer, versus)
    if session.explained != number:  # a newer map of this tab (another class, a new frame) shows instead
        return {}
    projector, frame = inputs.screen(screen, TAB, "why-map")
    display = Display(opacity=inputs.opacity(opacity, DEFAULTS.opacity), cmap=inputs.colormap_name(colormap),
                      projector=projector, frame=frame, lang=language_of(request))
    view = registry.draw(e, "why-map", display)
    out = {"why-map": view, "why-map-caption": caption(view)}
    shown = (key, e.target, e.method, e.layer, e.versus)
    if session.tested not in (None, shown):  # the curves on screen test another map: they go (Test it draws this one's)
        session.tested = None
        out.update({"why-curves": None, "why-curves-caption": ""})
    return out


@handler
def test_page(image: object, key: str | None, target: Number, method: str, baseline: str | None,
              screen: str | bool = "", layer: Number = DEFAULT_LAYER, versus: str | None = AUTO,
              progress=gr.Progress(), request: gr.Request = None):
    """"Test it": the deletion and insertion curves of the map, beside a random order."""
    if key is None or target is None:
        raise InputError(i18n.text("why-first", language_of(request)))
    from vit.explanations.perturb import BASELINES  # noqa: PLC0415

    baseline = validate.choice("baseline", baseline, BASELINES)
    e, curves = _explained(image, key, method, target, baseline, request, progress, layer, versus)
    projector, frame = inputs.screen(screen, TAB, "why-curves")
    display = Display(projector=projector, frame=frame, lang=language_of(request))
    view = registry.draw((e, curves), "why-curves", display)
    SESSIONS.get(session_of(request)).tested = (key, e.target, e.method, e.layer, e.versus)  # the map tested
    return {"why-curves": view, "why-curves-caption": caption(view)}


@handler
def compare_page(image: object, key: str | None, target: Number, baseline: str | None,
                 layer: Number = DEFAULT_LAYER, versus: str | None = AUTO, progress=gr.Progress(),
                 request: gr.Request = None):
    """"Compare all methods": every method explained and tested on this class, as a table."""
    if key is None or target is None:
        raise InputError(i18n.text("why-first", language_of(request)))
    from vit.explanations.perturb import BASELINES  # noqa: PLC0415

    baseline = validate.choice("baseline", baseline, BASELINES)
    results, shown = [], progress_in(progress, request)
    for i, method in enumerate(METHODS):
        shown(i / len(METHODS), "progress-method-of", what=METHODS[method].title, n=i + 1, total=len(METHODS))
        results.append(_explained(image, key, method, target, baseline, request, gr.Progress(), layer, versus))
    return {"why-table": comparison_html(results, baseline, language_of(request))}


def comparison_html(results: list, baseline: str, lang: str = "en") -> str:
    """The comparison as an HTML table, the best value of each curve column in bold."""
    rows = why.comparison_rows(results, lang)
    scored = rows[:-1]
    best_deletion = min(float(r[2]) for r in scored)
    best_insertion = max(float(r[3]) for r in scored)
    e = results[0][0]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in comparison_headers(lang))
    body = []
    for r in rows:
        cells = []
        for j, v in enumerate(r):
            bold = r in scored and ((j == 2 and float(v) == best_deletion) or (j == 3 and float(v) == best_insertion))
            cells.append(f"<td>{'<b>' if bold else ''}{html.escape(v)}{'</b>' if bold else ''}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    replaced = i18n.text("replaced-mean" if baseline == "mean" else "replaced-blur", lang)
    words = i18n.text("why-table-head", lang, label=html.escape(class_name(e.label, lang)), prob=f"{e.prob:.1%}",
                      replaced=replaced)
    return (f'<div class="why-table"><p>{words}</p><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}'
            f"</tbody></table></div>")


def build(c: dict) -> None:
    with gr.Tab(t("tab-why"), id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        # The map takes the height of the screen; the controls and the test sit beside it, over the curves.
        with gr.Row(equal_height=False):
            picture(c, "why-map")
            with gr.Column(min_width=PICTURE_MIN_WIDTH):
                with gr.Row(equal_height=True):  # the class and the method, wide enough for their names
                    c["why-target"] = gr.Dropdown([], label=t("why-target"),
                                                  elem_id="why-target", min_width=200, scale=1)
                    c["why-versus"] = gr.Dropdown([(t("why-versus-auto"), AUTO)], value=AUTO, label=t("why-versus"),
                                                  elem_id="why-versus", min_width=200, scale=1)
                c["why-method"] = gr.Dropdown(methods(), value=DEFAULT_METHOD, label=t("why-method"),
                                              elem_id="why-method", min_width=240)
                c["why-cost"] = gr.Markdown("", elem_id="why-cost", min_height=0)  # what the map costs, before it runs
                with gr.Row(equal_height=True):
                    c["why-baseline"] = gr.Dropdown([(t("grey-mean"), "mean"), (t("blurred"), "blur")], value="mean",
                                                    label=t("why-baseline"), elem_id="why-baseline",
                                                    min_width=240, scale=1)
                    c["why-layer"] = gr.Dropdown([(t("default"), DEFAULT_LAYER)], value=DEFAULT_LAYER,
                                                 label=t("why-layer"), elem_id="why-layer",
                                                 info=t("why-layer-info"), min_width=240, scale=1)
                    c["why-test"] = gr.Button(t("why-test"),
                                              variant="primary", elem_id="why-test", scale=2)
                picture(c, "why-curves")
            pinned(c, TAB)
        c["why-compare"] = gr.Button(t("why-compare"), elem_id="why-compare")
        c["why-table"] = gr.HTML("", elem_id="why-table")


def wire(c: dict) -> None:
    model_run = dict(preprocess=False, concurrency_id="model", concurrency_limit=MODEL_WAITERS,
                     trigger_mode="always_last")
    explain = dict(fn=page_event(explain_page, MAP_OUTPUTS),
                   inputs=outputs(c, ["image", "analysis-key", "why-target", "why-method", "opacity", "colormap",
                                      "screen", "tab-on-screen", "why-layer", "why-versus"]),
                   outputs=outputs(c, MAP_OUTPUTS), show_progress_on=[c["why-map"]], **model_run)
    changed(c, "analysis-key")(named(targets, TARGET_OUTPUTS), outputs(c, ["analysis-key", "why-method"]),
                               outputs(c, TARGET_OUTPUTS),
                               preprocess=False, show_progress="hidden", **private("why_targets")).then(
        **explain, **private("why_new_analysis"))
    c[f"tab-{TAB}"].select(lambda: TAB, None, c["tab-on-screen"], queue=False, show_progress="hidden",
                           **private(f"show_tab_{TAB}")).then(**explain, **private("why_shown"))
    c["predictions"].select(named(pick, PICK_OUTPUTS), c["analysis-key"], outputs(c, PICK_OUTPUTS),
                            preprocess=False, queue=False, show_progress="hidden", **private("why_pick")).then(
        **explain, **private("why_picked"))
    on(c, ("opacity", "colormap"), "why_map", others=(c["why-target"].input, c["why-method"].change,
                                                       c["why-layer"].input, c["why-versus"].input), **explain)
    # The cost as the method is picked, before its map runs (.input: the map's own listener is .change's only one).
    c["why-method"].input(cost_page, outputs(c, ["analysis-key", "why-method"]), c["why-cost"], queue=False,
                          show_progress="hidden", **private("why_cost"))
    c["why-test"].click(named(test_page, CURVE_OUTPUTS),
                        outputs(c, ["image", "analysis-key", "why-target", "why-method", "why-baseline", "screen",
                                    "why-layer", "why-versus"]),
                        outputs(c, CURVE_OUTPUTS), show_progress_on=[c["why-curves"]], **model_run,
                        **private("why_test"))
    c["why-compare"].click(named(compare_page, ("why-table",)),
                           outputs(c, ["image", "analysis-key", "why-target", "why-baseline", "why-layer",
                                       "why-versus"]),
                           c["why-table"],
                           show_progress_on=[c["why-table"]], **model_run, **private("why_compare"))
    wire_pictures(c, TAB)
    # Projector mode, a resized window, another tab's frame: the page's script measured the frames anew.
    changed(c, "screen")(**explain, **private("why_screen"))
