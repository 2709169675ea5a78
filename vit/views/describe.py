"""The phrases the views' text alternatives (``View.alt``) share, so that each view, writing its own from the arrays
it draws, says the brightest patches, a map's focus, per-layer numbers and (layer, head) pairs alike."""

from __future__ import annotations

import numpy as np

from vit import i18n
from vit.views.base import bar_number, token_index

TOP = 3  # the brightest patches named
SERIES = 12  # per-layer numbers listed in full up to this many layers; more: SPREAD of them, named by layer
SPREAD = 8
PAIRS = 3  # heads switched off named at most


def _zh(lang: str) -> bool:
    return i18n.language(lang) == "zh"


def join(items, lang: str) -> str:
    return ("、" if _zh(lang) else ", ").join(items)


def valued(what, value: str, lang: str) -> str:
    """"28 (0.18)", "28（0.18）"."""
    return f"{what}（{value}）" if _zh(lang) else f"{what} ({value})"


def brightest(heat, prefix: int, k: int = TOP) -> list[tuple[int, float]]:
    """(token, value) of the ``k`` largest cells of a (rows, cols) map, largest first (NaN: a removed patch)."""
    heat = np.asarray(heat, dtype=np.float64)
    flat = np.where(np.isnan(heat), -np.inf, heat).ravel()
    order = np.argsort(-flat, kind="stable")[:min(k, int(np.isfinite(flat).sum()))]
    return [(token_index(divmod(int(i), heat.shape[1]), heat.shape, prefix), float(flat[i])) for i in order]


def top(heat, prefix: int, lang: str, k: int = TOP, number=bar_number) -> str:
    """The brightest patches in words: "28 (0.18), 29 (0.12), 36 (0.09)"."""
    return join([valued(t, number(v), lang) for t, v in brightest(heat, prefix, k)], lang)


def focus(heat) -> tuple[float, int, int] | None:
    """(share, k, n): the fewest ``k`` of ``n`` patches holding half the map's sum, and their share; None for an all-0
    map. NaN cells (removed patches) are not counted."""
    heat = np.asarray(heat, dtype=np.float64).ravel()
    values = np.sort(np.clip(heat[~np.isnan(heat)], 0.0, None))[::-1]
    total = float(values.sum())
    if total <= 0:
        return None
    cumulative = np.cumsum(values) / total
    k = min(int(np.searchsorted(cumulative, 0.5)) + 1, len(values))
    return float(cumulative[k - 1]), k, len(values)


def focus_words(heat, lang: str) -> str:
    """"40% of it on 3 of 64 patches" (:func:`focus` in words)."""
    found = focus(heat)
    return i18n.text("alt-flat", lang) if found is None else \
        i18n.text("alt-focus", lang, share=found[0], k=found[1], n=found[2])


def series(values: list[str], lang: str) -> str:
    """Numbers per layer from layer 1: all of them, or for a deep model :data:`SPREAD` of them named by layer."""
    if len(values) <= SERIES:
        return join(values, lang)
    return join([i18n.text("alt-layer-item", lang, layer=n, item=values[n - 1]) for n in _spread(len(values))],
                 lang)


def _spread(n: int) -> list[int]:
    """:data:`SPREAD` layers of 1..n, evenly spread, the first and the last among them."""
    return sorted({round(x) for x in np.linspace(1, n, SPREAD)})


def pairs(heads, lang: str) -> str:
    """(layer, head) pairs in words, at most :data:`PAIRS` of them."""
    words = [i18n.text("alt-pair", lang, layer=l, head=h) for l, h in heads[:PAIRS]]
    if len(heads) > PAIRS:
        words.append(i18n.text("alt-more", lang, n=len(heads) - PAIRS))
    return join(words, lang)
