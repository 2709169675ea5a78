"""The "Lesson" tab: the guided walk through 11.4.1 → 11.4.7 with this image's numbers, also as a 16:9 PDF. "Predict
first" asks a question before five reveals; its tally lives in the tab's ``gr.State``, nothing of it on the server."""

from __future__ import annotations

from dataclasses import replace

import gradio as gr

from vit import i18n
from vit.errors import InputError
from vit.lesson import export as lesson_export
from vit.lesson import lesson_text, predict
from vit.lesson.predict import PredictStep
from vit.serve.queue import Busy, FairQueue, Replaced
from vit.ui import inputs, pictures
from vit.ui.events import DEFAULTS, handler, named, page_event
from vit.ui.inputs import Number
from vit.ui.lang import of as language_of
from vit.ui.lang import t
from vit.ui.state import analysis_store, kept, picture_folder, session_of
from vit.ui.tabs import whatif
from vit.ui.tabs.parts import MODEL_WAITERS, PICTURE_MIN_WIDTH, changed, on, on_click, outputs, private, show_tab
from vit.views import attention, base, registry
from vit.views import draw as drawing
from vit.views import whatif as whatif_views
from vit.views.registry import Display

TAB = "lesson"
ASK = ("lesson-ask", "lesson-guess", "lesson-check", "lesson-yes", "lesson-no", "lesson-answer")  # a question's
NAV = ("lesson-prev", "lesson-next")  # Previous off on the first step, Next off on the last
OUTPUTS = ("lesson-step", "lesson-progress", "lesson-text", "lesson-picture", "lesson-table", *ASK, *NAV)
INPUTS = ("analysis-key", "lesson-step", "layer", "head", "opacity", "colormap", "screen", "tab-on-screen",
          "lesson-predict-on")
ANSWER_OUTPUTS = ("lesson-answer", "lesson-tally", "lesson-score", "lesson-picture", "lesson-table")
# What an answer is drawn from: the image (the last question runs the model on it), the step, the tally.
ANSWER_INPUTS = ("image", "analysis-key", "lesson-step", "lesson-predict-on", "lesson-score", "layer", "head",
                 "opacity", "colormap", "screen")
NAV_WIDTH = 140  # px, the Previous and Next buttons
SAVE_JS = "() => window.vitAnatomy && window.vitAnatomy.saveDownload()"


def frame_display(a, layer: Number, head: Number, opacity: Number, colormap: str, screen, tab: str = TAB,
                  picture: str = "lesson-picture", lang: str = "en", request: gr.Request = None) -> Display:
    """A question's or step's picture: the page's controls, clamped, in ``picture``'s frame; no patch outlined."""
    projector, frame = inputs.screen(screen, tab, picture)
    return Display(layer=inputs.clamp(layer, 1, a.depth, a.depth), head=inputs.clamp(head, 1, a.num_heads, 1),
                   opacity=inputs.opacity(opacity, DEFAULTS.opacity), cmap=inputs.colormap_name(colormap),
                   projector=projector, frame=frame, lang=lang, marks=False)


def _asking(q: PredictStep | None, moved: bool) -> dict:
    """The question's controls: shown for a question, its last answer cleared (on a new step, the guess too)."""
    kind = q.answer if q is not None else ""
    guess = dict(value=None) if moved else {}
    return {"lesson-ask": gr.update(visible=q is not None), "lesson-guess": gr.update(visible=kind == "number",
                                                                                        **guess),
            "lesson-check": gr.update(visible=kind == "number"), "lesson-yes": gr.update(visible=kind == "yes_no"),
            "lesson-no": gr.update(visible=kind == "yes_no"), "lesson-answer": ""}


def proposal_view(a, display: Display, lang: str = "en") -> base.View:
    """"Remove these patches": rollout over the image, the proposed patches hatched as "What if?" hatches them."""
    size = registry.frame_sizes(registry.PICTURES["rollout-view"], a, display)[0]
    picture = drawing.overlay(a.image, a.rollout().numpy(), display.opacity, display.cmap, size)
    whatif_views.hatch(picture, a.grid, predict.proposal(a))
    return base.View(picture, i18n.text("proposal-caption", lang), title=i18n.text("proposal-title", lang))


def before_picture(q: PredictStep, a, display: Display, lang: str = "en") -> base.View | None:
    """The picture while the class guesses: the patch grid to click, the map asked about, or none."""
    if q.before is None or (q.kind in predict.NEEDS_CLASSIFIER and not a.has_classifier):
        return None
    if q.before == "whatif-proposal":
        return registry.as_shown(proposal_view(a, display, lang), display)
    view = registry.draw(a, q.before, display)
    return view if q.answer == "click" else replace(view, cells=None)


def nav(step: int, total: int) -> dict:
    return {"lesson-prev": gr.update(interactive=step > 0), "lesson-next": gr.update(interactive=step < total - 1)}


@handler
def lesson(key: str | None, step: Number, delta: Number, layer: Number, head: Number, opacity: Number, colormap: str,
           screen: str | bool = "", tab_on_screen: str = TAB, predict_on: bool = False,
           request: gr.Request = None) -> dict:
    """Step ``step + delta`` (``delta`` -1, 0 or +1), drawn only on screen; ``predict_on``: questions before reveals."""
    if tab_on_screen != TAB:
        return {}
    steps = predict.walk(predict_on is True)
    here, move = inputs.clamp(step, 0, len(steps) - 1, 0), inputs.clamp(delta, -1, 1, 0)
    step = min(max(here + move, 0), len(steps) - 1)
    if move != 0 and step == here:  # nowhere to turn to
        return nav(step, len(steps))
    item = steps[step]
    q = item if isinstance(item, PredictStep) else None
    lang = language_of(request)
    section, title = item.words(lang)[:2]
    out = {"lesson-step": step,
           "lesson-progress": i18n.text("lesson-progress", lang, n=step + 1, total=len(steps), section=section,
                                        title=title),
           **_asking(q, move != 0), **nav(step, len(steps))}
    a = analysis_store().get(key) if key is not None else None
    if a is None:
        out["lesson-text"] = i18n.text("lesson-first", lang)
        out["lesson-ask"] = gr.update(visible=False)
        return out
    display = frame_display(a, layer, head, opacity, colormap, screen, lang=lang, request=request)
    if q is not None:
        out["lesson-text"] = predict.question(q, a, lang, display)
        out["lesson-picture"], out["lesson-table"] = before_picture(q, a, display, lang), ""
        return out
    out["lesson-text"] = lesson_text(item, a, lang, display)
    name = item.view  # an elem id of the page (vit.lesson.LESSON_VIEWS)
    if name == "stage-table":
        out["lesson-picture"], out["lesson-table"] = None, pictures.stage_table(a, lang)  # the page's, as Patches'
        return out
    view = registry.draw(a, name, display, weights=pictures.model_weights(a))
    out["lesson-picture"], out["lesson-table"] = replace(view, cells=None), ""  # a step's picture takes no clicks
    return out


def resized(key: str | None, step: Number, delta: Number, layer: Number, head: Number, opacity: Number,
            colormap: str, screen: str | bool = "", tab_on_screen: str = TAB, predict_on: bool = False,
            request: gr.Request = None) -> dict:
    """Projector mode, the Layer or Head control, the colours: a step is drawn again; a question keeps its reveal."""
    if _question(step, predict_on) is not None:
        return {}
    return lesson(key, step, delta, layer, head, opacity, colormap, screen, tab_on_screen, predict_on, request)


def _question(step: Number, predict_on) -> PredictStep | None:
    steps = predict.walk(predict_on is True)
    item = steps[inputs.clamp(step, 0, len(steps) - 1, 0)]
    return item if isinstance(item, PredictStep) else None


def _reveal(q: PredictStep, image, key: str, guess, score, layer, head, opacity, colormap, screen, request,
            progress) -> dict:
    """The guess checked, the picture that shows the answer, the tally. A guess that is no answer (2.5, 65) is a
    sentence beside the box: no toast, no red "Error" badges over the question (a class shouts "65!")."""
    lang = language_of(request)
    try:
        a = kept(key)
        display = frame_display(a, layer, head, opacity, colormap, screen, lang=lang, request=request)
        w = None
        if q.kind == "survive" and a.has_classifier:  # the model runs on the patches left, in its turn as "What if?"
            w = whatif.intervention(image, key, predict.proposal(a), [], "zero", False, request, progress)
        verdict, text, picture = revealed(q, a, guess, w, display, lang)
    except InputError as exc:
        return {"lesson-answer": exc.words(lang)}
    score = counted(score, key, q, verdict)
    return {"lesson-answer": text, "lesson-tally": predict.tally_text(score, lang), "lesson-score": score,
            "lesson-picture": picture, "lesson-table": ""}


def revealed(q: PredictStep, a, guess, w, display: Display, lang: str = "en") -> tuple:
    """(verdict, its markdown, the picture that shows the answer) for a guess (``w``: "survive"'s intervention)."""
    verdict = predict.check(q, a, guess, w, lang)
    if q.kind == "patch":
        size = registry.frame_sizes(registry.PICTURES[q.reveal], a, display)[0]
        view = registry.as_shown(attention.rollout_view(a, a.depth, display.opacity, display.cmap, size, lang,
                                                    mark=tuple(guess)), display)
    else:
        view = registry.draw(w if w is not None else a, q.reveal, display)
    return verdict, predict.reveal_text(q, verdict, lang), replace(view, cells=None)  # the answer takes no clicks


def counted(score, key: str, q: PredictStep, verdict) -> dict:
    """The tally with this answer: a question's first answer about an analysis counts, a second try does not."""
    score = dict(score) if isinstance(score, dict) else {}
    score.setdefault(f"{key}:{q.kind}", verdict.right)
    return score


@handler
def answer(image: object, key: str | None, step: Number, predict_on: bool, score, layer: Number, head: Number,
           opacity: Number, colormap: str, screen, guess=None, progress=gr.Progress(), request: gr.Request = None):
    """A typed number or a yes / no, for the question on screen."""
    q = _question(step, predict_on)
    if key is None or q is None or q.answer == "click":
        return {}
    return _reveal(q, image, key, guess, score, layer, head, opacity, colormap, screen, request, progress)


@handler
def click_answer(image: object, key: str | None, step: Number, predict_on: bool, score, layer: Number, head: Number,
                 opacity: Number, colormap: str, screen, clicked: str = "", progress=gr.Progress(),
                 request: gr.Request = None):
    """A click on the patch grid, for "click the patch": the cell the page says was clicked (vit/ui/page.js)."""
    q = _question(step, predict_on)
    if key is None or q is None or q.answer != "click":
        return {}
    a = kept(key)
    cell = inputs.clicked_cell(clicked, *a.grid)
    if cell is None:
        return {}
    return _reveal(q, image, key, cell, score, layer, head, opacity, colormap, screen, request, progress)


def tally(score, request: gr.Request = None) -> str:
    """The session's tally in the page's language ("" before any answer)."""
    return predict.tally_text(score, language_of(request)) if isinstance(score, dict) and score else ""


def toggled(step: Number, predict_on: bool) -> int:
    """"Predict first" switched: the same step of the lesson in the other walk; switched on before a reveal, the
    question asked before it (a question switched off: the step it preceded)."""
    before = predict.walk(predict_on is not True)
    item = before[inputs.clamp(step, 0, len(before) - 1, 0)]
    after = predict.walk(predict_on is True)
    if item in after:
        i = after.index(item)
        asked = i > 0 and isinstance(after[i - 1], PredictStep) and after[i - 1].ahead_of == getattr(item, "view", "")
        return i - 1 if asked else i
    rest = [s for s in before[before.index(item):] if s in after]
    return after.index(rest[0]) if rest else len(after) - 1


EXPORT_WAITERS = 8  # exports admitted to EXPORTS' line at once (the rest wait in gradio's queue)
EXPORTS = FairQueue(slots=1, share=2, refusal="refusal-export-share")  # lesson PDFs: one at a time, in turn between
# addresses, then sessions; an address holds at most 2 of the EXPORT_WAITERS while another waits for one (app.py)
EXPORT_S = 2.0  # a PDF's seconds, as the line orders them (~2 s on 2 cores)


@handler
def download_lesson(key: str | None, layer: Number, head: Number, opacity: Number, colormap: str,
                    request: gr.Request = None) -> str:
    """The whole lesson on the shown analysis as one PDF, as the page's controls say; its path. One export a session
    at a time, sessions in turn (:data:`EXPORTS`): one student's presses do not hold up another's PDF."""
    lang = language_of(request)
    if key is None:
        raise InputError(i18n.text("lesson-no-analysis", lang))
    a = kept(key)
    display = frame_display(a, layer, head, opacity, colormap, None)  # the PDF's fixed sizes, no frame
    try:
        with EXPORTS.turn(session_of(request), EXPORT_S):
            path = picture_folder().write(lambda p: lesson_export.write_pdf(a, p, display, lang=lang), ".pdf",
                                          readable=f"lesson-{a.model}-P{a.patch_size}")
    except (Busy, Replaced):
        raise InputError(i18n.text("lesson-export-busy", lang)) from None
    return str(path)


def build(c: dict) -> None:
    with gr.Tab(t("tab-lesson"), id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        c["lesson-step"] = gr.State(0)
        c["lesson-score"] = gr.State({})  # "key:question" -> right: the session's first answers, in the session only
        with gr.Row(elem_id="lesson-nav"):
            c["lesson-prev"] = gr.Button(t("lesson-prev"), elem_id="lesson-prev", scale=0, min_width=NAV_WIDTH,
                                         interactive=False)  # step 1: nothing before it
            c["lesson-progress"] = gr.Markdown("", elem_id="lesson-progress")
            c["lesson-next"] = gr.Button(t("lesson-next"), elem_id="lesson-next", variant="primary", scale=0,
                                         min_width=NAV_WIDTH)
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=PICTURE_MIN_WIDTH):
                c["lesson-text"] = gr.Markdown(t("lesson-start"),
                                               elem_id="lesson-text", elem_classes="caption")
                with gr.Column(visible=False, elem_id="lesson-ask") as c["lesson-ask"]:
                    with gr.Row(equal_height=True):
                        c["lesson-guess"] = gr.Number(label=t("lesson-guess"), precision=0, elem_id="lesson-guess",
                                                      visible=False, min_width=120)
                        c["lesson-check"] = gr.Button(t("lesson-check"), variant="primary", elem_id="lesson-check",
                                                      visible=False, min_width=120)
                        c["lesson-yes"] = gr.Button(t("yes"), elem_id="lesson-yes", visible=False, min_width=80)
                        c["lesson-no"] = gr.Button(t("no"), elem_id="lesson-no", visible=False, min_width=80)
                    c["lesson-answer"] = gr.Markdown("", elem_id="lesson-answer")
                c["lesson-tally"] = gr.Markdown("", elem_id="lesson-tally")
                c["lesson-predict-on"] = gr.Checkbox(False, label=t("lesson-predict-on"),
                                                     elem_id="lesson-predict-on")
                c["lesson-download"] = gr.Button(t("lesson-download"), size="sm", elem_id="lesson-download")
            with gr.Column(scale=1, min_width=PICTURE_MIN_WIDTH, elem_id="lesson-shown"):  # its picture or table
                c["lesson-picture"] = gr.Image(type="pil", format="png", interactive=False, show_label=False,
                                               buttons=[], elem_id="lesson-picture",
                                               elem_classes=["picture-frame", "clickable"])
                c["lesson-picture-click"] = gr.Button("lesson-picture", elem_id="lesson-picture-click",
                                                      elem_classes="hidden-helper")  # parts.on_click
                c["lesson-table"] = gr.HTML("", elem_id="lesson-table")


def wire(c: dict) -> None:
    event = dict(fn=page_event(lesson, OUTPUTS), outputs=outputs(c, OUTPUTS), preprocess=False,
                 trigger_mode="always_last", show_progress="hidden")

    def moves(delta: int) -> list:
        return [c["analysis-key"], c["lesson-step"], gr.State(delta), *outputs(c, INPUTS[2:])]

    # An answer may run the model ("will the prediction survive?"): in the model's queue, as "What if?" does.
    answered = dict(outputs=outputs(c, ANSWER_OUTPUTS), preprocess=False, concurrency_id="model",
                    concurrency_limit=MODEL_WAITERS, show_progress="minimal")
    given = outputs(c, ANSWER_INPUTS)
    c["lesson-check"].click(named(answer, ANSWER_OUTPUTS), [*given, c["lesson-guess"]], **answered,
                            **private("lesson_check"))
    c["lesson-guess"].submit(named(answer, ANSWER_OUTPUTS), [*given, c["lesson-guess"]], **answered,
                             **private("lesson_guess_submit"))
    for word in ("yes", "no"):
        c[f"lesson-{word}"].click(named(answer, ANSWER_OUTPUTS), [*given, gr.State(word)], **answered,
                                  **private(f"lesson_{word}"))
    on_click(c, "lesson-picture", named(click_answer, ANSWER_OUTPUTS), given, **answered, **private("lesson_click"))
    c["lesson-predict-on"].change(toggled, outputs(c, ["lesson-step", "lesson-predict-on"]), c["lesson-step"],
                                  preprocess=False, queue=False, show_progress="hidden",
                                  **private("lesson_predict_on")).then(inputs=moves(0), **event,
                                                                       **private("lesson_predict_shown"))

    show_tab(c, TAB).then(inputs=moves(0), **event, **private("lesson_shown"))
    c["lesson-next"].click(inputs=moves(1), **event, **private("lesson_next"))
    changed(c, "screen")(inputs=moves(0), **{**event, "fn": named(resized, OUTPUTS)},
                         **private("lesson_screen"))  # drawn for the screen anew
    c["lesson-prev"].click(inputs=moves(-1), **event, **private("lesson_previous"))
    # A new analysis: vit.ui.tabs.quiz.wire_new_analysis shows the step for it (one event with the quizzes').
    # The Layer and Head controls (and the colours): the step on screen follows them, its text with its picture.
    on(c, ("layer", "head", "opacity", "colormap"), "lesson_display", inputs=moves(0),
       **{**event, "fn": named(resized, OUTPUTS)})
    # Another language: the step on screen (a question keeps its reveal) and the tally, in it.
    c["language-switched"].then(inputs=moves(0), **{**event, "fn": named(resized, OUTPUTS)},
                                **private("lesson_language"))
    c["language-switched"].then(tally, c["lesson-score"], c["lesson-tally"], queue=False, show_progress="hidden",
                                **private("lesson_tally_language"))
    # The PDF takes seconds: the progress shows on the button; the browser saves the file once it is there.
    c["lesson-download"].click(download_lesson, [c["analysis-key"], *outputs(c, INPUTS[2:6])], c["download-file"],
                               preprocess=False, show_progress="minimal", show_progress_on=[c["lesson-download"]],
                               concurrency_id="lesson-export", concurrency_limit=EXPORT_WAITERS,
                               **private("lesson_download")).success(None, js=SAVE_JS)
