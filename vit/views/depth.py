"""The depth view: the early-exit plot, the class token read by the final norm and the head after every
layer, to show at what depth the prediction forms.
"""

from __future__ import annotations

from vit.views import plots
from vit.views.base import DEPTH_PLOT_SIZE, View, no_classifier_view


def depth_view(a, size: tuple[int, int] = DEPTH_PLOT_SIZE) -> View:
    """The early-exit plot: how the prediction forms across depth."""
    if not a.has_classifier:
        return no_classifier_view(a, "Early exit", size)
    lp = a.layer_predictions
    final = a.topk[0].label
    image = plots.depth_plot([p.layer for p in lp], [p.prob for p in lp], [p.label for p in lp],
                             [p.final_class_prob for p in lp], final, size)
    caption = (
        f"**How the prediction forms across depth:** after each layer 1 to L = {a.depth}, the class token "
        f"goes through the final norm and the head (an early exit). Blue: the probability of the final "
        f"answer, **{final}**; orange: the top-1 class at that layer, named where it changes."
    )
    legend = "blue circles: probability of the final class after each layer; orange squares: the top-1 at that layer"
    return View(image, caption, legend, f"Early exit, layers 1-{a.depth}")
