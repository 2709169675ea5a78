"""The Why this class? tab's views: an explanation map, its deletion and insertion test (Petsiuk et al., 2018)
beside a random order, and the methods' comparison table."""

from __future__ import annotations

from vit import i18n
from vit.explanations.methods import METHODS, POINTS_AT, TWO_OBJECTS
from vit.i18n.names import class_name
from vit.views import base, describe, plots
from vit.views.base import DEPTH_PLOT_SIZE, DISPLAY_SIZE, View


def method_words(name: str, lang: str = "en") -> tuple[str, str]:
    """(title, paper) of a method in ``lang``: the registry's, unless the catalogue has its words (a name stays)."""
    m = METHODS[name]
    key = f"method-{name}"
    if f"{key}-title" not in i18n.MESSAGES:
        return m.title, m.paper
    return i18n.text(f"{key}-title", lang), i18n.text(f"{key}-paper", lang)


def question(e, lang: str = "en") -> str:
    """The question a map answers: "why “heart”?", or "why “heart” rather than “circle”?"."""
    label = class_name(e.label, lang)
    if getattr(e, "versus_label", None) is None:
        return i18n.text("why-question", lang, label=label)
    return i18n.text("why-rather", lang, label=label, versus=class_name(e.versus_label, lang))


def explanation_view(e, opacity: float, cmap: str, size: int = DISPLAY_SIZE, lang: str = "en") -> View:
    """An :class:`~vit.explanations.maps.Explanation`'s map over the image, with its colour bar."""
    method = METHODS[e.method]
    heat = e.map.numpy()  # (rows, cols)
    label = class_name(e.label, lang)
    words = (i18n.text("why-label", lang) if getattr(e, "versus_label", None) is None else
             i18n.text("why-rather-label", lang, label=label, versus=class_name(e.versus_label, lang)))
    image, scale, legend = base.heat_view(e, heat, opacity, cmap, size, label=words, lang=lang)
    same = "" if method.class_specific else i18n.text("why-same", lang)
    share = TWO_OBJECTS.get(e.method, 0.5 if not method.class_specific else 1.0)
    weak = "" if share >= POINTS_AT or not method.class_specific else i18n.text(
        "why-weak", lang, share=share, best=max(TWO_OBJECTS.values()))
    where = "" if getattr(e, "layer", None) is None else i18n.text("why-where", lang, layer=e.layer)
    title, paper = method_words(e.method, lang)
    caption = i18n.text("why-caption", lang, method=title, where=where, question=question(e, lang), label=label,
                        prob=e.prob, rows=e.grid[0], cols=e.grid[1], paper=paper, same=same, weak=weak)
    p = getattr(e, "num_prefix_tokens", 1)  # an explanation does not say: the chapter's one class token
    block = "" if getattr(e, "layer", None) is None else i18n.text("alt-why-block", lang, layer=e.layer)
    alt = i18n.text("alt-why", lang, method=title, where=block, question=question(e, lang), label=label, prob=e.prob,
                    top=describe.top(heat, p, lang), focus=describe.focus_words(heat, lang))
    return View(image, caption, legend, i18n.text("why-title", lang, method=title, question=question(e, lang)),
                scale, alt=alt)


CURVE_COLOURS = {"deletion": plots.BLUE, "insertion": plots.ORANGE}


def auc_text(value: float) -> str:
    """Three significant digits: 0.412, and 0.00213 for a class the model barely sees."""
    return f"{value:.3g}"


def curves_view(e, curves: dict, size: tuple[int, int] = DEPTH_PLOT_SIZE, lang: str = "en") -> View:
    """Deletion and insertion curves of explanation ``e`` beside a random order (``curves``: ``{(mode, order):
    Curve}`` of :func:`vit.explanations.perturb.perturbation_curves`)."""
    title = method_words(e.method, lang)[0]
    series = []
    for (mode, order), c in sorted(curves.items(), key=lambda kv: (kv[0][0], kv[0][1] != "saliency")):
        order_words = i18n.text("map-order" if order == "saliency" else "random-order", lang)
        name = i18n.text("curve-name", lang, mode=i18n.text(mode, lang), auc=auc_text(c.auc), order=order_words)
        short = i18n.text(mode if order == "saliency" else "random-short", lang)  # narrow frames
        short = f"{short} {auc_text(c.auc)}"
        series.append(plots.Series(name, c.fractions, c.probs, CURVE_COLOURS[mode], dashed=order == "random",
                                   short=short))
    top = max(max(c.probs) for c in curves.values())
    label = class_name(e.label, lang)
    image = plots.line_plot(series, i18n.text("curves-x", lang), f"p({label})", top, size)
    verdicts, tested = [], []  # the caption's, the text alternative's
    for mode in ("deletion", "insertion"):
        ours, rand = curves.get((mode, "saliency")), curves.get((mode, "random"))
        if ours is None or rand is None:
            continue
        beats = ours.auc < rand.auc if mode == "deletion" else ours.auc > rand.auc
        better = {"lower is better": "lower-better", "higher is better": "higher-better"}.get(ours.better)
        verdicts.append(i18n.text("verdict", lang, mode=i18n.text(mode, lang), ours=auc_text(ours.auc),
                                  rand=auc_text(rand.auc), better=i18n.text(better, lang) if better else ours.better,
                                  beats=i18n.text("better-than" if beats else "no-better-than", lang)))
        tested.append(i18n.text("alt-curve", lang, mode=i18n.text(mode, lang), start=f"{ours.probs[0]:.1%}",
                                end=f"{ours.probs[-1]:.1%}", ours=auc_text(ours.auc), rand=auc_text(rand.auc),
                                beats=i18n.text("alt-better" if beats else "alt-not-better", lang)))
    baseline = next(iter(curves.values())).baseline
    semicolon = "；" if i18n.language(lang) == "zh" else "; "
    caption = i18n.text("curves-caption", lang, method=title, label=label,
                        baseline=i18n.text("baseline-mean" if baseline == "mean" else "baseline-blur", lang),
                        verdicts=semicolon.join(verdicts))
    alt = i18n.text("alt-curves", lang, method=title, label=label, parts=semicolon.join(tested))
    return View(image, caption, i18n.text("curves-legend", lang),
                i18n.text("curves-title", lang, method=title, label=label), alt=alt)


def comparison_headers(lang: str = "en") -> list[str]:
    return i18n.text("comparison-headers", lang).split("|")


def comparison_rows(results: list, lang: str = "en") -> list[list[str]]:
    """One table row per (Explanation, curves) pair, and a last row for the random order."""
    rows = []
    for e, curves in results:
        m = METHODS[e.method]
        rows.append([method_words(m.name, lang)[0], i18n.text("yes" if m.class_specific else "no", lang),
                     auc_text(curves["deletion", "saliency"].auc),
                     auc_text(curves["insertion", "saliency"].auc), f"{e.timings_ms['explain']:.0f}"])
    if results:
        curves = results[0][1]
        rows.append([i18n.text("random-chance", lang), "—", auc_text(curves["deletion", "random"].auc),
                     auc_text(curves["insertion", "random"].auc), "—"])
    return rows
