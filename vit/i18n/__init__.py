"""The app's two languages (issue 25 part 2): English and Simplified Chinese, one message catalogue.

The book this project follows (chapter 11.4, *the ViT Encoder*) is published in English and in Chinese;
its Chinese edition keeps the technical terms in English inside Chinese sentences (patch token, class
token, position embedding, self-attention, encoder block, LayerNorm, residual connection) and the
formulas as they are, and so does every message here. Each message has a name and both languages with
the same ``{fields}``:

* :data:`PAGE`: what the page's components say (labels, buttons, tabs, "What is this?"), given to
  gradio's ``gr.I18n`` (the browser translates them: :mod:`vit.ui.lang`);
* :data:`MESSAGES`: the text the server writes (captions, banners, the lesson, refusals), formatted by
  :func:`text` in the language of the request.

Pure and torch-free: the CLI's ``--help`` and the app's first screen load it.
"""

from __future__ import annotations

import string

from vit.i18n import alt, explain, inside, lesson, page, predict, progress, refusals, server, views, whatif

LANGUAGES = ("en", "zh")
DEFAULT = "en"  # the API, the CLI and a browser in any other language
PAGE: dict[str, dict[str, str]] = page.PAGE
PARTS = (server, lesson, predict, views, inside, explain, whatif, refusals, progress, alt)  # the server's messages
MESSAGES: dict[str, dict[str, str]] = {key: words for part in PARTS for key, words in part.MESSAGES.items()}


def language(value: object) -> str:
    """A language tag as a browser, a cookie or an address sends it, as one of :data:`LANGUAGES`.

    ``"zh"``, ``"zh-CN"``, ``"zh_Hans"``, ``"zh-Hans-CN"``, ``"ZH"`` and an Accept-Language header
    (``"zh-CN,zh;q=0.9,en;q=0.8"``: its first tag) are Chinese; anything else, or nothing, is English.
    """
    if not isinstance(value, str) or not value.strip():
        return DEFAULT
    first = value.split(",")[0].split(";")[0].strip().replace("_", "-").lower()
    base = first.split("-")[0]
    return base if base in LANGUAGES else DEFAULT


def text(key: str, lang: str = DEFAULT, **fields) -> str:
    """The message ``key`` in ``lang`` (any tag :func:`language` reads), its ``{fields}`` filled in."""
    message = MESSAGES[key]
    return message[language(lang)].format(**fields) if fields else message[language(lang)]


def fields_of(message: str) -> set[str]:
    """The names of a message's ``{fields}`` (the tests check both languages name the same)."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(message) if name}


def page_translations() -> dict[str, dict[str, str]]:
    """:data:`PAGE` by language, as ``gr.I18n(**page_translations())`` takes it."""
    return {lang: {key: words[lang] for key, words in PAGE.items()} for lang in LANGUAGES}
