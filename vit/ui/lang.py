"""The page's language: gradio's ``gr.I18n`` for the components, and the language of a request.

The browser picks the components' language; page.js's switch and ``?lang=`` override it and keep the choice in the
``vit_lang`` cookie, which every request carries: a handler reads it from its ``gr.Request`` (:func:`of`)."""

from __future__ import annotations

import gradio as gr

from vit import i18n
from vit.views.registry import PICTURES

COOKIE = "vit_lang"


def translations() -> dict[str, dict[str, str]]:
    """Every component's words by language: :data:`vit.i18n.PAGE`, and the pictures' titles and texts."""
    out = i18n.page_translations()
    for name, p in PICTURES.items():
        for lang in i18n.LANGUAGES:
            out[lang].update({f"title-{name}": p.title[lang], f"what-{name}": p.what_is[lang]})
    return out


I18N = gr.I18n(**translations())


def t(key: str) -> gr.I18nData:
    """A component's words by key (the browser shows them in its language)."""
    if key not in i18n.PAGE and not key.startswith(("title-", "what-")):
        raise KeyError(f"no page message {key!r} (vit.i18n.page)")
    return I18N(key)


def of(request: gr.Request | None) -> str:
    """The language of the page that sent ``request``: cookie, ``?lang=``, Accept-Language, else English."""
    if request is None:
        return i18n.DEFAULT
    try:
        chosen = request.cookies.get(COOKIE) or request.query_params.get("lang")
        return i18n.language(chosen or request.headers.get("accept-language"))
    except AttributeError:  # a request without cookies or headers (gradio's own calls)
        return i18n.DEFAULT


class Progress:
    """gradio's progress bar, told a message's key and fields (:mod:`vit.i18n.progress`), written in ``lang``."""

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
