"""Errors whose message is written for the person who made the request.

Anything raised as :class:`InputError` is shown to the user in full (by the CLI
on stderr, by the app as a ``gr.Error``); any other exception is a bug, logged
on the server and shown only as a generic message.
"""


class InputError(ValueError):
    """A request we refuse: a bad parameter, an unreadable image, a setting too costly."""


class WeightsError(InputError):
    """A checkpoint that cannot be used (corrupt, truncated, wrong shapes)."""
