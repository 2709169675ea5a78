"""The "Attention" tab: attention rollout and the class token per head (11.4.2); how the heads are fused is set in
the controls above the tabs (:mod:`vit.ui.tabs.controls`), as the Across-depth tab's maps use it too."""

from __future__ import annotations

import gradio as gr

from vit.ui.lang import t
from vit.ui.tabs import quiz
from vit.ui.tabs.parts import picture, pinned, wire_picture_tab

TAB = "attention"


def build(c: dict) -> None:
    with gr.Tab(t("tab-attention"), id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        quiz.build(c, TAB)  # "Quiz me": the lesson's question for this tab, before its answer shows
        with gr.Row(equal_height=False):
            picture(c, "rollout-view")
            picture(c, "head-views")
            pinned(c, TAB)


def wire(c: dict) -> None:
    wire_picture_tab(c, TAB)
    quiz.wire(c, TAB)
