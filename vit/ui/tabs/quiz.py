""""Quiz me" on a tab: the lesson's question for what the tab shows, answered from the analysis shown."""

from __future__ import annotations

import gradio as gr

from vit import i18n
from vit.errors import InputError
from vit.lesson import predict
from vit.ui import inputs
from vit.ui.events import handler, named, page_event
from vit.ui.lang import of as language_of
from vit.ui.lang import t
from vit.ui.state import analysis_store, kept
from vit.ui.tabs import lesson
from vit.ui.tabs.parts import PICTURE_MIN_WIDTH, changed, on_click, outputs, private

QUESTIONS = {"patches": "tokens", "depth": "layer", "attention": "patch"}  # tab -> the lesson's question for it
DISPLAY_INPUTS = ("layer", "head", "opacity", "colormap", "screen")


def question_of(tab: str) -> predict.PredictStep:
    return next(q for q in predict.PREDICT if q.kind == QUESTIONS[tab])


def names(tab: str) -> dict[str, str]:
    return {part: f"quiz-{tab}" + ("" if part == "switch" else f"-{part}")
            for part in ("switch", "panel", "text", "guess", "check", "picture", "answer", "tally")}


def build(c: dict, tab: str) -> None:
    """``tab``'s switch, and its panel (hidden until the switch is ticked): call inside the tab, above its pictures."""
    n, q = names(tab), question_of(tab)
    c[n["switch"]] = gr.Checkbox(False, label=t("quiz-me"), elem_id=n["switch"], elem_classes="quiz-switch",
                                 container=False)
    with gr.Row(equal_height=False, visible=False, elem_id=n["panel"], elem_classes="quiz-panel") as c[n["panel"]]:
        with gr.Column(scale=1, min_width=PICTURE_MIN_WIDTH):
            c[n["text"]] = gr.Markdown("", elem_id=n["text"], elem_classes="caption")
            if q.answer == "number":
                with gr.Row(equal_height=True):
                    c[n["guess"]] = gr.Number(label=t("lesson-guess"), precision=0, elem_id=n["guess"], min_width=120)
                    c[n["check"]] = gr.Button(t("lesson-check"), variant="primary", elem_id=n["check"],
                                              min_width=120)
            c[n["answer"]] = gr.Markdown("", elem_id=n["answer"])
            c[n["tally"]] = gr.Markdown("", elem_id=n["tally"])
        with gr.Column(scale=1, min_width=PICTURE_MIN_WIDTH, elem_classes="picture quiz-picture"):
            c[n["picture"]] = gr.Image(type="pil", format="png", interactive=False, show_label=False, buttons=[],
                                       elem_id=n["picture"], elem_classes=["picture-frame", "clickable"])
            c[f"{n['picture']}-click"] = gr.Button(n["picture"], elem_id=f"{n['picture']}-click",
                                                   elem_classes="hidden-helper")  # parts.on_click


def _ask(tab: str, on: bool, key: str | None, layer, head, opacity, colormap, screen, request) -> dict:
    n, q = names(tab), question_of(tab)
    if on is not True:
        return {n["panel"]: gr.update(visible=False)}
    lang = language_of(request)
    out = {n["panel"]: gr.update(visible=True), n["answer"]: "", n["picture"]: None}
    if q.answer == "number":
        out[n["guess"]] = gr.update(value=None)
    a = analysis_store().get(key) if key is not None else None
    if a is None:
        out[n["text"]] = i18n.text("lesson-first", lang)
        return out
    display = lesson.frame_display(a, layer, head, opacity, colormap, screen, tab, n["picture"], lang, request)
    out[n["text"]] = predict.question(q, a, lang)
    out[n["picture"]] = lesson.before_picture(q, a, display, lang)
    return out


def _answered(tab: str, key: str, guess, score, layer, head, opacity, colormap, screen, request) -> dict:
    """The guess beside the answer; a guess that is no answer, a sentence beside the box (as the lesson's)."""
    n, q = names(tab), question_of(tab)
    lang = language_of(request)
    try:
        a = kept(key)
        display = lesson.frame_display(a, layer, head, opacity, colormap, screen, tab, n["picture"], lang, request)
        verdict, text, picture = lesson.revealed(q, a, guess, None, display, lang)
    except InputError as exc:
        return {n["answer"]: exc.words(lang)}
    score = lesson.counted(score, key, q, verdict)
    tally = predict.tally_text(score, lang)
    return {n["answer"]: text, n["picture"]: picture, "lesson-score": score, n["tally"]: tally, "lesson-tally": tally}


def handlers(tab: str) -> dict:
    """``tab``'s quiz events: the switch (or a new analysis) asks, a typed number or a click answers."""

    @handler
    def ask(on: bool, key: str | None, layer, head, opacity, colormap, screen, request: gr.Request = None) -> dict:
        """The switch ticked (or a new analysis while it is): the question, and the picture to answer on, if any."""
        return _ask(tab, on, key, layer, head, opacity, colormap, screen, request)

    @handler
    def typed(key: str | None, score, layer, head, opacity, colormap, screen, guess=None,
              request: gr.Request = None) -> dict:
        return {} if key is None else _answered(tab, key, guess, score, layer, head, opacity, colormap, screen,
                                                request)

    @handler
    def clicked(key: str | None, score, layer, head, opacity, colormap, screen, clicked: str = "",
                request: gr.Request = None) -> dict:
        """A click on the patch grid drawn for "click the patch": the cell the page says was clicked."""
        cell = None if key is None else inputs.clicked_cell(clicked, *kept(key).grid)
        return {} if cell is None else _answered(tab, key, cell, score, layer, head, opacity, colormap, screen,
                                                 request)

    return {"ask": ask, "typed": typed, "clicked": clicked}


def wire(c: dict, tab: str) -> None:
    n, q, fns = names(tab), question_of(tab), handlers(tab)
    shown = _shown(c, tab)
    asking = dict(fn=named(fns["ask"], shown), outputs=outputs(c, shown), preprocess=False, show_progress="hidden")
    given = [c[n["switch"]], c["analysis-key"], *outputs(c, DISPLAY_INPUTS)]
    # The page's script sets the tab's own pictures aside while its quiz is on (CSS: .quizzing); then the server asks.
    aside = (f"(on, ...rest) => {{ window.vitAnatomy && window.vitAnatomy.quizzing('tab-{tab}', on); "
             "return [on, ...rest]; }")
    c[n["switch"]].change(inputs=given, js=aside, **asking, **private(f"quiz_{tab}"))
    c["language-switched"].then(lesson.tally, c["lesson-score"], c[n["tally"]], queue=False, show_progress="hidden",
                                **private(f"quiz_{tab}_tally_language"))  # "Right so far" in the new language
    answered = [n["answer"], n["picture"], "lesson-score", n["tally"], "lesson-tally"]
    answer = dict(outputs=outputs(c, answered), preprocess=False, show_progress="hidden")
    if q.answer == "number":
        fn = named(fns["typed"], answered)
        guess = [c["analysis-key"], c["lesson-score"], *outputs(c, DISPLAY_INPUTS), c[n["guess"]]]
        c[n["check"]].click(fn, guess, **answer, **private(f"quiz_{tab}_check"))
        c[n["guess"]].submit(fn, guess, **answer, **private(f"quiz_{tab}_submit"))
    else:
        on_click(c, n["picture"], named(fns["clicked"], answered),
                 [c["analysis-key"], c["lesson-score"], *outputs(c, DISPLAY_INPUTS)], **answer,
                 **private(f"quiz_{tab}_click"))


def wire_new_analysis(c: dict) -> None:
    """A new analysis: each quiz that is on asks again, and the lesson on screen shows its step; one event for all
    (each event costs gradio's page a walk over all its components: docs/app.md, "One listener a change")."""
    tabs = tuple(QUESTIONS)
    shown = [x for tab in tabs for x in _shown(c, tab)] + list(lesson.OUTPUTS)
    steps = ["lesson-step", "tab-on-screen", "lesson-predict-on"]

    @handler
    def asked_anew(key: str | None, layer, head, opacity, colormap, screen, step, tab_on_screen, predict_on,
                   *switches, request: gr.Request = None) -> dict:
        out = {}
        for tab, on in zip(tabs, switches):
            if on is True:
                out.update(_ask(tab, on, key, layer, head, opacity, colormap, screen, request))
        if tab_on_screen == lesson.TAB:
            out.update(lesson.lesson(key, step, 0, layer, head, opacity, colormap, screen, tab_on_screen, predict_on,
                                     request))
        return out

    changed(c, "analysis-key")(page_event(asked_anew, tuple(shown)),
                               [c["analysis-key"], *outputs(c, DISPLAY_INPUTS), *outputs(c, steps),
                                *(c[names(t)["switch"]] for t in tabs)],
                               outputs(c, shown), preprocess=False, show_progress="hidden",
                               trigger_mode="always_last", **private("asked_anew"))


def _shown(c: dict, tab: str) -> list[str]:
    """The elem ids a question of ``tab``'s quiz shows."""
    n = names(tab)
    return [n["panel"], n["text"], n["answer"], n["picture"], *([n["guess"]] if n["guess"] in c else [])]
