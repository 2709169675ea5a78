"""The tabs that only show an analysis's pictures, one class for four: Patches, Attention, Depth and Figure 7."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from vit.ui.lang import t
from vit.ui.tabs import quiz
from vit.ui.tabs.parts import picture, pinned, wire_picture_tab
from vit.views.registry import on_tab


@dataclass(frozen=True)
class PictureTab:
    """One of these tabs, a section of the page as each tab's module is (:mod:`vit.ui.layout`)."""

    name: str

    def build(self, c: dict) -> None:
        with gr.Tab(t(f"tab-{self.name}"), id=self.name, elem_id=f"tab-{self.name}") as c[f"tab-{self.name}"]:
            if self.name in quiz.QUESTIONS:
                quiz.build(c, self.name)  # "Quiz me": the lesson's question for this tab, before its answer shows
            with gr.Row(equal_height=False):
                for name in on_tab(self.name):
                    picture(c, name)
                pinned(c, self.name)
            if self.name == "patches":
                c["stage-table"] = gr.HTML(elem_id="stage-table")

    def wire(self, c: dict) -> None:
        wire_picture_tab(c, self.name)
        if self.name in quiz.QUESTIONS:
            quiz.wire(c, self.name)
