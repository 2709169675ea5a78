"""Errors whose message is written for the person who made the request.

Anything raised as :class:`InputError` is shown to the user in full (by the CLI
on stderr, by the app as a ``gr.Error``); any other exception is a bug, logged
on the server and shown only as a generic message.
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
    """A checkpoint that cannot be used (corrupt, truncated, wrong shapes).

    ``str(error)`` is the whole story, with the file's path and the reader's own words, for the
    CLI and the server's log; ``error.public`` says the same without server paths or raw
    exception text, for a web page anyone on the network can see.
    """

    def __init__(self, message: str, public: str | None = None):
        super().__init__(message)
        self.public = public or message
