"""The "Across depth" tab: the class token per layer, and how the prediction forms (early exit)."""

from __future__ import annotations

import gradio as gr

from vit.ui.lang import t
from vit.ui.tabs import quiz
from vit.ui.tabs.parts import picture, pinned, wire_picture_tab

TAB = "depth"


def build(c: dict) -> None:
    with gr.Tab(t("tab-depth"), id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        quiz.build(c, TAB)  # "Quiz me": the lesson's question for this tab, before its answer shows
        with gr.Row(equal_height=False):
            picture(c, "layer-views")
            picture(c, "depth-plot")  # drawn with each analysis (events.page_analyze), not by a redraw
            pinned(c, TAB)


def wire(c: dict) -> None:
    wire_picture_tab(c, TAB)
    quiz.wire(c, TAB)
