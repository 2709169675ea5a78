"""The "Attention" tab: attention rollout and the class token per head, with how the heads are fused (11.4.2)."""

from __future__ import annotations

import gradio as gr

from vit.ui.tabs.parts import picture, pinned, wire_picture_tab
from vit.validate import HEAD_FUSIONS, MAX_DISCARD_RATIO

TAB = "attention"


def build(c: dict) -> None:
    with gr.Tab("Attention", id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        with gr.Row(equal_height=True):
            c["head-fusion"] = gr.Radio(list(HEAD_FUSIONS), value="mean", label="Head fusion",
                                        info="how rollout and the per-layer maps merge the h heads",
                                        elem_id="head-fusion")
            c["discard-ratio"] = gr.Slider(0.0, MAX_DISCARD_RATIO, value=0.0, step=0.01, label="Discard ratio",
                                           info="rollout drops each row's weakest links", elem_id="discard-ratio")
        with gr.Row(equal_height=False):
            picture(c, "rollout-view")
            picture(c, "head-views")
            pinned(c, TAB)


def wire(c: dict) -> None:
    wire_picture_tab(c, TAB)
