"""Errors written for the person who made the request: an :class:`InputError` is shown in full (the CLI's stderr,
the app's ``gr.Error``); any other exception is a bug, logged on the server and shown as a generic message.
"""

from __future__ import annotations


class InputError(ValueError):
    """A request we refuse: a bad parameter, an unreadable image, a setting too costly.

    Raised with a message key of :mod:`vit.i18n` and its fields (``InputError(key="refusal-busy")``), it is written in
    any language where it is shown (:meth:`words`, at the edge: a page's toast, the middleware's answer); ``str()`` is
    its English, for the CLI, the API and the server's log. A message without a key is English everywhere.
    """

    def __init__(self, message: str = "", *, key: str | None = None, **fields):
        if key is not None:
            from vit import i18n  # noqa: PLC0415 - vit.i18n imports this module

            message = i18n.text(key, "en", **fields)
        super().__init__(message)
        self.key, self.fields = key, fields

    def words(self, lang: str = "en") -> str:
        """The refusal in ``lang``; its own words (English) where it has no key. Never a server path where the error
        has a public form (:class:`WeightsError`)."""
        if self.key is None:
            return getattr(self, "public", str(self))
        from vit import i18n  # noqa: PLC0415

        return i18n.text(self.key, lang, **self.fields)


class WeightsError(InputError):
    """A checkpoint that cannot be used (corrupt, truncated, wrong shapes): ``str(error)`` with the path and the
    reader's words, for the CLI and the log; ``error.public`` without them, for a web page."""

    def __init__(self, message: str, public: str | None = None):
        super().__init__(message)
        self.public = public or message
