"""The app's two languages, English and Simplified Chinese, as the book's two editions write them (docs/languages.md):
:data:`PAGE`, the components' words for gradio's ``gr.I18n``, and :data:`MESSAGES`, the server's text, which
:func:`text` writes in the request's language. Torch-free: the CLI's ``--help`` and the first screen load it."""

from __future__ import annotations

from vit.i18n import explain, inside, lesson, page, predict, progress, refusals, server, views, whatif

LANGUAGES = ("en", "zh")
DEFAULT = "en"  # the API, the CLI and a browser in any other language
PAGE: dict[str, dict[str, str]] = page.PAGE
PARTS = (server, lesson, predict, views, inside, explain, whatif, refusals, progress)  # the server's messages
MESSAGES: dict[str, dict[str, str]] = {key: words for part in PARTS for key, words in part.MESSAGES.items()}


def language(value: object) -> str:
    """A tag as a browser, a cookie or an address sends it (``"zh_Hans"``, an Accept-Language header's first tag) as
    one of :data:`LANGUAGES`: Chinese for any zh tag, else English."""
    if not isinstance(value, str) or not value.strip():
        return DEFAULT
    first = value.split(",")[0].split(";")[0].strip().replace("_", "-").lower()
    base = first.split("-")[0]
    return base if base in LANGUAGES else DEFAULT


def text(key: str, lang: str = DEFAULT, **fields) -> str:
    """The message ``key`` in ``lang`` (any tag :func:`language` reads), its ``{fields}`` filled in."""
    message = MESSAGES[key]
    return message[language(lang)].format(**fields) if fields else message[language(lang)]


def page_translations() -> dict[str, dict[str, str]]:
    """:data:`PAGE` by language, as ``gr.I18n(**page_translations())`` takes it."""
    return {lang: {key: words[lang] for key, words in PAGE.items()} for lang in LANGUAGES}
