"""Perturbation curves: end points, the images behind each point, rankings, areas and refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import ROOT

import vit
from vit.errors import InputError
from vit.explanations import perturb

STAR = ROOT / "assets" / "shapes-star.png"


@pytest.fixture(scope="module")
def shapes():
    return vit.load_model("vit_tiny_shapes")


def prob(loaded, x: torch.Tensor, target: int) -> float:
    with torch.no_grad():
        return float(loaded.module(x).softmax(-1)[0, target])


@pytest.mark.parametrize("baseline", perturb.BASELINES)
def test_end_points(shapes, baseline):
    e = vit.explain(shapes, STAR, method="grad_rollout")
    curves = vit.perturbation_curves(shapes, STAR, e.map, e.target, steps=10, baseline=baseline)
    x = shapes.input(STAR).x
    base = torch.zeros_like(x) if baseline == "mean" else perturb.blurred(x)
    all_baseline = prob(shapes, base, e.target)
    for (mode, order), c in curves.items():
        assert c.fractions == [s / 10 for s in range(11)] and c.mode == mode and c.order == order
        assert c.baseline == baseline
        start, end = (e.prob, all_baseline) if mode == "deletion" else (all_baseline, e.prob)
        assert c.probs[0] == pytest.approx(start, abs=1e-5)
        assert c.probs[-1] == pytest.approx(end, abs=1e-5)
    assert curves["deletion", "saliency"].probs[-1] == curves["insertion", "saliency"].probs[0]
    assert c.better == "higher is better" and curves["deletion", "random"].better == "lower is better"


def test_mean_baseline_is_the_normalisation_mean_in_pixels(shapes):
    x = shapes.input(STAR).x
    mean = torch.tensor(shapes.preprocess.mean).view(1, 3, 1, 1)
    std = torch.tensor(shapes.preprocess.std).view(1, 3, 1, 1)
    keep = torch.zeros(1, 64, dtype=torch.bool)  # nothing kept: all baseline
    pixels = perturb.compose(x, torch.zeros_like(x), keep, (8, 8), 8) * std + mean
    torch.testing.assert_close(pixels, mean.expand_as(pixels))


def test_every_point_is_the_image_with_the_top_patches_replaced(shapes):
    """Each point's probability equals the model on an image built patch by patch in plain loops."""
    g = torch.Generator().manual_seed(1)
    saliency = torch.rand(8, 8, generator=g)
    x = shapes.input(STAR).x
    base = perturb.blurred(x)
    steps, target = 4, 3
    for mode in perturb.MODES:
        c = vit.perturbation_curve(shapes, STAR, saliency, target, mode=mode, steps=steps, baseline="blur")
        ranked = sorted(range(64), key=lambda i: -float(saliency.flatten()[i]))
        for s in range(steps + 1):
            top = set(ranked[:round(s / steps * 64)])
            img = x.clone()
            for i in range(64):
                r, col = divmod(i, 8)
                from_base = (i in top) == (mode == "deletion")
                if from_base:
                    rows, cols = slice(r * 8, (r + 1) * 8), slice(col * 8, (col + 1) * 8)
                    img[..., rows, cols] = base[..., rows, cols]
            assert c.probs[s] == pytest.approx(prob(shapes, img, target), abs=1e-5), (mode, s)


def test_ranking_ties_by_token_index_and_random_is_a_seeded_permutation():
    saliency = torch.tensor([[1.0, 3.0], [3.0, 1.0]])
    assert perturb.patch_ranking(saliency).tolist() == [1, 2, 0, 3]
    a = perturb.patch_ranking(torch.zeros(5, 5), "random", seed=4)
    assert sorted(a.tolist()) == list(range(25))
    assert torch.equal(a, perturb.patch_ranking(torch.ones(5, 5), "random", seed=4))  # the map plays no part
    assert not torch.equal(a, perturb.patch_ranking(torch.zeros(5, 5), "random", seed=5))


def test_counts_and_area():
    assert perturb.patch_counts(49, 10) == [round(s * 4.9) for s in range(11)]
    assert perturb.patch_counts(4, 2) == [0, 2, 4]
    f = [0.0, 0.25, 0.5, 1.0]
    p = [1.0, 0.5, 0.2, 0.0]
    assert perturb.trapezoid(f, p) == pytest.approx(np.trapezoid(p, f))


def test_random_order_curves_do_not_depend_on_the_map(shapes):
    a = vit.perturbation_curve(shapes, STAR, torch.rand(8, 8), 3, order="random", seed=2)
    b = vit.perturbation_curve(shapes, STAR, torch.zeros(8, 8), 3, order="random", seed=2)
    assert a.probs == b.probs


def test_a_faithful_map_beats_random_on_the_trained_model(shapes):
    """On the star the model was trained for, grad rollout's deletion falls faster than random's."""
    e = vit.explain(shapes, STAR, method="grad_rollout")
    assert e.label == "star"
    curves = vit.perturbation_curves(shapes, STAR, e, e.target)
    assert curves["deletion", "saliency"].auc < curves["deletion", "random"].auc
    assert curves["insertion", "saliency"].auc > curves["insertion", "random"].auc


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"mode": "both"}, "mode"),
        ({"steps": 0}, "steps"),
        ({"steps": 101}, "steps"),
        ({"steps": "ten"}, "steps"),
        ({"baseline": "black"}, "baseline"),
        ({"order": "reverse"}, "order"),
        ({"target": 8}, "target"),
        ({"saliency": torch.zeros(7, 7)}, "saliency"),
        ({"saliency": torch.full((8, 8), float("nan"))}, "saliency"),
        ({"saliency": [[0.0] * 8] * 8}, "saliency"),
    ],
)
def test_bad_parameters_are_refused_naming_them(shapes, kwargs, name):
    args = {"saliency": torch.zeros(8, 8), "target": 3, **kwargs}
    with pytest.raises(InputError, match=rf"^{name} must"):
        vit.perturbation_curve(shapes, STAR, **args)


def test_each_distinct_image_runs_once_and_the_all_mean_image_once_per_model(shapes, monkeypatch):
    seen = []
    real = perturb._probs

    def counting(loaded, images, target):
        seen.append(len(images))
        return real(loaded, images, target)

    monkeypatch.setattr(perturb, "_probs", counting)
    perturb._all_mean.pop(shapes.module, None)
    saliency = torch.rand(8, 8, generator=torch.Generator().manual_seed(3))
    vit.perturbation_curve(shapes, STAR, saliency, 3, mode="deletion", steps=10)
    assert seen == [10]  # fractions 0 .. 0.9; the all-mean image at 1 comes from the model's own cache
    assert shapes.module in perturb._all_mean
    seen.clear()
    vit.perturbation_curves(shapes, STAR, saliency, 3, steps=10)  # 4 curves: 9 + 9 + 9 + 9 inner points + the photo
    assert seen == [37]
    seen.clear()
    vit.perturbation_curve(shapes, STAR, saliency, 3, mode="insertion", steps=10, baseline="blur")
    assert seen == [11]  # a blurred photo is this photo's own
    e = vit.explain(shapes, STAR, method="gradcam", target=3)  # now the model has seen the photo
    seen.clear()
    c = vit.perturbation_curve(shapes, shapes.input(STAR), e, 3, mode="deletion", steps=10)
    assert seen == [9] and c.probs[0] == e.prob  # the curve starts at the explanation's own probability
