"""The depth view: the early-exit plot, the class token read by the final norm and the head after every
layer, to show at what depth the prediction forms.
"""

from __future__ import annotations

from vit import i18n
from vit.i18n.names import class_name
from vit.views import plots
from vit.views.base import DEPTH_PLOT_SIZE, View, no_classifier_view


def depth_view(a, size: tuple[int, int] = DEPTH_PLOT_SIZE, lang: str = "en") -> View:
    """The early-exit plot: how the prediction forms across depth."""
    if not a.has_classifier:
        return no_classifier_view(a, i18n.text("early-exit", lang), size, lang)
    lp = a.layer_predictions
    final = class_name(a.topk[0].label, lang)  # "心形 heart" on the Chinese page
    image = plots.depth_plot([p.layer for p in lp], [p.prob for p in lp], [class_name(p.label, lang) for p in lp],
                             [p.final_class_prob for p in lp], final, size)
    caption = i18n.text("depth-caption", lang, L=a.depth, final=final)
    return View(image, caption, i18n.text("depth-legend", lang), i18n.text("depth-title", lang, L=a.depth))
