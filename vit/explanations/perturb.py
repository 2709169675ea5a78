"""Is the explanation right? Deletion and insertion curves over the patches it ranks.

Petsiuk, Das & Saenko 2018, "RISE" (BMVC), on the ViT's own patches (docs/explanations.md, "The test"): the top
round(f N) patches of the map's ranking replaced by the baseline (deletion) or the only ones kept (insertion).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from vit import validate
from vit.errors import InputError
from vit.explanations.maps import Explanation, require_classifier, target_index
from vit.model.loaded import LoadedModel, ModelInput
from vit.model.partial import classify_from

MODES = ("deletion", "insertion")
BASELINES = ("mean", "blur")
ORDERS = ("saliency", "random")
BLUR_SIGMA = 0.05  # of the input side: 11 px at 224, 3.2 px at 64
BATCH_TOKENS = 8192  # images per batch = this // (N+1): 41 at 197 tokens, 2 at 3,137


@dataclass(frozen=True)
class Curve:
    """One perturbation curve: the target's probability as patches are deleted or inserted."""

    mode: str  # "deletion" (lower auc = more faithful) or "insertion" (higher auc = more faithful)
    order: str  # "saliency" (the map's ranking) or "random" (a seeded permutation)
    baseline: str  # "mean" or "blur"
    fractions: list[float]  # 0, 1/steps, ..., 1
    probs: list[float]  # softmax probability of the target at each fraction
    auc: float  # trapezoid rule over the fractions

    @property
    def better(self) -> str:
        """Which way is more faithful, in words."""
        return "lower is better" if self.mode == "deletion" else "higher is better"


def patch_ranking(saliency: Tensor, order: str = "saliency", seed: int = 0) -> Tensor:
    """Patch indices 0..N-1 (row-major), the first perturbed first: (rows, cols) -> (N,). "saliency": by decreasing
    value, ties by index; "random": a permutation seeded by ``seed``, the same on every machine."""
    n = saliency.numel()
    if order == "random":
        return torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    return torch.sort(saliency.flatten().float().cpu(), descending=True, stable=True).indices


def patch_counts(num_patches: int, steps: int) -> list[int]:
    """How many patches are perturbed at each fraction s/steps, s = 0..steps: round(f N)."""
    return [round(s / steps * num_patches) for s in range(steps + 1)]


def from_image(ranking: Tensor, counts: Iterable[int], mode: str) -> Tensor:
    """Which patches come from the image (True), not the baseline: (S, N) bool. Deletion: all but the first
    ``count`` ranked; insertion: only those."""
    rows = []
    for count in counts:
        chosen = torch.zeros(ranking.numel(), dtype=torch.bool)
        chosen[ranking[:count]] = True
        rows.append(~chosen if mode == "deletion" else chosen)
    return torch.stack(rows)


def compose(x: Tensor, baseline: Tensor, keep: Tensor, grid: tuple[int, int], patch_size: int) -> Tensor:
    """Images whose kept patches come from ``x`` and the others from ``baseline``: (1, C, H, W) twice, (S, N) bool
    -> (S, C, H, W)."""
    masks = keep.reshape(-1, 1, *grid).to(x.device)  # (S, 1, rows, cols)
    masks = masks.repeat_interleave(patch_size, dim=-2).repeat_interleave(patch_size, dim=-1)  # (S, 1, H, W)
    return torch.where(masks, x, baseline)


def blurred(x: Tensor) -> Tensor:
    """A Gaussian blur of a model input, sigma = ``BLUR_SIGMA`` of its side: (1, C, H, W) -> (1, C, H, W). On the
    normalised input: normalisation is affine and the kernel sums to 1, so this is the image's blur, normalised."""
    from torchvision.transforms.functional import gaussian_blur  # noqa: PLC0415

    sigma = BLUR_SIGMA * max(x.shape[-2:])
    size = 2 * math.ceil(3 * sigma) + 1
    size = min(size, 2 * (min(x.shape[-2:]) // 2) - 1)  # reflection needs the kernel inside the image
    return gaussian_blur(x, [size, size], [sigma, sigma])


def trapezoid(fractions: list[float], probs: list[float]) -> float:
    """Area under the curve by the trapezoid rule."""
    return float(sum((b - a) * (p + q) / 2 for a, b, p, q in zip(fractions, fractions[1:], probs, probs[1:])))


def class_logits(model, x: Tensor) -> Tensor:
    """``model(x)``, the last block computing only what reaches the head (:func:`vit.model.partial.classify_from`):
    (B, C, H, W) -> (B, K)."""
    return classify_from(model, model.embedding(x))  # (B, C, H, W) -> (B, N+1, D) -> (B, K)


@torch.inference_mode()
def _probs(loaded: LoadedModel, images: Tensor, target: int) -> Tensor:
    """The target's softmax probability for each image, in batches: (S, C, H, W) -> (S,)."""
    per_batch = max(1, BATCH_TOKENS // loaded.config.num_tokens)
    with loaded.lock:
        out = [class_logits(loaded.module, chunk).float().softmax(-1)[:, target] for chunk in images.split(per_batch)]
    return torch.cat(out).cpu() if out else torch.zeros(0)


# The all-"mean" image is zero after normalising whatever the photo: its probabilities are the model's own,
# computed once per model (a curve then runs 10 images, not 11).
_all_mean: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> (K,) softmax of the all-mean image


def _all_mean_probs(loaded: LoadedModel, x: Tensor) -> Tensor:
    probs = _all_mean.get(loaded.module)
    if probs is None:
        with torch.inference_mode(), loaded.lock:
            probs = class_logits(loaded.module, torch.zeros_like(x))[0].float().softmax(-1).cpu()
        _all_mean[loaded.module] = probs
    return probs


def _explained_probs(saliency, inp: ModelInput) -> Tensor | None:
    """The (K,) softmax of the unperturbed image, when ``saliency`` is an Explanation of exactly these pixels."""
    if isinstance(saliency, Explanation) and np.array_equal(saliency.image, inp.view):
        return saliency.probs
    return None


def _validated(loaded: LoadedModel, saliency, target, steps, baseline, grid) -> tuple[Tensor, int | None, int, str]:
    if not isinstance(saliency, Tensor) or tuple(saliency.shape) != tuple(grid) or not saliency.isfinite().all():
        got = tuple(saliency.shape) if isinstance(saliency, Tensor) else type(saliency).__name__
        raise InputError(f"saliency must be a finite map of shape {tuple(grid)} (rows, cols of patches) for this "
                         f"model and image, got {got}")
    require_classifier(loaded)
    target = target_index(target, loaded.class_names)
    steps = validate.steps(steps)
    baseline = validate.choice("baseline", baseline, BASELINES)
    return saliency, target, steps, baseline


def perturbation_curves(
    loaded: LoadedModel,
    image,
    saliency,
    target=None,
    steps: int = 10,
    baseline: str = "mean",
    modes: tuple[str, ...] = MODES,
    orders: tuple[str, ...] = ORDERS,
    seed: int = 0,
) -> dict[tuple[str, str], Curve]:
    """Several curves of one map at once, every distinct perturbed image run once: ``{(mode, order): Curve}`` for
    every mode in ``modes`` and order in ``orders``; the arguments as :func:`perturbation_curve`'s."""
    modes = tuple(validate.choice("mode", m, MODES) for m in modes)
    orders = tuple(validate.choice("order", o, ORDERS) for o in orders)
    inp = loaded.input(image)
    x = inp.x  # (1, C, H, W)
    P = loaded.config.patch_size
    grid = (x.shape[-2] // P, x.shape[-1] // P)
    seen = _explained_probs(saliency, inp)  # (K,) or None
    saliency = saliency.map if isinstance(saliency, Explanation) else saliency
    saliency, target, steps, baseline = _validated(loaded, saliency, target, steps, baseline, grid)
    N = grid[0] * grid[1]
    counts = patch_counts(N, steps)
    keeps = {(m, o): from_image(patch_ranking(saliency, o, seed), counts, m) for m in modes for o in orders}
    unique, where = torch.unique(torch.cat(list(keeps.values())), dim=0, return_inverse=True)  # (U, N), (S,)
    base = torch.zeros_like(x) if baseline == "mean" else blurred(x)
    if target is None:  # the top-1 on the unperturbed image
        with torch.inference_mode(), loaded.lock:
            target = int(loaded.module(x)[0].argmax())
    probs = torch.empty(len(unique))
    known = torch.zeros(len(unique), dtype=torch.bool)
    if baseline == "mean" and (blank := ~unique.any(dim=1)).any():  # the all-mean image: the model's own
        probs[blank], known = _all_mean_probs(loaded, x)[target], known | blank
    whole = unique.all(dim=1)
    if whole.any() and seen is not None:  # the photo itself: the explanation's own probability
        probs[whole], known = seen[target], known | whole
    probs[~known] = _probs(loaded, compose(x, base, unique[~known], grid, P), target)
    probs = probs[where]  # (S,)
    fractions = [s / steps for s in range(steps + 1)]
    out = {}
    for i, (mode, order) in enumerate(keeps):
        p = probs[i * (steps + 1):(i + 1) * (steps + 1)].tolist()
        out[mode, order] = Curve(mode, order, baseline, fractions, p, trapezoid(fractions, p))
    return out


def perturbation_curve(
    loaded: LoadedModel,
    image,
    saliency,
    target=None,
    mode: str = "deletion",
    steps: int = 10,
    baseline: str = "mean",
    order: str = "saliency",
    seed: int = 0,
) -> Curve:
    """Does removing (or keeping only) the patches a map ranks first change the model's mind? A :class:`Curve`.

        >>> e = vit.explain(loaded, "assets/cat.jpg", method="grad_rollout")
        >>> vit.perturbation_curve(loaded, "assets/cat.jpg", e.map, e.target, mode="deletion").auc

    ``saliency``: (rows, cols) over the patches, or the image's :class:`~vit.explanations.maps.Explanation`;
    ``target``: an index, a class name or None (the top-1); ``baseline``: "mean" or "blur".
    """
    mode = validate.choice("mode", mode, MODES)
    order = validate.choice("order", order, ORDERS)
    return perturbation_curves(loaded, image, saliency, target, steps, baseline, (mode,), (order,), seed)[mode, order]
