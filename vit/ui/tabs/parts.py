"""What every tab is made of: a picture with its caption and buttons, the pinned copy, the redraw event."""

from __future__ import annotations

import gradio as gr

from vit import i18n
from vit.ui import events
from vit.ui.lang import t
from vit.views.registry import PICTURES

PICTURE_MIN_WIDTH = 280  # px: a picture's column never gets narrower (two side by side on a laptop)
MODEL_WAITERS = 16  # requests admitted to vit.serve.queue.FairQueue at once; the rest wait in gradio's queue
REDRAW_CONCURRENCY = 4  # redraws drawn at once (no model run: numpy and PIL only)
# A redraw's inputs: the analysis, the query patch and everything else a picture is drawn from.
DISPLAY = ("analysis-key", "query", "layer", "head", "opacity", "colormap", "head-fusion", "discard-ratio")
# Pinning copies the picture and its caption in the browser, the caption headed by the setting it was drawn at (the
# banner's data-setting): the pin is there to compare P = 16 with P = 8, which the picture alone does not say.
PIN_JS = ("(picture, caption) => { const zh = document.documentElement.lang.startsWith('zh'); "
          "const shown = document.querySelector('#banner [data-setting]'); "
          "const head = shown ? (zh ? "
          f"{i18n.text('pinned-at', 'zh', setting='@')!r} : {i18n.text('pinned-at', 'en', setting='@')!r})"
          ".replace('@', () => shown.dataset.setting) : (zh ? "
          f"{i18n.text('pinned-caption', 'zh')!r} : {i18n.text('pinned-caption', 'en')!r}); "
          "return [picture, head + (caption || '')]; }")


def outputs(c: dict, names) -> list:
    return [c[n] for n in names]


def private(name: str) -> dict:
    """An event of the page only: named, not part of the API (vit.serve.limits.PrivateEventGuard refuses it by name)."""
    return dict(api_name=name, api_visibility="private")


# Changes that listeners of several tabs wait for.
SHARED_CHANGES = ("analysis-key", "screen", "layer", "head", "opacity", "colormap")


def changed(c: dict, name: str):
    """``c[name].change``'s one listener, on which each tab hangs with ``.then`` (returned): two listeners of one
    change would restart each other (docs/app.md, "One listener a change")."""
    key = f"{name}:changed"
    if key not in c:  # nothing of the server's: it runs in the page
        c[key] = c[name].change(None, None, None, js="() => []", queue=False, show_progress="hidden",
                                **private(f"changed_{name.replace('-', '_')}"))
    return c[key].then


def on(c: dict, changes: tuple[str, ...], api_name: str, others: tuple = (), **event) -> None:
    """The event on a change of any of ``changes`` (through :func:`changed`) and on any trigger of ``others``."""
    if others:
        gr.on(list(others), **event, **private(api_name))
    for n in changes:
        if n not in SHARED_CHANGES:
            raise ValueError(f"a change several tabs listen to must be one of {SHARED_CHANGES}, got {n!r}")
        changed(c, n)(**event, **private(f"{api_name}_{n.replace('-', '_')}"))


def on_click(c: dict, name: str, fn, inputs: list, outputs, **event):
    """A click on picture ``name``: ``fn(*inputs, clicked)``, ``clicked`` the ``"[row, col]"`` page.js maps through
    the picture as shown (gradio's select maps through the drawn size). Returns the event."""
    js = f"(...args) => window.vitAnatomy ? window.vitAnatomy.clicked('{name}', args) : args"
    return c[f"{name}-click"].click(fn, [*inputs, c["clicked"]], outputs, js=js, **event)


def picture(c: dict, name: str) -> None:
    """A picture with its caption, buttons (download, pin, full screen) and "what is this?", drawn for the screen."""
    p = PICTURES[name]
    classes = ["picture-frame", *(["clickable"] if p.clickable else [])]
    with gr.Column(min_width=PICTURE_MIN_WIDTH, elem_classes="picture", elem_id=f"{name}-block"):
        gr.Markdown(t(f"title-{name}"), elem_classes="picture-title")
        c[name] = gr.Image(type="pil", format="png", interactive=False, show_label=False, label=p.title["en"],
                           buttons=[], elem_id=name, elem_classes=classes)
        if p.clickable:  # pressed by the page's script on a click (on_click)
            c[f"{name}-click"] = gr.Button(name, elem_id=f"{name}-click", elem_classes="hidden-helper")
        c[f"{name}-caption"] = gr.Markdown(elem_classes="caption", elem_id=f"{name}-caption")
        with gr.Row(elem_classes="picture-buttons"):
            if p.download:
                c[f"{name}-download"] = gr.Button(t("download-picture"), size="sm", min_width=60,
                                                  elem_id=f"{name}-download")
            c[f"{name}-pin"] = gr.Button(t("pin"), size="sm", min_width=60, elem_id=f"{name}-pin")
            c[f"{name}-fullscreen"] = gr.Button(t("fullscreen"), size="sm", min_width=60, elem_id=f"{name}-fullscreen")
        with gr.Accordion(t("what-is"), open=False, elem_classes="what-is"):
            gr.Markdown(t(f"what-{name}"))


def pinned(c: dict, tab: str) -> None:
    """The tab's pinned picture: a copy kept beside the live ones (set in the browser, no server)."""
    with gr.Column(min_width=PICTURE_MIN_WIDTH, elem_classes="picture pinned", elem_id=f"{tab}-pinned-block"):
        gr.Markdown(t("pinned-title"), elem_classes="picture-title")
        c[f"{tab}-pinned"] = gr.Image(type="filepath", format="png", interactive=False, label=t("pinned"),
                                      show_label=False, buttons=[], elem_id=f"{tab}-pinned",
                                      elem_classes="picture-frame")
        c[f"{tab}-pinned-caption"] = gr.Markdown(elem_classes="caption", elem_id=f"{tab}-pinned-caption")
        c[f"{tab}-unpin"] = gr.Button(t("unpin"), size="sm", min_width=60, elem_id=f"{tab}-unpin")


def redraw(c: dict) -> dict:
    """The page's redraw (:func:`vit.ui.events.page_redraw`) as an event's arguments, for ``.then`` or ``gr.on``."""
    return dict(fn=events.page_event(events.page_redraw, events.REDRAW_OUTPUTS),
                inputs=outputs(c, [*DISPLAY, "screen", "tab-on-screen"]), outputs=outputs(c, events.REDRAW_OUTPUTS),
                preprocess=False, trigger_mode="always_last", concurrency_limit=REDRAW_CONCURRENCY,
                # A fusion recompute at P = 4 takes seconds: the progress shows on the pictures, not on the words
                # (gradio's light grey timer in the timing line or a caption fails colour contrast).
                show_progress="minimal", show_progress_on=[c[n] for n in events.REDRAW_OUTPUTS if n in PICTURES])


def show_tab(c: dict, tab: str):
    """Selecting the tab: it becomes the tab on screen (only its pictures are drawn). Returns the event."""
    return c[f"tab-{tab}"].select(lambda: tab, None, c["tab-on-screen"], queue=False, show_progress="hidden",
                                  **private(f"show_tab_{tab}"))


def wire_pictures(c: dict, tab: str, clicks: bool = True) -> None:
    """Every picture of ``tab``: download, pin, full screen and a click that picks the query (unless ``clicks``)."""
    for name, p in PICTURES.items():
        if p.tab != tab:
            continue
        event = name.replace("-", "_")
        if p.download:
            c[f"{name}-download"].click(events.download, [c["analysis-key"], gr.State(name), *outputs(c, DISPLAY[1:])],
                                        c["download-file"], preprocess=False, show_progress="hidden",
                                        **private(f"download_{event}")).then(
                None, js="() => window.vitAnatomy && window.vitAnatomy.saveDownload()")
        # Pinning copies what the page shows, in the browser: nothing goes back to the server.
        c[f"{name}-pin"].click(None, outputs(c, [name, f"{name}-caption"]),
                               outputs(c, [f"{tab}-pinned", f"{tab}-pinned-caption"]), js=PIN_JS)
        c[f"{name}-fullscreen"].click(None, js=f"() => window.vitAnatomy && window.vitAnatomy.fullscreen('{name}')")
        if p.clickable and clicks:  # one round trip: the new query patch and its pictures (no model run), in gradio's
            clicked = events.click_outputs(tab)  # queue, so a flood of clicks counts against the client's limits
            on_click(c, name, events.named(events.click_redraw, clicked),
                     [c["analysis-key"], gr.State(name), *outputs(c, [*DISPLAY[1:], "screen", "tab-on-screen"])],
                     outputs(c, clicked), preprocess=False, concurrency_limit=REDRAW_CONCURRENCY,
                     show_progress="hidden", **private(f"click_{event}"))
    if f"{tab}-unpin" in c:  # the pinned copy goes, in the browser as it came
        c[f"{tab}-unpin"].click(None, None, outputs(c, [f"{tab}-pinned", f"{tab}-pinned-caption"]),
                                js="() => [null, '']")


def wire_picture_tab(c: dict, tab: str) -> None:
    """A tab of analysis pictures: shown, it redraws what changed; each picture's buttons and clicks."""
    show_tab(c, tab).then(**redraw(c), **private(f"redraw_tab_{tab}"))
    wire_pictures(c, tab)
