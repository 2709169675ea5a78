"""Are the explanations right? Scores against ground truth on drawn shapes, and against the model itself.

On ``vit.shapes`` drawings the object's pixels are known, so each map can be scored by

* **pointing game** (Zhang et al. 2016, "Top-down Neural Attention by Excitation Backprop"): is the
  map's maximum (first by token index among ties) on a patch that holds any pixel of the target's mask?
* **mask share**: the share of the map's positive mass on the target's pixels, each patch's value spread evenly
  over its P x P pixels: sum_p map_p⁺ coverage_p / sum_p map_p⁺ (coverage_p: the mask's share of patch p);
* **deletion / insertion AUC** (:mod:`vit.explanations.perturb`): does the model's probability for the target follow
  the map? These need no ground truth: they test the map against the model.

Two kinds of images: one shape (explaining its class), and two shapes of different classes in two
halves, each class explained in turn with its own mask. A class-agnostic map (rollout, attention)
is the same for both classes, so at best it points at one of the two: about half the pointing game.
A "random" row (a seeded uniform map, random patch order) is the chance level.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from vit import shapes
from vit.explanations.maps import explain
from vit.explanations.methods import METHODS
from vit.explanations.perturb import perturbation_curves
from vit.model.loaded import LoadedModel

EVAL_SEED = 20_000  # drawings never trained on (training used seed 0, its tables seed 10,000)
RANDOM = "random"  # the chance row


def patch_coverage(mask: np.ndarray, patch_size: int) -> Tensor:
    """The mask's share of each patch: (H, W) bool -> (rows, cols) float in [0, 1]."""
    rows, cols = mask.shape[0] // patch_size, mask.shape[1] // patch_size
    m = torch.from_numpy(np.ascontiguousarray(mask[: rows * patch_size, : cols * patch_size])).float()
    return m.reshape(rows, patch_size, cols, patch_size).mean(dim=(1, 3))


def pointing_hit(saliency: Tensor, coverage: Tensor) -> bool:
    """Is the map's maximum (first by token index among ties) on a patch holding part of the mask?"""
    return bool(coverage.flatten()[int(saliency.flatten().argmax())] > 0)


def mask_share(saliency: Tensor, coverage: Tensor) -> float:
    """Share of the map's positive mass on the mask's pixels (0 for a map with none): a signed map (AttnLRP's,
    occlusion's; below zero: evidence against the class) counts what it puts for the class."""
    positive = saliency.clamp(min=0)
    total = float(positive.sum())
    return float((positive * coverage).sum()) / total if total > 0 else 0.0


@dataclass(frozen=True)
class Score:
    """One method's scores over one kind of image (means over the explanations)."""

    method: str  # a METHODS key, "random", or "gradcam@l" (Grad-CAM at block l, beside its default's row)
    images: str  # "one shape" or "two shapes"
    explained: int  # how many (image, class) pairs
    pointing: float  # pointing game hit rate
    share: float  # mean mask share
    deletion: float  # mean deletion AUC (lower = more faithful)
    insertion: float  # mean insertion AUC (higher = more faithful)
    layer: int | None = None  # Grad-CAM: the block whose norm1 output it read


def evaluate_shapes(
    loaded: LoadedModel,
    single: int = 200,
    two: int = 200,
    methods: tuple[str, ...] = tuple(METHODS),
    steps: int = 10,
    baseline: str = "mean",
    seed: int = EVAL_SEED,
    progress: Callable[[int, int], None] | None = None,
    gradcam_layers: tuple[int, ...] = (),
) -> list[Score]:
    """Every method (and the random row) over ``single`` one-shape and ``two`` two-shape drawings.

    Each class is explained as the drawing's true class (not the model's top-1); on two-shape
    drawings both classes are explained, each against its own mask. Grad-CAM runs at its default
    block, and with ``gradcam_layers`` also at each of these blocks (rows of their own).
    """
    size, P = loaded.config.image_size, loaded.config.patch_size
    sets = {"one shape": shapes.sample(single, seed, size), "two shapes": shapes.sample(two, seed + 1, size, two=True)}
    extra = {f"gradcam@{layer}": layer for layer in gradcam_layers}  # row name -> Grad-CAM block
    names = (*methods, *extra, RANDOM)
    jobs = [(kind, image, label, mask)
            for kind, (images, labels, masks) in sets.items()
            for image, label, mask in zip(images, labels, masks)
            for label, mask in (zip(label, mask) if isinstance(label, tuple) else [(label, mask)])]
    raw = {(name, kind): [] for kind in sets for name in names}  # -> [(hit, share, deletion, insertion)]
    generator = torch.Generator().manual_seed(seed)
    for done, (kind, image, label, mask) in enumerate(jobs):
        coverage = patch_coverage(mask, P)
        inp = loaded.input(image)  # decoded and preprocessed once for every method and curve
        explained = {m: explain(loaded, inp, method=m, target=label) for m in methods}
        explained |= {name: explain(loaded, inp, method="gradcam", target=label, layer=layer)
                      for name, layer in extra.items()}
        maps = {m: e.map for m, e in explained.items()}
        maps[RANDOM] = torch.rand(coverage.shape, generator=generator)
        for name, saliency in maps.items():  # an explanation gives its curves their unperturbed point
            curves = perturbation_curves(loaded, inp, explained.get(name, saliency), label, steps, baseline,
                                         orders=("random",) if name == RANDOM else ("saliency",), seed=done)
            order = "random" if name == RANDOM else "saliency"
            raw[name, kind].append((pointing_hit(saliency, coverage), mask_share(saliency, coverage),
                                    curves["deletion", order].auc, curves["insertion", order].auc))
        if progress:
            progress(done + 1, len(jobs))
    from vit.explanations.maps import gradcam_layer  # noqa: PLC0415

    out = []
    for (name, kind), rows in raw.items():
        a = np.asarray(rows, dtype=float).reshape(-1, 4)
        layer = extra.get(name, gradcam_layer(loaded) if name == "gradcam" else None)
        out.append(Score(name, kind, len(rows), *(float(v) for v in a.mean(axis=0)), layer=layer) if len(rows)
                   else Score(name, kind, 0, *([float("nan")] * 4), layer=layer))
    return out


def markdown(scores: list[Score]) -> str:
    """The scores as a Markdown table, one row per method and kind of image."""
    lines = ["| method | images | explained | pointing game ↑ | mask share ↑ | deletion AUC ↓ | insertion AUC ↑ |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for s in scores:
        base = s.method.split("@")[0]
        title = METHODS[base].title if base in METHODS else "random (chance)"
        title += "" if s.layer is None else f", block {s.layer}" + (" (its default)" if base == s.method else "")
        code = base if s.layer is None else f"{base}`, `layer={s.layer}"
        lines.append(f"| {title} (`{code}`) | {s.images} | {s.explained} | {s.pointing:.1%} | {s.share:.1%} | "
                     f"{s.deletion:.3f} | {s.insertion:.3f} |")
    return "\n".join(lines)
