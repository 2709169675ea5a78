"""Each picture's text alternative (issue 36): what it shows, written from the data it is drawn from, in its language.

:func:`describe` is called by :func:`vit.views.registry.draw` for every picture it draws and goes into ``View.alt``
(the page's ``<img alt>``, for a screen reader). Each writer reads the very arrays its view function reads, at the
same layer and head (``Display.layer_of``, ``Display.head``), and says what a student would read off the picture:
which layer and head ("of L"), the brightest patches as token numbers (:func:`vit.views.base.token_index`) with
their values, how concentrated the map is, the class it is about. One or two sentences; the caption says the rest.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vit import i18n
from vit.i18n.names import class_name
from vit.model.families import class_names
from vit.views import base, figure7, inside, why
from vit.views.base import query_cell, token_index
from vit.views.whatif import p_change

TOP = 3  # the brightest patches named
SERIES = 12  # per-layer numbers listed in full up to this many layers; more: SPREAD of them, named by layer
SPREAD = 8
LISTED = 6  # removed patches named at most
PAIRS = 3  # heads switched off named at most


def describe(name: str, source, view, display, weights=None) -> str:
    """The text alternative of picture ``name`` (a :data:`vit.views.registry.PICTURES` key) drawn from ``source``
    as ``display`` says (``weights``: Figure 7's, as ``draw`` takes them); its title for a picture without a writer."""
    writer = WRITERS.get(name)
    return base.plain(view.title) if writer is None else writer(source, display, weights)


# --------------------------------------------------------------------------- words shared by the writers


def _zh(lang: str) -> bool:
    return i18n.language(lang) == "zh"


def _join(items, lang: str) -> str:
    return ("、" if _zh(lang) else ", ").join(items)


def _valued(what, value: str, lang: str) -> str:
    """"28 (0.18)", "28（0.18）"."""
    return f"{what}（{value}）" if _zh(lang) else f"{what} ({value})"


def brightest(heat, prefix: int, k: int = TOP) -> list[tuple[int, float]]:
    """(token, value) of the ``k`` largest cells of a (rows, cols) map, largest first (NaN: a removed patch)."""
    heat = np.asarray(heat, dtype=np.float64)
    flat = np.where(np.isnan(heat), -np.inf, heat).ravel()
    order = np.argsort(-flat, kind="stable")[:min(k, int(np.isfinite(flat).sum()))]
    return [(token_index(divmod(int(i), heat.shape[1]), heat.shape, prefix), float(flat[i])) for i in order]


def _top(heat, prefix: int, lang: str, k: int = TOP, number=base.bar_number) -> str:
    return _join([_valued(t, number(v), lang) for t, v in brightest(heat, prefix, k)], lang)


def focus(heat) -> tuple[float, int, int] | None:
    """(share, k, n): the fewest ``k`` of the map's ``n`` patches holding at least half of its sum, and the share
    they hold; None for a map that is 0 everywhere. NaN cells (removed patches) are not counted."""
    heat = np.asarray(heat, dtype=np.float64).ravel()
    values = np.sort(np.clip(heat[~np.isnan(heat)], 0.0, None))[::-1]
    total = float(values.sum())
    if total <= 0:
        return None
    cumulative = np.cumsum(values) / total
    k = min(int(np.searchsorted(cumulative, 0.5)) + 1, len(values))
    return float(cumulative[k - 1]), k, len(values)


def _focus(heat, lang: str) -> str:
    found = focus(heat)
    return i18n.text("alt-flat", lang) if found is None else \
        i18n.text("alt-focus", lang, share=found[0], k=found[1], n=found[2])


def _series(values: list[str], lang: str) -> str:
    """Numbers per layer from layer 1: all of them, or for a deep model :data:`SPREAD` of them named by layer."""
    if len(values) <= SERIES:
        return _join(values, lang)
    return _join([i18n.text("alt-layer-item", lang, layer=n, item=values[n - 1]) for n in _spread(len(values))],
                 lang)


def _spread(n: int) -> list[int]:
    """:data:`SPREAD` layers of 1..n, evenly spread, the first and the last among them."""
    return sorted({round(x) for x in np.linspace(1, n, SPREAD)})


def _pairs(pairs, lang: str) -> str:
    """(layer, head) pairs in words, at most :data:`PAIRS` of them."""
    words = [i18n.text("alt-pair", lang, layer=l, head=h) for l, h in pairs[:PAIRS]]
    if len(pairs) > PAIRS:
        words.append(i18n.text("alt-more", lang, n=len(pairs) - PAIRS))
    return _join(words, lang)


def _no_classifier(key: str, lang: str) -> str:
    return i18n.text("alt-no-classifier", lang, title=i18n.text(key, lang))


# --------------------------------------------------------------------------- the Patches and Attention tabs


def _grid(a, d, w) -> str:
    rows, cols = a.grid
    p, lang = a.num_prefix_tokens, d.lang
    names = a.prefix_token_names
    prefix = i18n.text("alt-prefix-one", lang) if p == 1 else \
        i18n.text("alt-prefix-many", lang, n=p, names=", ".join(names), last=p - 1)
    outlined = ""
    if d.marks:  # as grid_view: the query outlined only where the picture draws it
        r, c = query_cell(d.query, a.grid)
        outlined = i18n.text("alt-outlined", lang, r=r, c=c, token=token_index((r, c), a.grid, p))
    return i18n.text("alt-grid", lang, rows=rows, cols=cols, P=a.patch_size, prefix=prefix, first=p,
                     last=p + rows * cols - 1, outlined=outlined)


def _query(a, d, w) -> str:
    layer, p = d.layer_of(a), a.num_prefix_tokens
    r, c = query_cell(d.query, a.grid)
    token = token_index((r, c), a.grid, p)
    heat = a.attention_map(layer, d.head, token).numpy()  # as query_view
    lang = d.lang
    return i18n.text("alt-query", lang, token=token, r=r, c=c, layer=layer, L=a.depth, head=d.head,
                     h=a.num_heads, top=_top(heat, p, lang), focus=_focus(heat, lang))


def _rollout(a, d, w) -> str:
    layer = d.layer_of(a)
    heat = a.rollout(layer).numpy()  # as rollout_view
    return i18n.text("alt-rollout", d.lang, layer=layer, L=a.depth, top=_top(heat, a.num_prefix_tokens, d.lang),
                     focus=_focus(heat, d.lang))


def _heads(a, d, w) -> str:
    layer, p = d.layer_of(a), a.num_prefix_tokens
    maps = a.head_maps(layer).numpy()  # (h, rows, cols), as heads_view
    found = [focus(m) or (0.0, m.size, m.size) for m in maps]
    best = min(range(len(maps)), key=lambda i: (found[i][1], -found[i][0], i))  # the fewest patches hold half
    tops = [str(brightest(m, p, 1)[0][0]) for m in maps]  # each tile scaled to its own max: where, not how much
    return i18n.text("alt-heads", d.lang, layer=layer, L=a.depth, h=len(maps), top=_join(tops, d.lang),
                     best=best + 1, focus=_focus(maps[best], d.lang))


def _layers(a, d, w) -> str:
    maps = [a.attention_map(n).numpy() for n in range(1, a.depth + 1)]  # heads fused, as layers_view
    tops = _series([str(brightest(m, a.num_prefix_tokens, 1)[0][0]) for m in maps], d.lang)
    first, last = (focus(m) or (0.0, m.size, m.size) for m in (maps[0], maps[-1]))
    return i18n.text("alt-layers", d.lang, fusion=a.head_fusion, L=a.depth, top=tops, first=first[1],
                     n=maps[0].size, last=last[1])


def _depth(a, d, w) -> str:
    lang = d.lang
    if not a.has_classifier:
        return _no_classifier("early-exit", lang)
    lp, final = a.layer_predictions, a.topk[0]
    since = len(lp)
    while since > 1 and lp[since - 2].index == final.index:  # the top-1 from this layer to the last
        since -= 1
    before = "" if since == 1 else i18n.text("alt-depth-before", lang, layer=since - 1,
                                             label=class_name(lp[since - 2].label, lang))
    probs = _series([f"{p.final_class_prob:.0%}" for p in lp], lang)
    return i18n.text("alt-depth", lang, L=a.depth, final=class_name(final.label, lang), probs=probs,
                     since=lp[since - 1].layer, before=before)


# --------------------------------------------------------------------------- the Inside tab


def _block(a, d, w) -> str:
    res = a.residual()
    r = res[min(max(d.layer_of(a), 1), a.depth) - 1]  # as block_view
    outputs = _series([f"{x.output:.1f}" for x in res], d.lang)
    return i18n.text("alt-block", d.lang, layer=r.layer, L=a.depth, stream=r.stream, attention=r.attention,
                     mlp=r.mlp, output=r.output, outputs=outputs)


def _code(a, d, w) -> str:
    r = a.residual()[min(max(d.layer_of(a), 1), a.depth) - 1]  # block_code_view at the chosen layer
    D, h = int(a.queries[0].shape[-1]), a.num_heads
    return i18n.text("alt-code", d.lang, layer=r.layer, L=a.depth, T=a.num_tokens, D=D, h=h, d=D // h, hidden=4 * D,
                     stream=r.stream, attention=r.attention, mlp=r.mlp, output=r.output)


def _lens(a, d, w) -> str:
    lang = d.lang
    if not a.has_classifier:
        return _no_classifier("token-content", lang)
    layer, names = d.layer_of(a), class_names(a.model)
    indices, probs = (t.numpy() for t in a.patch_lens(layer))  # as lens_view
    top = inside.lens_classes(indices, TOP)
    votes = [i18n.text("alt-votes", lang, count=n, label=class_name(names[c], lang)) for c, n in top]
    others = int(indices.size - sum(n for _, n in top))
    if others:
        votes.append(i18n.text("alt-votes-other", lang, count=others))
    final = a.topk[0]
    return i18n.text("alt-lens", lang, layer=layer, L=a.depth, votes=_join(votes, lang),
                     agree=int((indices == final.index).sum()), n=indices.size, label=class_name(final.label, lang),
                     mean=float(probs.mean()))


def _norms(a, d, w) -> str:
    layer, p, lang = d.layer_of(a), a.num_prefix_tokens, d.lang
    norms = a.token_norms[layer - 1].numpy()  # (T,), as token_norm_view
    heat = norms[p:].reshape(a.grid)
    median = float(np.median(heat))
    over = int((heat > 2 * median).sum())
    return i18n.text("alt-norms", lang, layer=layer, L=a.depth, lo=float(heat.min()), hi=float(heat.max()),
                     median=median, top=_top(heat, p, lang, number=lambda v: f"{v:.1f}"),
                     over=i18n.text("alt-norms-over", lang, k=over) if over else "",
                     prefix=inside.prefix_norms(a.prefix_token_names, norms[:p], lang))


def _matrix(a, d, w) -> str:
    layer = d.layer_of(a)
    m = a.attention_matrix(layer, d.head).numpy().astype(np.float64)  # (T, T), as matrix_view
    i, j = np.unravel_index(int(np.argmax(m)), m.shape)
    columns = m.mean(axis=0)  # what each key token gets from a row, on average
    col = int(np.argmax(columns))
    return i18n.text("alt-matrix", d.lang, T=m.shape[0], layer=layer, L=a.depth, head=d.head, h=a.num_heads,
                     top=base.bar_number(m[i, j]), i=int(i), j=int(j), col=col, colmean=base.bar_number(columns[col]),
                     diag=base.bar_number(float(np.diag(m).mean())))


# --------------------------------------------------------------------------- Figure 7


def smoothness(filters) -> float:
    """The mean correlation of neighbouring pixels (across and down, the channels together) over the filters: near 1
    for smooth stripes and blobs, near 0 for noise."""
    out = []
    for f in np.asarray(filters, dtype=np.float64):  # (3, P, P)
        x = np.concatenate([f[:, :, :-1].ravel(), f[:, :-1, :].ravel()])
        y = np.concatenate([f[:, :, 1:].ravel(), f[:, 1:, :].ravel()])
        if x.std() > 0 and y.std() > 0:
            out.append(float(np.corrcoef(x, y)[0, 1]))
    return float(np.mean(out)) if out else 0.0


def _filters(a, d, w) -> str:
    filters = w("filters")  # (k, 3, P, P), as filters_view
    k, _, P, _ = tuple(filters.shape)
    columns = min(figure7.FILTER_COLUMNS, k)
    return i18n.text("alt-filters", d.lang, k=k, P=P, rows=-(-k // columns), columns=columns,
                     smooth=smoothness(filters))


def _position(a, d, w) -> str:
    sim = np.asarray(w("similarity"), dtype=np.float64)  # (N, N), as position_view
    rows, cols = a.grid
    step = figure7.position_step(a.grid)
    shown = np.stack([sim[r * cols + c] for r in range(0, rows, step) for c in range(0, cols, step)])
    s = figure7.position_structure(sim, a.grid)
    numbers = i18n.text("structure-numbers", d.lang, n=s["neighbours"], line=s["line"], border=s["border"],
                        other=s["other"])
    return i18n.text("alt-position", d.lang, shown=len(range(0, rows, step)), columns=len(range(0, cols, step)),
                     rows=rows, cols=cols, lo=base.bar_number(shown.min()), hi=base.bar_number(shown.max()),
                     numbers=numbers)


def _distance(a, d, w) -> str:
    dist = a.mean_attention_distance().numpy()  # (L, h), as distance_view
    fl, fh = np.unravel_index(int(np.argmax(dist)), dist.shape)
    nl, nh = np.unravel_index(int(np.argmin(dist)), dist.shape)
    return i18n.text("alt-distance", d.lang, h=a.num_heads, L=a.depth, lo1=float(dist[0].min()),
                     hi1=float(dist[0].max()), loL=float(dist[-1].min()), hiL=float(dist[-1].max()), fl=fl + 1,
                     fh=fh + 1, far=float(dist[fl, fh]), nl=nl + 1, nh=nh + 1, near=float(dist[nl, nh]))


# --------------------------------------------------------------------------- Why this class? and What if?


def _why(e, d, w) -> str:
    heat = e.map.numpy()  # (rows, cols), as explanation_view
    p = getattr(e, "num_prefix_tokens", 1)  # an explanation does not say: the chapter's one class token
    where = "" if getattr(e, "layer", None) is None else i18n.text("alt-why-block", d.lang, layer=e.layer)
    return i18n.text("alt-why", d.lang, method=why.method_words(e.method, d.lang)[0], where=where,
                     question=why.question(e, d.lang), label=class_name(e.label, d.lang),
                     prob=e.prob, top=_top(heat, p, d.lang), focus=_focus(heat, d.lang))


def _curves(pair, d, w) -> str:
    e, curves = pair  # as curves_view
    lang, parts = d.lang, []
    for mode in ("deletion", "insertion"):
        ours, rand = curves.get((mode, "saliency")), curves.get((mode, "random"))
        if ours is None or rand is None:
            continue
        beats = ours.auc < rand.auc if mode == "deletion" else ours.auc > rand.auc
        parts.append(i18n.text("alt-curve", lang, mode=i18n.text(mode, lang), start=f"{ours.probs[0]:.1%}",
                               end=f"{ours.probs[-1]:.1%}", ours=why.auc_text(ours.auc), rand=why.auc_text(rand.auc),
                               beats=i18n.text("alt-better" if beats else "alt-not-better", lang)))
    return i18n.text("alt-curves", lang, method=why.method_words(e.method, lang)[0], label=class_name(e.label, lang),
                     parts=("；" if _zh(lang) else "; ").join(parts))


def _whatif(iv, d, w) -> str:
    lang, p = d.lang, iv.num_prefix_tokens
    top = _top(iv.rollout, p, lang)  # (rows, cols), NaN where removed, as intervention_view
    before, after = f"{iv.prob_before:.1%}", f"{iv.prob_after:.1%}"
    if not iv.changed:
        return i18n.text("alt-whatif-nothing", lang, label=class_name(iv.label, lang), before=before, top=top)
    parts = []
    if iv.removed:
        tokens = [str(p + i) for i in iv.removed[:LISTED]]
        if len(iv.removed) > LISTED:
            tokens.append(i18n.text("alt-more", lang, n=len(iv.removed) - LISTED))
        parts.append(i18n.text("alt-removed", lang, n=len(iv.removed), total=len(iv.removed) + len(iv.kept),
                               tokens=_join(tokens, lang)))
    if iv.ablated:
        parts.append(i18n.text("alt-off", lang, n=len(iv.ablated), pairs=_pairs(list(iv.ablated), lang)))
    now = iv.topk[0]
    return i18n.text("alt-whatif", lang, change=i18n.text("alt-and", lang).join(parts),
                     label=class_name(iv.label, lang), before=before, after=after, now=class_name(now.label, lang),
                     p=f"{now.prob:.1%}", kept=len(iv.kept), top=top)


def _head_grid(g, d, w) -> str:
    lang = d.lang
    off = i18n.text("alt-off", lang, n=len(g.ablated), pairs=_pairs(list(g.ablated), lang)) if g.ablated else \
        i18n.text("alt-none-off", lang)
    if g.importance is None:
        return i18n.text("alt-grid-heads", lang, L=g.depth, h=g.heads, off=off)
    drops = np.asarray(g.importance, dtype=np.float64)  # (L, h), as head_grid_view
    flat = np.where(np.isnan(drops), -np.inf, drops).ravel()
    order = np.argsort(-flat, kind="stable")[:TOP]
    top = [_valued(i18n.text("alt-pair", lang, layer=i // g.heads + 1, head=i % g.heads + 1),
                   p_change(float(flat[i]), lang), lang) for i in order if np.isfinite(flat[i])]
    small = int((np.abs(drops[~np.isnan(drops)]) < 0.01).sum())
    return i18n.text("alt-importance", lang, label=class_name(g.label, lang), L=g.depth, h=g.heads,
                     top=_join(top, lang), small=small, total=drops.size, off=off)


# name -> (source, Display, weights) -> its text alternative; every picture of vit.views.registry.PICTURES has one
WRITERS: dict[str, Callable[..., str]] = {
    "patch-grid": _grid, "query-view": _query, "rollout-view": _rollout, "head-views": _heads,
    "layer-views": _layers, "depth-plot": _depth, "block-view": _block, "block-code": _code, "lens-view": _lens,
    "token-norms": _norms, "matrix-view": _matrix, "filters-view": _filters, "position-view": _position,
    "distance-view": _distance, "why-map": _why, "why-curves": _curves, "whatif-map": _whatif,
    "whatif-heads": _head_grid,
}
