"""The "Patches & shapes" tab: the patch grid, what the clicked patch attends to, and the stage table (11.4.1)."""

from __future__ import annotations

import gradio as gr

from vit.ui.lang import t
from vit.ui.tabs import quiz
from vit.ui.tabs.parts import picture, pinned, wire_picture_tab

TAB = "patches"


def build(c: dict) -> None:
    with gr.Tab(t("tab-patches"), id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        quiz.build(c, TAB)  # "Quiz me": the lesson's question for this tab, before its answer shows
        with gr.Row(equal_height=False):
            picture(c, "patch-grid")
            picture(c, "query-view")
            pinned(c, TAB)
        c["stage-table"] = gr.HTML(elem_id="stage-table")


def wire(c: dict) -> None:
    wire_picture_tab(c, TAB)
    quiz.wire(c, TAB)
