"""The "Figure 7" tab: the ViT paper's Figure 7 for the model as loaded (filters, position similarity, distance)."""

from __future__ import annotations

import gradio as gr

from vit.ui.lang import t
from vit.ui.tabs.parts import picture, pinned, wire_picture_tab

TAB = "figure7"


def build(c: dict) -> None:
    with gr.Tab(t("tab-figure7"), id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        with gr.Row(equal_height=False):
            picture(c, "filters-view")
            picture(c, "position-view")
            picture(c, "distance-view")
            pinned(c, TAB)


def wire(c: dict) -> None:
    wire_picture_tab(c, TAB)
