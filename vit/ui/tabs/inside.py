"""The "Inside" tab: what attention and the MLP add, each patch's own vote, token lengths, the whole matrix."""

from __future__ import annotations

import gradio as gr

from vit.ui.lang import t
from vit.ui.tabs.parts import picture, pinned, wire_picture_tab

TAB = "inside"


def build(c: dict) -> None:
    with gr.Tab(t("tab-inside"), id=TAB, elem_id=f"tab-{TAB}") as c[f"tab-{TAB}"]:
        # Two pictures a screen, as every tab has: four in a column would be two screens tall.
        with gr.Row(equal_height=False):
            with gr.Column(scale=2, elem_id="inside-pictures"):
                with gr.Tabs(elem_id="inside-tabs", overflow_behavior="wrap"):  # none behind a "…" menu
                    with gr.Tab(t("inside-block"), elem_id="inside-block"):
                        picture(c, "block-view")  # the block beside its chart: the tab's whole width
                    with gr.Tab(t("inside-tokens"), elem_id="inside-tokens"):
                        with gr.Row(equal_height=False):
                            picture(c, "lens-view")
                            picture(c, "token-norms")
                    with gr.Tab(t("inside-matrix"), elem_id="inside-matrix"):
                        picture(c, "matrix-view")  # encoder and decoder side by side
            pinned(c, TAB)


def wire(c: dict) -> None:
    wire_picture_tab(c, TAB)
