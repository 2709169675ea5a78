"""The page: composes its sections, one per tab (:mod:`vit.ui.tabs`), as gradio's native_plots demo does.
Components live in one dict by their stable ``elem_id`` (docs/api-cli.md); handlers return outputs by those names."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr

from vit import i18n
from vit.ui import events, gradio_internals, inputs, models
from vit.ui.state import STATE_TTL_S, key_expired
from vit.ui.tabs import controls, inside, lesson, quiz, whatif, why
from vit.ui.tabs.picture_tabs import PictureTab
from vit.views import registry
from vit.views.registry import Display

# The page's sections, in its order (vit.views.registry.TABS names them).
TABS = (PictureTab("patches"), PictureTab("attention"), PictureTab("depth"), why, whatif, inside, PictureTab("figure7"),
        lesson)
EXAMPLES = controls.EXAMPLES
HERE = Path(__file__).resolve().parent
CSS = (HERE / "page.css").read_text()
# gradio runs the page's script once the page has loaded; it names the tabs in a new language itself (gradio
# redraws only the selected tab's name), from the page's own messages (their keys are the tabs' elem ids).
TAB_NAMES = {k: v for k, v in i18n.PAGE.items() if k.startswith(("tab-", "inside-"))}
SCRIPT = ((HERE / "page.js").read_text().replace("/*TAB_NAMES*/{}", json.dumps(TAB_NAMES, ensure_ascii=False))
          .replace("/*MAX_DRAWING_CHARS*/60000", str(inputs.MAX_DRAWING_CHARS))
          .replace("/*GRADIO_LOCALE*/null", gradio_internals.LOCALE_JS))

# Fonts the viewer's own machine has: nothing is fetched, so a classroom without internet looks the same.
FONTS = ("system-ui", "-apple-system", "Segoe UI", "Roboto", "DejaVu Sans", "Helvetica Neue", "Arial", "sans-serif")
MONO_FONTS = ("ui-monospace", "DejaVu Sans Mono", "Menlo", "Consolas", "monospace")
# delete_cache: a classroom session makes ~1 MB of pictures per redraw; every half hour, those over an hour old go.
DELETE_CACHE_S = (1800, 3600)


def theme() -> gr.themes.Base:
    size = gr.themes.Size(xxs="12px", xs="14px", sm="16px", md="18px", lg="21px", xl="26px", xxl="32px")
    theme = gr.themes.Default(primary_hue="blue", secondary_hue="orange", text_size=size, font=FONTS,
                              font_mono=MONO_FONTS)
    # Gradio's pale greys vanish on a projector: labels and hints in dark grey. Every text at least 4.5:1 against its
    # background (WCAG AA, checked by axe-core in tests/test_walk.py): white on blue-700 is 6.7:1 (blue-500: 3.7:1).
    return theme.set(block_label_text_color="*neutral_700", block_title_text_color="*neutral_800",
                     block_info_text_color="*neutral_600", body_text_color_subdued="*neutral_600",
                     color_accent="*primary_700", color_accent_soft="*primary_50",
                     button_primary_background_fill="*primary_700", button_primary_background_fill_hover="*primary_800",
                     button_primary_text_color="white", button_primary_border_color="*primary_700")


def build_demo() -> gr.Blocks:
    """The app's layout and wiring; nothing runs and nothing downloads until a request comes."""
    models.register()  # the curated Hub models, from their names (the operator's: app.main, before this)
    c: dict = {}
    with gr.Blocks(title="ViT Anatomy", analytics_enabled=False, delete_cache=DELETE_CACHE_S) as demo:
        c["demo"] = demo  # its load event (vit.ui.tabs.controls: the page's language)
        # What a browser tab holds between events: small keys, never pictures or tensors.
        c["analysis-key"] = gr.State(None, time_to_live=STATE_TTL_S,  # of the tab's vit.Analysis in the store
                                     delete_callback=key_expired)
        c["query"] = gr.State(Display().query)  # the query patch, as fractions (x, y) of the picture
        c["tab-on-screen"] = gr.State(registry.TABS[0])  # only its pictures are drawn
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=controls.SIDEBAR_WIDTH, elem_id="sidebar"):
                controls.build_sidebar(c)
            with gr.Column(scale=3, min_width=controls.MAIN_WIDTH, elem_id="main"):
                controls.build_view_controls(c)
                with gr.Tabs(elem_id="tabs", overflow_behavior="wrap") as c["tabs"]:  # a phone reaches every tab
                    for section in TABS:
                        section.build(c)
                controls.build_helpers(c)
        for section in (controls, *TABS):  # layout first, wiring last
            section.wire(c)
        quiz.wire_new_analysis(c)  # the three tabs' quizzes, asked again on a new analysis: one event
        demo.unload(events.page_closed)  # a closed or reloaded page: its run stops, its analyses go
    return demo
