"""The page's language: gradio's ``gr.I18n`` for the components, and the language of a request.

The browser picks the components' language (gradio reads ``navigator.language``); the page's switch and
``?lang=zh`` / ``?lang=en`` override it (``vit/ui/page.js``), which also keeps the choice in the
``vit_lang`` cookie. Every request carries that cookie, so a handler learns the language the page shows
from its ``gr.Request`` (:func:`of`); without the cookie (a first visit, before the page's script ran), the
page's ``?lang=``, then the browser's Accept-Language; without any (the API's clients), English.
"""

from __future__ import annotations

import gradio as gr

from vit import i18n
from vit.views.registry import PICTURES

COOKIE = "vit_lang"


def translations() -> dict[str, dict[str, str]]:
    """Every component's words by language: :data:`vit.i18n.PAGE`, and the pictures' titles and texts."""
    out = i18n.page_translations()
    for name, p in PICTURES.items():
        title, what_is = i18n.page.PICTURES_ZH[name]
        out["en"].update({f"title-{name}": p.title, f"what-{name}": p.what_is})
        out["zh"].update({f"title-{name}": title, f"what-{name}": what_is})
    return out


I18N = gr.I18n(**translations())


def t(key: str) -> gr.I18nData:
    """A component's words by key (the browser shows them in its language)."""
    if key not in i18n.PAGE and not key.startswith(("title-", "what-")):
        raise KeyError(f"no page message {key!r} (vit.i18n.page)")
    return I18N(key)


def of(request: gr.Request | None) -> str:
    """The language the page that sent ``request`` shows: its cookie, else its address's ``?lang=``, else
    Accept-Language, else English."""
    if request is None:
        return i18n.DEFAULT
    try:
        chosen = request.cookies.get(COOKIE) or request.query_params.get("lang")
        return i18n.language(chosen or request.headers.get("accept-language"))
    except AttributeError:  # a request without cookies or headers (gradio's own calls)
        return i18n.DEFAULT


class Progress:
    """gradio's progress bar, told a message's key and fields (:mod:`vit.i18n.progress`) and writing it in
    ``lang``: ``progress(0.4, "progress-running", model="ViT-B/16", seconds=3)``."""

    def __init__(self, progress, lang: str):
        self.progress, self.lang = progress, lang

    def __call__(self, value, key: str, *, unit: str = "steps", **fields):
        return self.progress(value, desc=i18n.text(key, self.lang, **fields), unit=unit)


def progress_in(progress, request_or_lang: gr.Request | str | None):
    """``progress`` (gradio's) told keys and writing in the page's language (of the request, or the one given)."""
    if isinstance(progress, Progress):
        return progress
    lang = request_or_lang if isinstance(request_or_lang, str) else of(request_or_lang)
    return Progress(progress or (lambda *args, **kwargs: None), lang)
