"""Errors whose message is written for the person who made the request.

Anything raised as :class:`InputError` is shown to the user in full (by the CLI
on stderr, by the app as a ``gr.Error``); any other exception is a bug, logged
on the server and shown only as a generic message.
"""

from __future__ import annotations


class InputError(ValueError):
    """A request we refuse: a bad parameter, an unreadable image, a setting too costly."""


class WeightsError(InputError):
    """A checkpoint that cannot be used (corrupt, truncated, wrong shapes).

    ``str(error)`` is the whole story, with the file's path and the reader's own words, for the
    CLI and the server's log; ``error.public`` says the same without server paths or raw
    exception text, for a web page anyone on the network can see.
    """

    def __init__(self, message: str, public: str | None = None):
        super().__init__(message)
        self.public = public or message
