"""The Why this class? tab's views: an explanation map over the image, and the deletion and insertion test
of it (Petsiuk et al., 2018) beside a random order, with the methods' comparison table.
"""

from __future__ import annotations

from vit.explanations.methods import METHODS
from vit.views import base, plots
from vit.views.base import DEPTH_PLOT_SIZE, DISPLAY_SIZE, View


def explanation_view(e, opacity: float, cmap: str, size: int = DISPLAY_SIZE) -> View:
    """An :class:`~vit.explanations.maps.Explanation`'s map over the image, with its colour bar."""
    method = METHODS[e.method]
    heat = e.map.numpy()  # (rows, cols)
    image, scale, legend = base.heat_view(e, heat, opacity, cmap, size, label="brighter = more relevant to this class")
    same = ("" if method.class_specific else
            " This method does not depend on the class: every class gets this same map.")
    where = "" if getattr(e, "layer", None) is None else f", read at block {e.layer}'s `norm1`"
    caption = (f"**{method.title}{where} for “{e.label}” ({e.prob:.1%}):** the {e.grid[0]}×{e.grid[1]} patches, "
               f"brighter where the method puts more of the reason ({method.paper}).{same}")
    return View(image, caption, legend, f"{method.title}, {e.label}", scale)


CURVE_COLOURS = {"deletion": plots.BLUE, "insertion": plots.ORANGE}


def auc_text(value: float) -> str:
    """An area under a curve with three significant digits: 0.412, and 0.00213 for a class the model barely sees."""
    return f"{value:.3g}"


def curves_view(e, curves: dict, size: tuple[int, int] = DEPTH_PLOT_SIZE) -> View:
    """Deletion and insertion curves of an explanation, beside the same in a random order.

    Args:
        e: the :class:`~vit.explanations.maps.Explanation` tested.
        curves: ``{(mode, order): Curve}`` from :func:`vit.explanations.perturb.perturbation_curves`.
    """
    title = METHODS[e.method].title
    series = []
    for (mode, order), c in sorted(curves.items(), key=lambda kv: (kv[0][0], kv[0][1] != "saliency")):
        name = f"{mode}, {'map order' if order == 'saliency' else 'random order'} (AUC {auc_text(c.auc)})"
        series.append(plots.Series(name, c.fractions, c.probs, CURVE_COLOURS[mode], dashed=order == "random"))
    top = max(max(c.probs) for c in curves.values())
    image = plots.line_plot(series, "patches perturbed (most relevant first)", f"p({e.label})", top, size)
    verdicts = []
    for mode in ("deletion", "insertion"):
        ours, rand = curves.get((mode, "saliency")), curves.get((mode, "random"))
        if ours is None or rand is None:
            continue
        beats = ours.auc < rand.auc if mode == "deletion" else ours.auc > rand.auc
        verdicts.append(f"{mode} AUC {auc_text(ours.auc)} against {auc_text(rand.auc)} for random ({ours.better}: "
                        f"{'better than' if beats else 'no better than'} random)")
    base = next(iter(curves.values())).baseline
    caption = (f"**Is the {title} map right for “{e.label}”?** Patches replaced by the "
               f"{'normalisation mean (grey)' if base == 'mean' else 'blurred image'} in the order the map ranks "
               f"them: " + "; ".join(verdicts) + ".")
    legend = "solid: the map's order; dashed: a random order; deletion: lower is better; insertion: higher is better"
    return View(image, caption, legend, f"Deletion and insertion, {title}, {e.label}")


COMPARISON_HEADERS = ["method", "depends on the class", "deletion AUC (lower is better)",
                      "insertion AUC (higher is better)", "time (ms)"]


def comparison_rows(results: list) -> list[list[str]]:
    """One table row per (Explanation, curves) pair, and a last row for the random order."""
    rows = []
    for e, curves in results:
        m = METHODS[e.method]
        rows.append([m.title, "yes" if m.class_specific else "no", auc_text(curves["deletion", "saliency"].auc),
                     auc_text(curves["insertion", "saliency"].auc), f"{e.timings_ms['explain']:.0f}"])
    if results:
        curves = results[0][1]
        rows.append(["random order (chance)", "—", auc_text(curves["deletion", "random"].auc),
                     auc_text(curves["insertion", "random"].auc), "—"])
    return rows
