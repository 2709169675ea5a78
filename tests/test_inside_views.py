"""Inside the encoder: the per-patch lens against a direct computation, and the views drawn from the numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vit
from vit import views

CAT = "assets/cat.jpg"
OPACITY, CMAP = 0.6, "cividis"


@pytest.fixture(scope="module")
def loaded():
    """ViT-B/32, random weights, 2 layers: a 7 x 7 grid of 32-px patches."""
    return vit.load_model("vit_b_32", weights="random", depth=2, device="cpu")


@pytest.fixture(scope="module")
def a(loaded):
    return vit.analyze(loaded, CAT)


@pytest.fixture(scope="module")
def shallow():
    """The tiny shapes model cut to depth 1."""
    return vit.analyze(vit.load_model("vit_tiny_shapes", weights="random", depth=1, device="cpu"), CAT)


# --------------------------------------------------------------------------- the patch lens


def test_patch_lens_is_norm_and_head_on_every_patch_token(loaded, a):
    model = loaded.module
    outputs = []
    handles = [layer.register_forward_hook(lambda _m, _i, out: outputs.append(out.detach()))
               for layer in model.encoder.layers]
    x = loaded.preprocess.to_tensor(loaded.preprocess.view(vit.images.load_image(CAT)))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    rows, cols = a.grid
    for layer, out in enumerate(outputs, 1):
        probs = model.head.head(model.encoder.norm(out[0])).softmax(-1)  # (N+1, K)
        top, index = probs.max(-1)
        got_index, got_prob = a.patch_lens(layer)
        assert got_index.shape == got_prob.shape == (rows, cols)
        assert torch.equal(got_index.flatten(), index[1:])
        torch.testing.assert_close(got_prob.flatten(), top[1:])
        cls = a.layer_predictions[layer - 1]  # the class token's own early exit still matches
        assert cls.index == int(index[0]) and cls.prob == pytest.approx(float(top[0]), rel=1e-5)
    assert len(set(a.patch_lens(2)[0].flatten().tolist())) > 1  # random weights: patches disagree


def test_patch_lens_counts_in_nbytes(a):
    lens = a.lens_index.numel() * a.lens_index.element_size() + a.lens_prob.numel() * a.lens_prob.element_size()
    assert a.lens_index.shape == (a.depth, a.num_patches)
    without = vit.Analysis(**{**a.__dict__, "lens_index": None, "lens_prob": None})
    assert a.nbytes - without.nbytes == lens
