"""The "Inside" tab: what attention and the MLP add, each patch's own vote, token lengths, the whole matrix."""

from __future__ import annotations

import gradio as gr

from vit.ui.tabs.parts import picture, pinned, wire_picture_tab

TAB = "inside"


def build(c: dict) -> None:
    with gr.Tab("Inside", id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        with gr.Row(equal_height=False):
            picture(c, "block-view")
            picture(c, "lens-view")
        with gr.Row(equal_height=False):
            picture(c, "token-norms")
            picture(c, "matrix-view")
            pinned(c, TAB)


def wire(c: dict) -> None:
    wire_picture_tab(c, TAB)
