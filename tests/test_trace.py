"""The tracer: stage names and shapes, what it keeps, and hooks always removed."""

from __future__ import annotations

import pytest
import torch

from vit.analysis.rollout import attention_from_qk
from vit.analysis.trace import Tracer, attention_kept
from vit.config import ViTConfig
from vit.model.load import load_model
from vit.model.modules import ViTForImageClassification


def all_hooks(model) -> int:
    return sum(
        len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules()
    )


def expected_stages(B, C, H, W, P, D, h, L, K):
    N = (H // P) * (W // P)
    stages = [
        ("image", (B, C, H, W)),
        ("patch conv", (B, D, H // P, W // P)),
        ("patch tokens", (B, N, D)),
        ("with class token", (B, N + 1, D)),
        ("with position", (B, N + 1, D)),
    ]
    for layer in range(1, L + 1):
        stages += [
            (f"layer {layer} attention weights", (B, h, N + 1, N + 1)),
            (f"layer {layer} MLP hidden", (B, N + 1, 4 * D)),
            (f"layer {layer} output", (B, N + 1, D)),
        ]
    return stages + [("final norm", (B, N + 1, D)), ("class token", (B, D)), ("logits", (B, K))]


@pytest.mark.parametrize(
    "name,patch,depth,grid",
    [("vit_b_32", None, None, 7), ("vit_b_32", 24, 3, 9), ("vit_b_16", 56, 1, 4), ("vit_b_16", 16, 2, 14)],
)
def test_stage_names_and_shapes(name, patch, depth, grid):
    loaded = load_model(name, weights="random", patch_size=patch, depth=depth, device="cpu")
    model = loaded.module
    P = loaded.config.patch_size
    S = grid * P
    x = torch.randn(1, 3, S, S)
    with torch.inference_mode(), Tracer(model) as record:
        model(x)
    got = [(s.name, s.shape) for s in record.stages]
    assert got == expected_stages(1, 3, S, S, P, 768, 12, loaded.config.num_layers, 1000)
    assert all_hooks(model) == 0


def test_records_only_streamed_summaries():
    """No (L, h, N+1, N+1) tensor, nor any (h, N+1, N+1) one, is kept: per layer one map per fusion."""
    cfg = ViTConfig(image_size=128, patch_size=8, embed_dim=32, num_heads=8, num_layers=3, num_classes=7)
    model = ViTForImageClassification(cfg).eval()
    T = cfg.num_tokens
    with torch.inference_mode(), Tracer(model) as record:
        model(torch.randn(2, 3, 128, 128))
    kept = [record.logits, *record.fusions.values(), *record.cls_attention, *record.queries, *record.keys,
            *record.cls_tokens]
    all_weights = 3 * 2 * 8 * T * T  # L x B x h x (N+1)^2: what keeping every map would cost
    assert sum(t.numel() for t in kept) < all_weights / 2
    assert list(record.fusions) == ["mean", "max", "min"]  # every fusion, the chosen one first
    assert all(tuple(m.shape) == (3, 2, T, T) and m.dtype == torch.float32 for m in record.fusions.values())
    assert record.fused is record.fusions["mean"]  # one head-fused map per layer and fusion
    assert [tuple(t.shape) for t in record.cls_attention] == [(2, 8, T)] * 3
    assert [tuple(t.shape) for t in record.queries] == [(2, T, 32)] * 3
    assert [tuple(t.shape) for t in record.cls_tokens] == [(2, 32)] * 3
    assert record.logits.shape == (2, 7)
    names = set(vars(record))
    assert names == {"stages", "fused", "fusions", "cls_attention", "queries", "keys", "cls_tokens", "residual",
                     "token_norms", "attention_distance", "lens_index", "lens_prob", "logits", "layer_logits"}
    assert [tuple(t.shape) for t in record.layer_logits] == [(2, 7)] * 3  # each block's early exit: (B, K)
    assert record.lens_index.shape == record.lens_prob.shape == (3, 2, cfg.num_patches)  # (L, B, N): no tokens
    assert record.lens_index.dtype == torch.int64 and record.lens_prob.dtype == torch.float32


def test_hooks_removed_after_an_exception():
    cfg = ViTConfig(image_size=32, patch_size=16, embed_dim=16, num_heads=2, num_layers=2, num_classes=3)
    model = ViTForImageClassification(cfg).eval()
    with pytest.raises(ValueError, match="tokens"):
        with Tracer(model):
            model(torch.randn(1, 3, 48, 48))  # wrong size: the position embedding refuses it
    assert all_hooks(model) == 0
    with pytest.raises(RuntimeError, match="boom"):
        with Tracer(model):
            raise RuntimeError("boom")
    assert all_hooks(model) == 0
    # and the untraced model still returns no weights
    out, weights = model.encoder.layers[0].attn(torch.randn(1, 5, 16), torch.randn(1, 5, 16), torch.randn(1, 5, 16))
    assert weights is None


def test_attention_kept_removes_its_hooks_also_after_an_exception():
    cfg = ViTConfig(image_size=32, patch_size=16, embed_dim=16, num_heads=2, num_layers=2, num_classes=3)
    model = ViTForImageClassification(cfg).eval()
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad(), attention_kept(model.encoder.layers) as kept:
        logits = model(x)
    assert sorted(kept) == [0, 1] and kept[1].shape == (1, 2, 5, 5) and all_hooks(model) == 0
    torch.testing.assert_close(logits, model(x))
    seen = []
    with torch.no_grad(), attention_kept(model.encoder.layers[1:], lambda i, out, w: seen.append((i, w.shape))) as kept:
        model(x)
    assert seen == [(0, (1, 2, 5, 5))] and kept == {} and all_hooks(model) == 0  # watched, not kept
    with pytest.raises(RuntimeError, match="boom"):
        with attention_kept(model.encoder.layers):
            raise RuntimeError("boom")
    with pytest.raises(ValueError, match="tokens"):
        with attention_kept(model.encoder.layers):
            model(torch.randn(1, 3, 48, 48))
    assert all_hooks(model) == 0


def test_traced_logits_equal_untraced():
    cfg = ViTConfig(image_size=32, patch_size=8, embed_dim=16, num_heads=2, num_layers=2, num_classes=3)
    model = ViTForImageClassification(cfg).eval()
    x = torch.randn(2, 3, 32, 32)
    with torch.inference_mode():
        plain = model(x)
        with Tracer(model) as record:
            traced = model(x)
    torch.testing.assert_close(traced, plain, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(record.logits, plain, atol=1e-5, rtol=1e-5)


def test_stage_module_paths_are_the_models_own_names():
    """Every stage names a module by its path in named_modules(); the MLP hidden stage is the named GELU."""
    cfg = ViTConfig(image_size=32, patch_size=16, embed_dim=16, num_heads=2, num_layers=2, num_classes=3)
    model = ViTForImageClassification(cfg).eval()
    with torch.inference_mode(), Tracer(model) as record:
        model(torch.randn(1, 3, 32, 32))
    paths = dict(model.named_modules())
    modules = {s.name: s.module for s in record.stages}
    assert modules["layer 2 MLP hidden"] == "encoder.layers.1.mlp.act"
    assert paths[modules["layer 2 MLP hidden"]] is model.encoder.layers[1].mlp.net[1]  # one GELU, two names
    assert modules["layer 1 attention weights"] == "encoder.layers.0.attn"
    assert modules["layer 1 output"] == "encoder.layers.0" and modules["logits"] == "head.head"
    assert all(s.module in paths for s in record.stages if s.name != "image")
    # the named activation adds no state: the checkpoint keys stay those weights.py converts to
    assert [k for k in model.state_dict() if ".mlp." in k][:4] == [
        "encoder.layers.0.mlp.net.0.weight", "encoder.layers.0.mlp.net.0.bias",
        "encoder.layers.0.mlp.net.3.weight", "encoder.layers.0.mlp.net.3.bias"]


def test_tracer_takes_the_module_not_the_loaded_model():
    loaded = load_model("vit_tiny_shapes", weights="random", device="cpu")
    with pytest.raises(TypeError, match=r"loaded\.module"):
        Tracer(loaded)
    with torch.inference_mode(), Tracer(loaded.module) as record:
        loaded(torch.zeros(1, 3, 64, 64))
    assert record.logits.shape == (1, 8)


def test_tracer_refuses_unknown_fusion():
    model = ViTForImageClassification(ViTConfig(image_size=32, patch_size=16, embed_dim=16, num_heads=2, num_layers=1))
    with pytest.raises(ValueError, match="head_fusion"):
        Tracer(model, head_fusion="median")
    with pytest.raises(ValueError, match="head_fusion"):
        Tracer(model, fusions=("mean", "median"))


def test_tracer_streams_every_fusion_in_the_kept_dtype():
    """Every fusion is kept, the chosen one first, in the dtype asked for (vit.analyze: float16 when large)."""
    cfg = ViTConfig(image_size=32, patch_size=8, embed_dim=16, num_heads=4, num_layers=2, num_classes=3)
    model = ViTForImageClassification(cfg).eval()
    with torch.inference_mode(), Tracer(model, head_fusion="max", fused_dtype=torch.float16) as record:
        model(torch.randn(1, 3, 32, 32))
    assert list(record.fusions) == ["max", "mean", "min"] and record.fused is record.fusions["max"]
    assert all(m.dtype == torch.float16 and m.shape == (2, 1, 17, 17) for m in record.fusions.values())


def test_tracer_fusions_equal_the_explicit_weights():
    cfg = ViTConfig(image_size=32, patch_size=8, embed_dim=16, num_heads=4, num_layers=2, num_classes=3)
    model = ViTForImageClassification(cfg).eval()
    x = torch.randn(1, 3, 32, 32)
    with torch.inference_mode(), Tracer(model) as record:
        model(x)
    for n in range(len(record.queries)):
        w = attention_from_qk(record.queries[n][0], record.keys[n][0], 4)  # (h, T, T), exact
        torch.testing.assert_close(record.fusions["mean"][n, 0], w.mean(0))
        torch.testing.assert_close(record.fusions["max"][n, 0], w.amax(0))
        torch.testing.assert_close(record.fusions["min"][n, 0], w.amin(0))


def test_stages_know_their_layer_and_count_each_parameter_once():
    """Stage.layer is the 1-based block; counted_params sums to the model's parameters (no double count)."""
    from vit.analysis.trace import counted_params

    cfg = ViTConfig(image_size=32, patch_size=8, embed_dim=16, num_heads=2, num_layers=3, num_classes=5)
    model = ViTForImageClassification(cfg).eval()
    with torch.inference_mode(), Tracer(model) as record:
        model(torch.randn(1, 3, 32, 32))
    by_name = {s.name: s for s in record.stages}
    assert by_name["layer 2 attention weights"].layer == 2 and by_name["layer 3 output"].layer == 3
    assert by_name["layer 1 output"].module == "encoder.layers.0"
    assert by_name["patch conv"].layer is None and by_name["logits"].layer is None
    assert by_name["class token"].module == "head"  # ViTClassificationHead selects x[:, 0]
    counted = dict(zip((s.name for s in record.stages), counted_params(record.stages)))
    assert sum(counted.values()) == sum(p.numel() for p in model.parameters())
    assert counted["patch conv"] == by_name["patch conv"].params > 0
    assert counted["patch tokens"] == 0  # the same convolution, already counted
    assert counted["layer 1 attention weights"] == by_name["layer 1 attention weights"].params
    assert counted["layer 1 output"] == 4 * 16  # what the block adds to attention and MLP: norm1, norm2
