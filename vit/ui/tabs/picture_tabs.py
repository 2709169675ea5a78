"""The tabs that show an analysis's pictures side by side, one module for four (their pictures, in order:
:func:`vit.views.registry.on_tab`):

* "Patches & shapes" (11.4.1): the patch grid, what the clicked patch attends to, and the stage table;
* "Attention" (11.4.2): attention rollout and the class token per head (how the heads are fused is set in the
  controls above the tabs, :mod:`vit.ui.tabs.controls`, as the Across-depth tab's maps use it too);
* "Across depth": the class token per layer, and how the prediction forms (early exit);
* "Figure 7": the ViT paper's Figure 7 for the model as loaded (filters, position similarity, distance).
"""

from __future__ import annotations

import gradio as gr

from vit.ui.lang import t
from vit.ui.tabs import quiz
from vit.ui.tabs.parts import picture, pinned, wire_picture_tab
from vit.views.registry import on_tab


class PictureTab:
    """One of these tabs: ``build(c)`` and ``wire(c)`` as every section of the page (:mod:`vit.ui.layout`)."""

    def __init__(self, tab: str):
        self.TAB = tab

    def build(self, c: dict) -> None:
        with gr.Tab(t(f"tab-{self.TAB}"), id=self.TAB, elem_id=f"tab-{self.TAB}") as c[f"tab-{self.TAB}"]:
            if self.TAB in quiz.QUESTIONS:
                quiz.build(c, self.TAB)  # "Quiz me": the lesson's question for this tab, before its answer shows
            with gr.Row(equal_height=False):
                for name in on_tab(self.TAB):
                    picture(c, name)
                pinned(c, self.TAB)
            if self.TAB == "patches":
                c["stage-table"] = gr.HTML(elem_id="stage-table")

    def wire(self, c: dict) -> None:
        wire_picture_tab(c, self.TAB)
        if self.TAB in quiz.QUESTIONS:
            quiz.wire(c, self.TAB)


patches, attention, depth, figure7 = (PictureTab(tab) for tab in ("patches", "attention", "depth", "figure7"))
