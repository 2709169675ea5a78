"""The cost estimate against the real model, and the memory budget."""

from __future__ import annotations

import pytest

from vit import cost
from vit.analysis.run import analyze
from vit.errors import InputError
from vit.model.load import load_model
from vit.validate import setting


@pytest.mark.parametrize("name,patch,depth", [("vit_b_32", 32, 12), ("vit_b_32", 24, 3), ("vit_b_16", 8, 2)])
def test_estimate_matches_the_model(name, patch, depth):
    loaded = load_model(name, weights="random", patch_size=patch, depth=depth, device="cpu")
    c = cost.estimate(setting(name, patch, depth))
    assert c.input_size == loaded.config.image_size and c.tokens == loaded.config.num_tokens
    assert c.weights_bytes == loaded.nbytes == 4 * sum(p.numel() for p in loaded.module.parameters())
    assert c.attention_total == depth * 12 * c.tokens**2


def test_flops_of_b16():
    c = cost.estimate(setting("ViT-B/16"))
    assert (c.tokens, c.grid, c.depth) == (197, 14, 12)
    assert 34 < c.gflops < 36  # the 17.6 GMACs usually quoted for ViT-B/16's encoder


def test_budget_refuses_with_a_message(cat_image):
    c = cost.estimate(setting("vit_b_16", 4))
    cost.check_budget(c, budget_gb=4)
    with pytest.raises(InputError, match=r"ViT-B/16 at patch size 4 with 12 layers \(3,137 tokens\).*allows 0.5 GB"):
        cost.check_budget(c, budget_gb=0.5)


def test_analyze_refuses_over_budget_before_running(monkeypatch, cat_image):
    loaded = load_model("vit_b_32", weights="random", depth=1, device="cpu")
    monkeypatch.setattr(cost, "MEMORY_BUDGET_GB", 1e-6)
    calls = []
    loaded.module.register_forward_pre_hook(lambda *a: calls.append(1))
    with pytest.raises(InputError, match="allows 1e-06 GB"):
        analyze(loaded, cat_image)
    assert calls == []
