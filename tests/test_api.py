"""vit.analyze end to end on a random checkpoint: every view against a direct computation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torchvision
from conftest import random_torchvision_vit
from PIL import Image
from reference import attention_rollout
from test_model import torchvision_attention

import vit
from vit.analysis import rollout
from vit.errors import InputError


@pytest.fixture(scope="module")
def b32(torch_home):
    return vit.load_model("vit_b_32", device="cpu")


@pytest.fixture(scope="module")
def result(b32, cat_image):
    return vit.analyze(b32, cat_image, top_k=3)


@pytest.fixture(scope="module")
def reference(b32, result):
    """torchvision's model on the same weights and the same pixels, keeping every map."""
    tv = random_torchvision_vit("vit_b_32")  # the checkpoint torch_home holds
    x = b32.preprocess.to_tensor(Image.fromarray(result.image))
    with torch.inference_mode():
        return torchvision_attention(tv, x)


def test_predictions(result, reference):
    logits, _ = reference
    probs = logits[0].softmax(-1)
    top = probs.topk(3)
    assert [p.index for p in result.topk] == top.indices.tolist()
    np.testing.assert_allclose([p.prob for p in result.topk], top.values.numpy(), atol=1e-5)
    categories = torchvision.models.ViT_B_32_Weights.IMAGENET1K_V1.meta["categories"]
    assert [p.label for p in result.topk] == [categories[i] for i in top.indices]


def test_sizes_and_image(result):
    assert (result.input_size, result.grid, result.num_patches, result.num_tokens) == ((224, 224), (7, 7), 49, 50)
    assert result.image.shape == (224, 224, 3) and result.image.dtype == np.uint8
    assert result.stages[0].shape == (1, 3, 224, 224) and result.stages[-1].shape == (1, 1000)
    assert result.params == sum(p.numel() for p in vit.load_model("vit_b_32", weights="random").parameters())


def test_rollout_equals_reference(result, reference):
    _, maps = reference
    full = attention_rollout([w[0].mean(0) for w in maps])  # (T, T), direct O(L T^3)
    torch.testing.assert_close(result.rollout(), full[0, 1:].reshape(7, 7), atol=1e-5, rtol=1e-4)
    part = attention_rollout([w[0].mean(0) for w in maps[:4]])
    torch.testing.assert_close(result.rollout(layer=4, query=10), part[10, 1:].reshape(7, 7), atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(result.rollout_matrix_row().sum(), torch.tensor(1.0))


def test_attention_views_equal_reference(result, reference):
    _, maps = reference
    for layer in (1, 7, 12):
        w = maps[layer - 1][0]  # (h, T, T)
        torch.testing.assert_close(result.attention(layer, head=4), w[3, 0], atol=1e-5, rtol=1e-4)  # heads from 1
        torch.testing.assert_close(result.attention(layer, head=6, query=17), w[5, 17], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(result.attention(layer, query=17), w[:, 17].mean(0), atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(result.head_maps(layer, query=9), w[:, 9, 1:].reshape(12, 7, 7),
                                   atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(result.attention_map(layer, 3, 30), w[2, 30, 1:].reshape(7, 7),
                                   atol=1e-5, rtol=1e-4)


def test_heads_count_from_one_like_layers(result):
    for bad in (0, 13):
        with pytest.raises(ValueError, match=rf"head must be from 1 to 12, got {bad}"):
            result.attention(1, head=bad)
        with pytest.raises(ValueError, match=rf"head must be from 1 to 12, got {bad}"):
            result.attention_matrix(1, bad)
    torch.testing.assert_close(result.attention_matrix(2, 12)[0], result.attention(2, head=12))


def test_other_fusion_and_discard_without_the_model(result, reference):
    _, maps = reference
    other = result.with_options(head_fusion="max", discard_ratio=0.5)
    assert other is not result and result.head_fusion == "mean"
    ref = attention_rollout([w[0].amax(0) for w in maps], 0.5)
    torch.testing.assert_close(other.rollout(), ref[0, 1:].reshape(7, 7), atol=1e-5, rtol=1e-4)
    assert result.with_options() is result


def test_layer_predictions(b32, result, reference):
    assert [p.layer for p in result.layer_predictions] == list(range(1, 13))
    last = result.layer_predictions[-1]
    assert last.index == result.topk[0].index
    assert last.prob == pytest.approx(result.topk[0].prob, abs=1e-5)
    assert last.final_class_prob == pytest.approx(result.topk[0].prob, abs=1e-5)


def test_json_has_the_documented_keys(result):
    data = result.to_json()
    for key in ("model", "weights", "status", "patch_size", "depth", "input_size", "grid", "num_tokens", "stages",
                "topk", "layer_predictions", "rollout", "timings_ms"):
        assert key in data
    assert np.array(data["rollout"]).shape == (7, 7)
    np.testing.assert_allclose(np.array(data["rollout"]), result.rollout().numpy(), atol=1e-6)


def test_load_model_keeps_its_metadata_beside_the_module(b32, cat_image):
    import dataclasses

    from vit.model.modules import ViTForImageClassification

    assert isinstance(b32, vit.LoadedModel) and type(b32.module) is ViTForImageClassification
    bolted = ("name", "weights", "status", "status_detail", "preprocess", "class_names", "lock")
    assert not any(hasattr(b32.module, attr) for attr in bolted)  # a plain module, as torchvision builds it
    assert (b32.name, b32.weights, b32.config) == ("vit_b_32", "imagenet", b32.module.config)
    assert len(b32.class_names) == 1000 and b32.preprocess.crop_size == 224
    x = torch.zeros(1, 3, 224, 224)
    with torch.inference_mode():
        torch.testing.assert_close(b32(x), b32.module(x))
    assert b32.nbytes == 4 * sum(p.numel() for p in b32.module.parameters()) and b32.device.type == "cpu"
    with pytest.raises(dataclasses.FrozenInstanceError):
        b32.status = "changed"
    with pytest.raises(TypeError, match="LoadedModel"):
        vit.analyze(b32.module, cat_image)


def test_one_model_input_serves_every_call(b32, cat_image, result):
    inp = b32.input(cat_image)
    assert inp.x.shape == (1, 3, 224, 224) and inp.x.device == b32.device
    assert inp.view.shape == (224, 224, 3) and inp.view.dtype == np.uint8
    assert inp.source_size == Image.open(cat_image).size
    assert b32.input(inp) is inp  # already this model's input: taken as it is
    again = vit.analyze(b32, inp, top_k=3)
    assert np.array_equal(again.image, result.image) and again.source_size == result.source_size
    torch.testing.assert_close(again.probs, result.probs)
    other = vit.load_model("vit_b_32", weights="random", patch_size=24, depth=1, device="cpu")  # 9 x 24 = 216 px
    with pytest.raises(ValueError, match=r"expected a model input of 216x216 pixels for this model, got 224x224"):
        other.input(inp)


def test_load_model_takes_a_setting_and_does_not_validate_it_again(monkeypatch):
    from vit import validate

    setting = validate.setting("vit_b_32", 24, 2)

    def again(*args, **kwargs):
        raise AssertionError("validated twice")

    monkeypatch.setattr(validate, "setting", again)
    loaded = vit.load_model(setting, weights="random", device="cpu")
    assert (loaded.name, loaded.config.patch_size, loaded.config.num_layers) == ("vit_b_32", 24, 2)
    assert loaded.config == setting.config and "first 2 of 12 layers" in loaded.status
    with pytest.raises(TypeError, match="not both"):
        vit.load_model(setting, weights="random", depth=1)


def test_resized_patch_and_depth(torch_home, cat_image):
    model = vit.load_model("vit_b_32", patch_size=24, depth=3, device="cpu")
    r = vit.analyze(model, cat_image)
    assert (r.input_size, r.grid, r.depth, r.patch_size) == ((216, 216), (9, 9), 3, 24)
    assert len(r.layer_predictions) == 3 and r.rollout().shape == (9, 9)
    assert r.stages[2].shape == (1, 81, 768)


def test_bad_options_name_the_parameter(b32, cat_image):
    with pytest.raises(InputError, match="top_k"):
        vit.analyze(b32, cat_image, top_k=0)
    with pytest.raises(InputError, match="head_fusion"):
        vit.analyze(b32, cat_image, head_fusion="median")
    with pytest.raises(InputError, match="discard_ratio"):
        vit.analyze(b32, cat_image, discard_ratio=1.0)
    with pytest.raises(InputError, match="patch_size"):
        vit.load_model("vit_b_32", weights="random", patch_size=3)
    with pytest.raises(InputError, match="not found"):
        vit.analyze(b32, "no-such-file.jpg")


@pytest.mark.parametrize("name", ["vit_b_16", "vit_l_16", "vit_h_14"])
def test_preprocessing_is_torchvisions_at_native_size(name, cat_image):
    from vit.images import load_image
    from vit.model.checkpoints import CHECKPOINTS
    from vit.model.preprocess import preprocess_for

    img = load_image(cat_image)
    ours = preprocess_for(name, 224)(img)
    theirs = CHECKPOINTS[name].weights.transforms()(img).unsqueeze(0)
    torch.testing.assert_close(ours, theirs)


def test_extreme_aspect_ratio_is_cropped_before_resizing():
    from vit.model.preprocess import preprocess_for

    strip = Image.new("RGB", (5000, 1), "red")
    view = preprocess_for("vit_b_16", 224).view(strip)
    assert view.size == (224, 224)
    assert np.asarray(view)[100, 100].tolist() == [255, 0, 0]


# --------------------------------------------------------------------------- display-only changes (issue 13)


def test_fusion_and_discard_changes_recompute_no_attention(result, monkeypatch):
    """Every fusion's maps are kept: another fusion or discard ratio is a lookup plus the rollout rows."""
    from vit.views import attention

    def recompute(*args, **kwargs):
        raise AssertionError("a display-only change recomputed attention from q and k")

    monkeypatch.setattr(rollout, "attention_from_qk", recompute)
    for fusion in rollout.HEAD_FUSIONS:
        for discard in (0.0, 0.3):
            a = result.with_options(fusion, discard)
            assert a.fused is result.fusions[fusion]  # shared, not copied
            attention.rollout_view(a, a.depth, 0.6, "cividis")
            attention.layers_view(a, 0.6, "cividis")
            attention.heads_view(a, 5, 0.6, "cividis")
    assert result.with_options("max", 0.3) is result.with_options("max", 0.3)  # remembered


def test_kept_fused_maps_dtype_and_size(b32, cat_image, result, monkeypatch):
    """Small maps stay float32; large ones are float16; Analysis.nbytes is what vit.cost says it keeps."""
    T, L = result.num_tokens, result.depth
    fresh = vit.analyze(b32, cat_image, top_k=3)
    fresh.rollout()  # its rows are kept from when they are first drawn
    assert list(fresh.fusions) == ["mean", "max", "min"]
    assert all(m.dtype == torch.float32 and m.shape == (L, T, T) for m in fresh.fusions.values())
    assert fresh.nbytes == vit.cost.estimate(vit.validate.setting("vit_b_32")).kept_bytes
    fresh.with_options("max", 0.5).rollout()
    kept = vit.cost.estimate(vit.validate.setting("vit_b_32")).kept_bytes
    assert fresh.nbytes == kept + 4 * L * T  # a variant adds its rows only
    monkeypatch.setattr(vit.cost, "FP32_FUSED_MAX_BYTES", 0)  # as at ViT-B/16, patch 8 and finer
    half = vit.analyze(b32, cat_image, top_k=3)
    half.rollout()
    assert all(m.dtype == torch.float16 and m.shape == (L, T, T) for m in half.fusions.values())
    assert half.nbytes == vit.cost.estimate(vit.validate.setting("vit_b_32")).kept_bytes
    assert sum(m.nbytes for m in half.fusions.values()) == 3 * L * T * T * 2


def test_kept_bytes_at_patch_4_fit_one_gigabyte():
    c = vit.cost.estimate(vit.validate.setting("vit_b_16", 4))
    assert vit.cost.fused_itemsize(c.depth, c.tokens) == 2
    assert c.kept_bytes <= 1.0e9  # three fusions in float16 (708 MB), queries and keys (231 MB), the rest


def test_rollout_from_float16_maps_within_1e3_of_float32(b32, cat_image, result, reference, monkeypatch):
    """Random weights: without discarding, float16 maps give float32's rollout to ~5e-6.

    (Discarding on near-uniform random attention ranks near-equal entries, which float16
    rounding blurs: see the trained model's test below for discarding.)
    """
    monkeypatch.setattr(vit.cost, "FP32_FUSED_MAX_BYTES", 0)
    half = vit.analyze(b32, cat_image, top_k=3)
    half.rollout()
    assert half.fused.dtype == torch.float16 and result.fused.dtype == torch.float32
    for fusion in rollout.HEAD_FUSIONS:
        a, b = half.with_options(fusion, 0.0), result.with_options(fusion, 0.0)
        for layer in (1, 6, 12):
            got = a.rollout(layer)
            assert got.dtype == torch.float32
            torch.testing.assert_close(got, b.rollout(layer), atol=3e-5, rtol=0)
    _, maps = reference  # and the direct reference from torchvision's full maps
    full = attention_rollout([w[0].mean(0) for w in maps])
    torch.testing.assert_close(half.rollout(), full[0, 1:].reshape(7, 7), atol=3e-5, rtol=0)
    # the fused attention rows come from the float32 heads: exact whatever the kept dtype
    torch.testing.assert_close(half.attention(7, query=17), maps[6][0][:, 17].mean(0), atol=1e-5, rtol=1e-4)


def test_trained_rollout_from_float16_maps_within_1e3_with_discarding(monkeypatch):
    """The model trained here, at patch 4 (257 tokens): every fusion and discard ratio within 1e-3 of float32."""
    loaded = vit.load_model("vit_tiny_shapes", patch_size=4, device="cpu")
    image = Path(__file__).resolve().parents[1] / "assets" / "shapes-star.png"
    exact = vit.analyze(loaded, image)
    monkeypatch.setattr(vit.cost, "FP32_FUSED_MAX_BYTES", 0)
    half = vit.analyze(loaded, image)
    assert half.fused.dtype == torch.float16 and exact.fused.dtype == torch.float32
    for fusion in rollout.HEAD_FUSIONS:
        for discard in (0.0, 0.5, 0.9, 0.99):
            a, b = half.with_options(fusion, discard), exact.with_options(fusion, discard)
            for layer in range(1, exact.depth + 1):
                torch.testing.assert_close(a.rollout(layer), b.rollout(layer), atol=1e-3, rtol=0)
