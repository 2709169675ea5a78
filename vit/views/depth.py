"""The early-exit plot: the class token read by the final norm and the head after every layer."""

from __future__ import annotations

from vit import i18n
from vit.i18n.names import class_name
from vit.views import describe, plots
from vit.views.base import DEPTH_PLOT_SIZE, View, no_classifier_view


def depth_view(a, size: tuple[int, int] = DEPTH_PLOT_SIZE, lang: str = "en") -> View:
    """The early-exit plot: how the prediction forms across depth."""
    if not a.has_classifier:
        return no_classifier_view(a, i18n.text("early-exit", lang), size, lang)
    lp = a.layer_predictions
    final = class_name(a.topk[0].label, lang)  # "心形 heart" on the Chinese page
    image = plots.depth_plot([p.layer for p in lp], [p.prob for p in lp], [class_name(p.label, lang) for p in lp],
                             [p.final_class_prob for p in lp], final, size, lang)
    caption = i18n.text("depth-caption", lang, L=a.depth, final=final)
    since = len(lp)
    while since > 1 and lp[since - 2].index == a.topk[0].index:  # the top-1 from this layer to the last
        since -= 1
    before = "" if since == 1 else i18n.text("alt-depth-before", lang, layer=since - 1,
                                             label=class_name(lp[since - 2].label, lang))
    probs = describe.series([f"{p.final_class_prob:.0%}" for p in lp], lang)
    alt = i18n.text("alt-depth", lang, L=a.depth, final=final, probs=probs, since=lp[since - 1].layer, before=before)
    return View(image, caption, i18n.text("depth-legend", lang), i18n.text("depth-title", lang, L=a.depth), alt=alt)
