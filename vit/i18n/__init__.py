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

import functools
import re
import string

from vit.errors import InputError
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


def checked(value: object, name: str = "lang") -> str:
    """A language asked for by name (the CLI's and the export's ``lang``): en or zh (zh-CN, zh-Hans... too).

    Raises:
        InputError: anything else, naming what was expected and what was got.
    """
    if isinstance(value, str) and value.strip().replace("_", "-").lower().split("-")[0] in LANGUAGES:
        return language(value)
    allowed = ", ".join(repr(c) for c in LANGUAGES)
    raise InputError(f"{name} must be one of {allowed}, got {value!r}")


def text(key: str, lang: str = DEFAULT, **fields) -> str:
    """The message ``key`` in ``lang`` (any tag :func:`language` reads), its ``{fields}`` filled in."""
    message = MESSAGES[key]
    return message[language(lang)].format(**fields) if fields else message[language(lang)]


@functools.cache
def _pattern(key: str) -> re.Pattern:
    """A refusal's English template as a pattern: each ``{field}`` matches what was written there."""
    parts = re.split(r"\{(\w+)\}", MESSAGES[key]["en"])
    fields = {"n": r"\d+", "suffix": "st|nd|rd|th"}  # a number and its English ordinal ending
    return re.compile("".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>{fields.get(p, '.+?')})"
                              for i, p in enumerate(parts)), re.DOTALL)


def reread(message: str, lang: str = DEFAULT, part=None) -> str:
    """Words the server wrote in English, in ``lang``, through the English templates of ``part`` (a module of
    this package: :mod:`vit.i18n.refusals` by default); as they are where no template matches (or in English)."""
    if language(lang) == DEFAULT or not isinstance(message, str):
        return message
    for key in (part or refusals).MESSAGES:
        found = _pattern(key).fullmatch(message.strip())
        if found:
            return text(key, lang, **found.groupdict()) if found.groupdict() else text(key, lang)
    return message


def refusal(message: str, lang: str = DEFAULT) -> str:
    """A refusal the server wrote in English (:mod:`vit.i18n.refusals`), in ``lang``."""
    return reread(message, lang, refusals)


def fields_of(message: str) -> set[str]:
    """The names of a message's ``{fields}`` (the tests check both languages name the same)."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(message) if name}


def page_translations() -> dict[str, dict[str, str]]:
    """:data:`PAGE` by language, as ``gr.I18n(**page_translations())`` takes it."""
    return {lang: {key: words[lang] for key, words in PAGE.items()} for lang in LANGUAGES}
