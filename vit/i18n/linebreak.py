"""Chinese line-breaking (禁则: GB/T 15834, the W3C's *Requirements for Chinese Text Layout*): Chinese may break
between any two characters, but a line never starts with closing punctuation nor ends with opening punctuation.
The pictures' and the PDF's wrap keep such a mark with its neighbour (:func:`glued`). Pure: no PIL, no matplotlib."""

from __future__ import annotations

# Never at a line's start: full stops, commas, colons, closing brackets and quotes, the ellipsis and the dash's
# second half (full-width and the ASCII-like ones the catalogue sets after Chinese).
CLOSING = frozenset("。．，、；：？！）］｝〕〉》」』】〗〙〛”’…‥·・%％)]},.;:?!")
# Never at a line's end: opening brackets and quotes.
OPENING = frozenset("（［｛〔〈《「『【〖〘〚“‘([{")


def glued(before: str, after: str) -> bool:
    """Whether no line may break between ``before`` and ``after`` (two pieces set without a space between them):
    ``after`` starts with closing punctuation, or ``before`` ends with opening punctuation."""
    return bool(before) and bool(after) and (after[0] in CLOSING or before[-1] in OPENING)
