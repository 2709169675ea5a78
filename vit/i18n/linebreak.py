"""Chinese line-breaking rules (issue 53, item 1): no closing punctuation at a line's start, no opening one at its end.

Chinese has no spaces, so the pictures' text (:func:`vit.views.draw.wrap_text`) and the lesson's PDF
(:mod:`vit.lesson.export`) may break a line between any two characters. The rule of Chinese typesetting (GB/T
15834, and the W3C's *Requirements for Chinese Text Layout*, 禁则) forbids two of those breaks: a line never starts
with closing punctuation ("。" alone on a line, "：x 以 (1, 65, 96) 进入"), and never ends with opening
punctuation. Both wrappers keep such a mark with its neighbour (:func:`glued`), so the greedy wrap carries the
character before a "。" down with it, and the character after a "（" up.

Pure: no PIL, no matplotlib.
"""

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
