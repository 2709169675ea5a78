"""The "Lesson" tab: the guided walk through 11.4.1 → 11.4.7, one step per screen, with this image's numbers,
and the whole walk to take away as a 16:9 PDF (:mod:`vit.lesson_export`)."""

from __future__ import annotations

import re

import gradio as gr

from vit import lesson_export
from vit.errors import InputError
from vit.lesson import LESSON, lesson_text
from vit.ui import inputs, pictures
from vit.ui.events import DEFAULTS, handler, named
from vit.ui.inputs import Number
from vit.ui.state import analysis_store, kept, picture_folder
from vit.ui.tabs.parts import PICTURE_MIN_WIDTH, outputs, private, show_tab
from vit.views import pictures as registry
from vit.views.pictures import Display

TAB = "lesson"
OUTPUTS = ("lesson-step", "lesson-progress", "lesson-text", "lesson-picture", "lesson-table")
INPUTS = ("analysis-key", "lesson-step", "layer", "head", "opacity", "colormap", "screen", "tab-on-screen")
NAV_WIDTH = 140  # px, the Previous and Next buttons
DOWNLOAD_LABEL = "⬇ Download the lesson (PDF)"
NO_ANALYSIS = "Analyse an image first (an example, or your own): the lesson's pages use its numbers."
SAVE_JS = "() => window.vitAnatomy && window.vitAnatomy.saveDownload()"


@handler
def lesson(key: str | None, step: Number, delta: Number, layer: Number, head: Number, opacity: Number, colormap: str,
           screen: str | bool = "", tab_on_screen: str = TAB) -> dict:
    """The guided lesson (11.4.1 → 11.4.7): one step per screen, this image's numbers, the view that shows it.

    ``delta`` is -1, 0 or +1 (Previous, the same step again, Next). Drawn only while the lesson is on screen.
    """
    if tab_on_screen != TAB:
        return {}
    steps = LESSON
    step = min(max(inputs.clamp(step, 0, len(steps) - 1, 0) + inputs.clamp(delta, -1, 1, 0), 0), len(steps) - 1)
    item = steps[step]
    out = {"lesson-step": step, "lesson-progress": f"**Step {step + 1} of {len(steps)}** · {item.section} {item.title}"}
    a = analysis_store().get(key) if key is not None else None
    if a is None:
        out["lesson-text"] = "Analyse an image first (an example, or your own): the lesson uses its numbers."
        return out
    out["lesson-text"] = lesson_text(item, a)
    name = item.view  # an elem id of the page (vit.lesson.LESSON_VIEWS)
    if name == "stage-table":
        out["lesson-picture"], out["lesson-table"] = None, pictures.stage_table(a)
        return out
    projector, frame = inputs.screen(screen, TAB, "lesson-picture")
    display = Display(layer=inputs.clamp(layer, 1, a.depth, a.depth), head=inputs.clamp(head, 1, a.num_heads, 1),
                      opacity=inputs.opacity(opacity, DEFAULTS.opacity), cmap=inputs.colormap_name(colormap),
                      projector=projector, frame=frame)
    view = registry.draw(a, name, display, weights=pictures.model_weights(a))
    out["lesson-picture"], out["lesson-table"] = view.image, ""
    return out


@handler
def download_lesson(key: str | None, layer: Number, head: Number, opacity: Number, colormap: str) -> str:
    """The whole lesson on the shown analysis as one PDF (a 16:9 page per step), the pictures drawn as the page's
    controls say; returns its path in the server's picture folder, which gradio serves and then prunes."""
    if key is None:
        raise InputError(NO_ANALYSIS)
    a = kept(key)
    display = Display(layer=inputs.clamp(layer, 1, a.depth, a.depth), head=inputs.clamp(head, 1, a.num_heads, 1),
                      opacity=inputs.opacity(opacity, DEFAULTS.opacity), cmap=inputs.colormap_name(colormap))
    unique = picture_folder().new_path(".pdf")
    model = re.sub(r"[^A-Za-z0-9_.-]+", "-", a.model)  # a Hub id's "/" is no file name
    path = unique.with_name(f"lesson-{model}-P{a.patch_size}-{unique.stem[-6:]}.pdf")
    return str(lesson_export.write_pdf(a, path, display))


def build(c: dict) -> None:
    with gr.Tab("Lesson", id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        c["lesson-step"] = gr.State(0)
        with gr.Row(elem_id="lesson-nav"):
            c["lesson-prev"] = gr.Button("← Previous", elem_id="lesson-prev", scale=0, min_width=NAV_WIDTH)
            c["lesson-progress"] = gr.Markdown("", elem_id="lesson-progress")
            c["lesson-next"] = gr.Button("Next →", elem_id="lesson-next", variant="primary", scale=0,
                                         min_width=NAV_WIDTH)
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=PICTURE_MIN_WIDTH):
                c["lesson-text"] = gr.Markdown("Analyse an image, then walk through 11.4.1 → 11.4.7 with its numbers. "
                                               "Next/Previous, or the arrow keys (a presenter's clicker).",
                                               elem_id="lesson-text", elem_classes="caption")
                c["lesson-download"] = gr.Button(DOWNLOAD_LABEL, size="sm", elem_id="lesson-download")
            with gr.Column(scale=1, min_width=PICTURE_MIN_WIDTH, elem_classes="picture"):
                c["lesson-picture"] = gr.Image(type="pil", format="png", interactive=False, show_label=False,
                                               buttons=[], elem_id="lesson-picture", elem_classes="picture-frame")
                c["lesson-table"] = gr.HTML("", elem_id="lesson-table")


def wire(c: dict) -> None:
    event = dict(fn=named(lesson, OUTPUTS), outputs=outputs(c, OUTPUTS), preprocess=False,
                 trigger_mode="always_last", show_progress="hidden")

    def moves(delta: int) -> list:
        return [c["analysis-key"], c["lesson-step"], gr.State(delta), *outputs(c, INPUTS[2:])]

    show_tab(c, TAB).then(inputs=moves(0), **event, **private("lesson_shown"))
    c["lesson-next"].click(inputs=moves(1), **event, **private("lesson_next"))
    c["screen"].change(inputs=moves(0), **event, **private("lesson_screen"))  # its frame measured anew
    c["lesson-prev"].click(inputs=moves(-1), **event, **private("lesson_previous"))
    c["analysis-key"].change(inputs=moves(0), **event, **private("lesson_new_analysis"))
    # The PDF takes seconds: the progress shows on the button; the browser saves the file once it is there.
    c["lesson-download"].click(download_lesson, [c["analysis-key"], *outputs(c, INPUTS[2:6])], c["download-file"],
                               preprocess=False, show_progress="minimal", show_progress_on=[c["lesson-download"]],
                               **private("lesson_download")).success(None, js=SAVE_JS)
