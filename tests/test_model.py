"""Parity with torchvision's own ViT on the same (random) weights: logits and every attention map."""

from __future__ import annotations

import pytest
import torch
from conftest import random_torchvision_vit

from vit.analysis import rollout
from vit.analysis.trace import Tracer, attention_kept
from vit.config import PRESETS, ViTConfig
from vit.model.load import load_model
from vit.model.modules import MultiheadAttention, ViTForImageClassification
from vit.model.partial import class_token_block, classify_each


def torchvision_attention(tv_model, x: torch.Tensor) -> list[torch.Tensor]:
    """Every layer's per-head weights from torchvision's nn.MultiheadAttention on its own layer input."""
    maps = []

    def hook(layer):
        def capture(_m, _inputs, ln_out):
            _, w = layer.self_attention(ln_out, ln_out, ln_out, need_weights=True, average_attn_weights=False)
            maps.append(w)

        return capture

    handles = [layer.ln_1.register_forward_hook(hook(layer)) for layer in tv_model.encoder.layers]
    try:
        logits = tv_model(x)
    finally:
        for h in handles:
            h.remove()
    return logits, maps


def our_attention(model, x: torch.Tensor) -> list[torch.Tensor]:
    """Every layer's per-head weights as our MultiheadAttention returns them with need_weights=True."""
    with attention_kept(model.encoder.layers) as kept:
        logits = model(x)
    return logits, [kept[i] for i in range(len(model.encoder.layers))]


# Two layers (one for H/14): the depth is not the point here. The full-size checkpoints load through check_shapes'
# key map in tests/test_weights.py, which also compares full-size B/32's logits with torchvision's.
CASES = [
    ("vit_b_16", {"num_layers": 2}, 2),
    ("vit_b_32", {"num_layers": 2}, 2),
    ("vit_l_16", {"num_layers": 2}, 2),
    ("vit_l_32", {"num_layers": 2}, 2),
    ("vit_h_14", {"num_layers": 1}, 1),
]


@pytest.mark.parametrize("name,overrides,depth", CASES, ids=[c[0] for c in CASES])
@torch.inference_mode()
def test_parity_with_torchvision(tmp_path, name, overrides, depth):
    tv = random_torchvision_vit(name, seed=1, **overrides)
    path = tmp_path / f"{name}.pth"
    torch.save(tv.state_dict(), path)
    ours = load_model(name, weights=str(path), depth=depth, device="cpu")
    assert ours.weights == str(path)

    x = torch.randn(2, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    tv_logits, tv_maps = torchvision_attention(tv, x)
    logits, maps = our_attention(ours.module, x)
    assert logits.shape == (2, 1000)
    assert tv_logits.abs().max() > 0.1  # a zero head would make the comparison vacuous
    torch.testing.assert_close(logits, tv_logits, atol=1e-4, rtol=0)
    assert len(maps) == len(tv_maps) == (depth or PRESETS[name].num_layers)
    for ours_w, tv_w in zip(maps, tv_maps):
        tokens = (224 // PRESETS[name].patch_size) ** 2 + 1
        assert ours_w.shape == tv_w.shape == (2, PRESETS[name].num_heads, tokens, tokens)
        torch.testing.assert_close(ours_w, tv_w, atol=1e-5, rtol=1e-4)

    # The tracer's streamed summaries equal the full maps they stand for.
    with Tracer(ours.module) as record:
        ours.module(x)
    for layer, tv_w in enumerate(tv_maps):
        torch.testing.assert_close(record.fused[layer], tv_w.mean(1), atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(record.cls_attention[layer], tv_w[:, :, 0], atol=1e-5, rtol=1e-4)
        recomputed = rollout.attention_from_qk(record.queries[layer][1], record.keys[layer][1], ours.config.num_heads)
        torch.testing.assert_close(recomputed, tv_w[1], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(record.logits, tv_logits, atol=1e-4, rtol=0)


def test_fused_and_explicit_attention_agree():
    torch.manual_seed(0)
    attn = MultiheadAttention(ViTConfig(embed_dim=64, num_heads=8)).eval()
    x = torch.randn(2, 17, 64)
    fast, none = attn(x, x, x)
    slow, weights = attn(x, x, x, need_weights=True)
    assert none is None and weights.shape == (2, 8, 17, 17)
    torch.testing.assert_close(fast, slow, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 8, 17))


def test_chapter_shapes():
    """The chapter's own toy example: (2, 3, 32, 32) -> (2, 10)."""
    cfg = ViTConfig(image_size=32, patch_size=16, num_classes=10, embed_dim=64, num_heads=8, num_layers=4)
    model = ViTForImageClassification(cfg)
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 10)
    assert cfg.num_tokens == 5 and cfg.mlp_dim == 256


def test_config_refuses_bad_sizes():
    with pytest.raises(ValueError, match="multiple of patch_size"):
        ViTConfig(image_size=225, patch_size=16)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        ViTConfig(embed_dim=100, num_heads=12)


def small_model(seed: int = 0) -> ViTForImageClassification:
    torch.manual_seed(seed)
    cfg = ViTConfig(image_size=32, patch_size=8, num_classes=10, embed_dim=64, num_heads=8, num_layers=3)
    return ViTForImageClassification(cfg).eval()


@torch.inference_mode()
def test_classify_is_what_forward_does_after_the_layers():
    model = small_model()
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    tokens = model.embedding(x)
    for layer in model.encoder.layers:
        tokens = layer(tokens)  # the last block's output, before the final norm
    torch.testing.assert_close(model.classify(tokens), model(x), atol=0, rtol=0)
    # The logit lens on every token: its class token's row is the classification, and its
    # rows are the final norm and the head's linear map written out.
    each = classify_each(model, tokens)  # (B, N+1, K)
    assert each.shape == (2, 17, 10)
    torch.testing.assert_close(each[:, 0], model(x))
    torch.testing.assert_close(each, model.head.head(model.encoder.norm(tokens)))
    torch.testing.assert_close(classify_each(model, tokens[:, 0]), model(x))  # (B, D) class tokens alone: early exit


@torch.inference_mode()
def test_the_class_token_block_is_the_full_blocks_class_token():
    model = small_model(2)
    tokens = torch.randn(3, 17, 64, generator=torch.Generator().manual_seed(3))
    for layer in model.encoder.layers:
        cls = class_token_block(layer, tokens)
        assert cls.shape == (3, 1, 64)
        torch.testing.assert_close(cls, layer(tokens)[:, :1], atol=1e-6, rtol=1e-6)
        tokens = layer(tokens)
