"""The model trained here: its drawings, its training loop, and the weights that ship in assets/.

Nothing is retrained in full here: the loop runs on a miniature (tiny config, one
short epoch) and the shipped weights are measured on a fresh seed.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import asdict

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT
from PIL import Image

import vit
from vit import shapes, validate
from vit.config import DISPLAY_NAMES, PRESETS, ViTConfig, patch_size_range
from vit.errors import InputError
from vit.model import checkpoints as weights
from vit.model import families, train
from vit.model.modules import ViTForImageClassification

NAME = "vit_tiny_shapes"
FRESH_SEED = 2026  # neither the training seed (0) nor the seed of the JSON's tables (10,000)
# What the shipped weights must reach at P = 8 on fresh drawings (the goal; they reach 98.0 % on the
# JSON's 2,000-image evaluation seed and 97.25 % on this test's). 2,000 images (5 s): one standard error
# is ~0.35 points; the images and the weights are fixed, so the figure is too.
MIN_ACCURACY = 0.97


# --------------------------------------------------------------------------- the drawings


def test_sample_types_sizes_and_labels():
    images, labels, masks = shapes.sample(40, seed=3)
    assert len(images) == len(labels) == len(masks) == 40
    for image, label, mask in zip(images, labels, masks):
        assert isinstance(image, Image.Image) and image.mode == "RGB" and image.size == (64, 64)
        assert isinstance(label, int) and 0 <= label < len(shapes.CLASSES)
        assert mask.shape == (64, 64) and mask.dtype == bool
    assert len(set(labels)) >= 6  # 40 draws from 8 classes


def test_sample_is_deterministic_and_prefix_stable():
    a, la, ma = shapes.sample(6, seed=11, size=48)
    b, lb, mb = shapes.sample(3, seed=11, size=48)
    c, lc, _ = shapes.sample(6, seed=12, size=48)
    assert [np.asarray(x).tobytes() for x in a[:3]] == [np.asarray(x).tobytes() for x in b]
    assert la[:3] == lb and all((x == y).all() for x, y in zip(ma, mb))
    assert [np.asarray(x).tobytes() for x in a] != [np.asarray(x).tobytes() for x in c]


def test_masks_are_inside_the_image_at_the_drawn_size():
    side = 64
    images, labels, masks = shapes.sample(200, seed=5, size=side)
    for mask in masks:
        assert mask.any()
        rows, cols = np.nonzero(mask)
        # 2r is 22-45 % of the side and the whole circle stays inside: the mask never touches the border
        height, width = rows.max() - rows.min() + 1, cols.max() - cols.min() + 1
        assert max(height, width) <= math.ceil(shapes.MAX_FRACTION * side) + 1
        assert mask.sum() >= 30  # the smallest shape (a thin diamond, 2r = 14 px) still covers ~50 pixels


def test_the_mask_is_where_the_shape_was_painted():
    images, _, masks = shapes.sample(30, seed=8)
    for image, mask in zip(images, masks):
        pixels = np.asarray(image, dtype=np.float32)
        inside = pixels[mask]
        # one flat colour inside (anti-aliasing only at the rim): most mask pixels share one colour
        _, counts = np.unique(inside, axis=0, return_counts=True)
        assert counts.max() >= 0.6 * len(inside)
        luma = lambda p: (p @ np.array([0.299, 0.587, 0.114])) / 255  # noqa: E731
        ring = np.roll(mask, 3, 0) & ~mask  # background just beside the shape
        if ring.sum() >= 4:
            assert abs(luma(inside).mean() - luma(pixels[ring]).mean()) > 0.1


def test_two_shapes_are_two_different_classes_side_by_side():
    images, labels, masks = shapes.sample(60, seed=9, two=True)
    for (a, b), (ma, mb) in zip(labels, masks):
        assert a != b and 0 <= a < 8 and 0 <= b < 8
        assert ma.any() and mb.any() and not (ma & mb).any()
        ca, cb = np.argwhere(ma).mean(0), np.argwhere(mb).mean(0)
        assert np.abs(ca - cb).max() > 10  # in different halves


def test_the_varied_style_is_seeded_and_its_masks_are_the_shapes():
    a, la, ma = shapes.sample(40, seed=21, style="varied")
    b, lb, mb = shapes.sample(20, seed=21, style="varied")
    assert [np.asarray(x).tobytes() for x in a[:20]] == [np.asarray(x).tobytes() for x in b] and la[:20] == lb
    plain, _, _ = shapes.sample(40, seed=21)
    assert all(np.asarray(x).tobytes() != np.asarray(y).tobytes() for x, y in zip(a, plain))  # another drawing
    assert len(set(la)) >= 6
    for image, mask in zip(a, ma):
        assert image.size == (64, 64) and mask.shape == (64, 64) and mask.dtype == bool
        assert mask.sum() >= 8 and not mask.all()  # the smallest shape (2r = 12 % of 64 px) still covers pixels
    two, pairs, masks = shapes.sample(30, seed=22, two=True, style="varied")
    for (x, y), (mx, my) in zip(pairs, masks):
        assert x != y and mx.any() and my.any() and (mx & my).sum() <= 2  # two halves; the shrinking may touch


def test_the_sketch_style_is_seeded_inked_and_its_masks_are_the_shapes():
    """Issue 40: shapes drawn with a pen. Seeded like the others; each shape leaves ink where its mask is (the mask's
    pixels differ from the image's corners more than the rest do), two shapes stay two."""
    a, la, ma = shapes.sample(60, seed=31, style="sketch")
    b, lb, _ = shapes.sample(20, seed=31, style="sketch")
    assert [np.asarray(x).tobytes() for x in a[:20]] == [np.asarray(x).tobytes() for x in b] and la[:20] == lb
    varied, _, _ = shapes.sample(60, seed=31, style="varied")
    assert all(np.asarray(x).tobytes() != np.asarray(y).tobytes() for x, y in zip(a, varied))
    assert set(la) == set(range(len(shapes.CLASSES)))
    inked = 0
    for image, mask in zip(a, ma):
        assert image.size == (64, 64) and mask.shape == (64, 64) and mask.dtype == bool
        assert mask.sum() >= 8 and not mask.all()
        x = np.asarray(image, dtype=np.float32)
        corners = np.concatenate([x[:3, :3], x[:3, -3:], x[-3:, :3], x[-3:, -3:]]).reshape(-1, 3).mean(0)
        far = np.linalg.norm(x - corners, axis=-1)
        inked += far[mask].max() > far[~mask].mean() + 30  # the pen's colour is somewhere under the mask
    assert inked >= 54, inked  # clutter or a corner inside the shape may hide it in a few
    two, pairs, masks = shapes.sample(30, seed=32, two=True, style="sketch")
    for (x, y), (mx, my) in zip(pairs, masks):
        assert x != y and mx.any() and my.any() and (mx & my).sum() <= 2
    assert shapes.sketch_outlines("ring", np.random.default_rng(0))[1] is not None  # a ring: two circles traced


def test_the_training_set_mixes_one_and_two_shapes_and_draws_in_pieces():
    images, labels, masks = shapes.training_set(240, seed=3, size=32)
    assert images.shape == (240, 32, 32, 3) and images.dtype == np.uint8
    assert labels.shape == (240, 2) and masks.shape == (240, 2, 32, 32) and masks.dtype == bool
    two = labels[:, 1] >= 0
    assert 0.15 <= two.mean() <= 0.35  # two_share 0.25
    assert (labels[:, 0] >= 0).all() and (labels[two, 0] != labels[two, 1]).all()
    assert not masks[~two, 1].any() and masks[two, 1].any(axis=(1, 2)).all()  # no second mask for one shape
    assert masks[:, 0].any(axis=(1, 2)).all()
    part = shapes.training_set(40, seed=3, size=32, start=200)  # image i depends on (seed, i) only
    for whole, piece in zip((images, labels, masks), part):
        assert (whole[200:] == piece).all()
    assert all((x == y).all() for x, y in zip(shapes.training_set(240, seed=3, size=32, sketch_share=0.0),
                                              (images, labels, masks)))  # no sketches: the same draws as before
    sketched = shapes.training_set(40, seed=3, size=32, sketch_share=1.0)  # every one sketched, by draw(.., "sketch")
    pick = np.random.default_rng([3, 0, 1])
    two_first = bool(pick.random() < 0.25)
    first, _, _ = shapes.draw(np.random.default_rng([3, 0]), 32, two_first, "sketch")
    assert (sketched[0][0] == np.asarray(first)).all()
    one = shapes.training_set(240, seed=3, size=32, two_share=0.0, varied_share=0.0)
    assert (one[1][:, 1] == -1).all()
    plain, plain_labels, _ = shapes.sample(5, seed=3, size=32)  # all plain, all one shape: vit.shapes.sample's images
    assert [np.asarray(p).tobytes() for p in plain] == [x.tobytes() for x in one[0][:5]]
    assert list(plain_labels) == one[1][:5, 0].tolist()


def test_sample_refuses_bad_arguments():
    with pytest.raises(ValueError, match="n must be a non-negative integer, got -1"):
        shapes.sample(-1, 0)
    with pytest.raises(ValueError, match="size must be an integer of at least 16 pixels, got 8"):
        shapes.sample(1, 0, size=8)
    with pytest.raises(ValueError, match="shape must be one of circle"):
        shapes.shape_alpha("hexagon", 64, (32, 32), 10, 0.0)
    with pytest.raises(ValueError, match="style must be one of plain, varied, sketch, got .sketchy."):
        shapes.sample(1, 0, style="sketchy")


# --------------------------------------------------------------------------- the family


def test_the_family_is_a_preset_like_the_others():
    cfg = PRESETS[NAME]
    assert cfg.num_classes == len(shapes.CLASSES) == 8
    assert (cfg.image_size, cfg.patch_size, cfg.num_tokens) == (64, 8, 65)
    assert DISPLAY_NAMES[NAME] == "ViT-Tiny shapes, trained here"
    assert validate.model_name("ViT-Tiny shapes, trained here") == NAME
    assert validate.model_name("vit-tiny-shapes") == NAME
    assert patch_size_range(NAME) == (4, 32) and patch_size_range("vit_b_16") == (4, 64)
    assert NAME not in weights.CHECKPOINTS


def test_patch_size_range_is_the_familys():
    assert validate.patch_size(32, NAME) == 32 and validate.patch_size(64, "vit_b_16") == 64
    with pytest.raises(InputError, match="patch_size must be an integer from 4 to 32 for ViT-Tiny shapes, got 40"):
        validate.patch_size(40, NAME)
    with pytest.raises(InputError, match=r"^patch_size must be an integer from 4 to 64, got 65$"):
        validate.patch_size(65, "vit_b_16")
    with pytest.raises(InputError, match="from 4 to 32 for ViT-Tiny shapes"):
        vit.load_model(NAME, patch_size=33)


def test_cost_counts_its_own_classes():
    from vit.cost import estimate

    c = estimate(validate.setting(NAME))
    assert (c.tokens, c.grid, c.input_size) == (65, 8, 64)
    params = sum(p.numel() for p in vit.load_model(NAME, weights="random").parameters())
    assert c.weights_bytes == 4 * params


# --------------------------------------------------------------------------- training


def test_training_on_a_miniature_lowers_the_loss():
    cfg = ViTConfig(image_size=32, patch_size=8, num_classes=8, embed_dim=32, num_heads=2, num_layers=2)
    arrays, labels, masks = shapes.sample_arrays(256, seed=1, size=32)
    assert arrays.shape == (256, 32, 32, 3) and labels.shape == (256,) and masks.shape == (256, 32, 32)
    settings = train.TrainSettings(epochs=3, batch_size=32, lr=3e-3, patch_sizes=(4, 8, 16), native_share=0.5,
                                   flexi_after=0.3)
    steps = []
    images, labels, masks = train.to_tensor(arrays), torch.from_numpy(labels), torch.from_numpy(masks)
    model, losses = train.train(cfg, images, labels, settings,
                                progress=lambda step, total, loss: steps.append((step, total)), masks=masks)
    assert len(losses) == 3 * 8 and steps[-1] == (24, 24)
    assert np.mean(losses[-6:]) < np.mean(losses[:3]) - 0.05
    assert not model.training and all(not p.requires_grad or p.grad is not None for p in model.parameters())
    model2, losses2 = train.train(cfg, images, labels, settings, masks=masks)
    assert losses2 == losses  # seeded: the same run again
    torch.testing.assert_close(model2.state_dict(), model.state_dict())


def test_training_on_one_and_two_shape_drawings_is_seeded():
    cfg = ViTConfig(image_size=32, patch_size=8, num_classes=8, embed_dim=32, num_heads=2, num_layers=2)
    arrays, labels, masks = shapes.training_set(128, seed=2, size=32, two_share=0.5)
    images, labels, masks = train.to_tensor(arrays), torch.from_numpy(labels), torch.from_numpy(masks)
    settings = train.TrainSettings(epochs=2, batch_size=32, patch_sizes=(4, 8), flexi_after=0.5)
    model, losses = train.train(cfg, images, labels, settings, masks=masks)
    assert len(losses) == 8 and all(math.isfinite(v) for v in losses)
    _, again = train.train(cfg, images, labels, settings, masks=masks)
    assert again == losses


def test_two_shape_targets_are_split_between_both_classes():
    y = torch.tensor([[2, 5], [3, -1]])
    plain = train.soft_targets(y, 8, 0.0)
    assert plain[0, 2] == plain[0, 5] == 0.5 and plain[0].sum() == 1 and plain[1, 3] == 1 and plain[1].sum() == 1
    smoothed = train.soft_targets(y, 8, 0.1)
    assert smoothed[0, 2] == pytest.approx(0.45 + 0.0125) and smoothed[0, 0] == pytest.approx(0.0125)
    logits = torch.randn(2, 8)  # one class per image: F.cross_entropy's own label smoothing
    ours = -(train.soft_targets(y[1:, :1], 8, 0.1) * logits[1:].log_softmax(-1)).sum(-1).mean()
    torch.testing.assert_close(ours, F.cross_entropy(logits[1:], y[1:, 0], label_smoothing=0.1))


def test_each_token_is_labelled_with_the_shape_over_it():
    masks = torch.zeros(1, 2, 64, 64)
    masks[0, 0, 8:24, 40:48] = 1  # patches (1, 5) and (2, 5) at P = 8
    masks[0, 1, 48:56, 0:16] = 1  # patches (6, 0) and (6, 1)
    classes = train.token_classes(masks, torch.tensor([[3, 6]]), 8, 64, 0.25)
    assert classes.shape == (1, 64)
    assert {i: int(c) for i, c in enumerate(classes[0]) if c >= 0} == {13: 3, 21: 3, 48: 6, 49: 6}
    one = train.token_classes(masks, torch.tensor([[3, -1]]), 8, 64, 0.25)  # no second shape: its mask is unused
    assert {i for i, c in enumerate(one[0]) if c >= 0} == {13, 21}


def test_recolouring_keeps_the_shapes():
    x = torch.randn(6, 3, 8, 8)
    g = torch.Generator().manual_seed(0)
    torch.testing.assert_close(train.recolour(x, g, invert=1.0, grey=0.0, permute=0.0), -x)
    grey = train.recolour(x, g, invert=0.0, grey=1.0, permute=0.0)
    torch.testing.assert_close(grey, x.mean(1, keepdim=True).expand_as(x))
    permuted = train.recolour(x, g, invert=0.0, grey=0.0, permute=1.0)
    torch.testing.assert_close(permuted.sort(dim=1).values, x.sort(dim=1).values)  # the channels, reordered


def test_the_flexible_forward_is_what_load_model_does(tmp_path):
    loaded = vit.load_model(NAME, weights="random")
    path = tmp_path / "random.pth"
    torch.save(loaded.module.state_dict(), path)
    images, _, _ = shapes.sample(3, seed=4)
    x = torch.cat([loaded.preprocess(im) for im in images])
    for patch_size in (4, 16, 32):  # grid x P = 64: the same pixels either way
        resized = vit.load_model(NAME, weights=str(path), patch_size=patch_size)
        with torch.no_grad():
            logits = loaded.module.classify(train.flexi_tokens(loaded.module, x, patch_size))
            torch.testing.assert_close(logits, resized(x), atol=1e-4, rtol=1e-4)


def test_token_dropout_keeps_the_shapes_and_drops_background_at_random():
    classes = torch.full((2, 64), -1)
    classes[0, [3, 9, 40]] = 2
    classes[1, 10:30] = 5  # more shape tokens than fit: a random share of them
    g = torch.Generator().manual_seed(0)
    keep = train.kept_tokens(classes, 0.25, g)
    assert keep.shape == (2, 16)
    assert all(len(set(row.tolist())) == 16 for row in keep)  # no token twice
    assert {3, 9, 40} <= set(keep[0].tolist())  # every shape token, then background
    assert set(keep[1].tolist()) <= set(range(10, 30))  # shapes first, as many as fit
    assert not torch.equal(keep[0], train.kept_tokens(classes, 0.25, g)[0])  # background drawn anew each step


def test_the_forward_with_dropped_tokens_is_the_model_on_the_kept_ones():
    """Independently: embed, gather the class token and the kept patch tokens by hand, run the blocks."""
    cfg = ViTConfig(image_size=32, patch_size=8, num_classes=8, embed_dim=32, num_heads=2, num_layers=2)
    torch.manual_seed(0)
    model = ViTForImageClassification(cfg).eval()
    x = torch.randn(2, 3, 32, 32)
    keep = torch.tensor([[0, 5, 15], [7, 2, 11]])
    with torch.no_grad():
        got = train.flexi_tokens(model, x, 8, keep)
        tokens = model.embedding(x)  # (B, N+1, D)
        want = torch.stack([tokens[b, [0, *(keep[b] + 1).tolist()]] for b in range(2)])
        for layer in model.encoder.layers:
            want = layer(want)
        assert got.shape == (2, 4, 32)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(train.flexi_tokens(model, x, 8, torch.arange(16).expand(2, -1)),
                                   train.flexi_tokens(model, x, 8))  # keeping all is the plain forward


def test_training_with_token_dropout_lowers_the_loss_and_is_seeded():
    cfg = ViTConfig(image_size=32, patch_size=8, num_classes=8, embed_dim=32, num_heads=2, num_layers=2)
    arrays, labels, masks = shapes.training_set(256, seed=3, size=32, two_share=0.25)
    images, labels, masks = train.to_tensor(arrays), torch.from_numpy(labels), torch.from_numpy(masks)
    settings = train.TrainSettings(epochs=3, batch_size=32, lr=3e-3, patch_sizes=(4, 8), flexi_after=0.3,
                                   keep_share=0.5, keep_until=0.7)
    model, losses = train.train(cfg, images, labels, settings, masks=masks)
    assert len(losses) == 24 and np.mean(losses[-6:]) < np.mean(losses[:3]) - 0.05
    _, again = train.train(cfg, images, labels, settings, masks=masks)
    assert again == losses


def test_token_targets_are_the_patches_under_the_shape():
    mask = torch.zeros(1, 1, 64, 64)
    mask[0, 0, 8:24, 40:48] = 1  # patches (1, 5) and (2, 5) of the 8x8 grid at P = 8
    under = train.token_targets(mask, 8, 64, 0.25)
    assert under.shape == (1, 64) and under[0].nonzero().flatten().tolist() == [1 * 8 + 5, 2 * 8 + 5]
    assert train.token_targets(mask, 16, 64, 0.25)[0].nonzero().flatten().tolist() == [0 * 4 + 2, 1 * 4 + 2]


def test_train_refuses_bad_data():
    cfg = PRESETS[NAME]
    with pytest.raises(ValueError, match=r"expected images \(n, 3, 64, 64\), got \(2, 3, 32, 32\)"):
        train.train(cfg, torch.zeros(2, 3, 32, 32, dtype=torch.uint8), torch.zeros(2, dtype=torch.long))


# --------------------------------------------------------------------------- the shipped weights


@pytest.fixture(scope="module")
def meta() -> dict:
    return json.loads(families.meta_path(NAME).read_text())


@pytest.fixture(scope="module")
def shipped():
    return vit.load_model(NAME, device="cpu")


def test_the_json_describes_the_shipped_file(meta):
    path = families.weights_path(NAME)
    assert path.stat().st_size <= 10 * 2**20
    assert meta["weights"]["sha256"] == families.sha256(path)
    assert meta["weights"]["bytes"] == path.stat().st_size
    assert meta["classes"] == list(shapes.CLASSES)
    # The JSON was written before ViTConfig had the Hub families' fields (issue 21); those are at their defaults.
    assert PRESETS[NAME] == ViTConfig(**meta["config"])
    assert 0 < meta["steps"] <= meta["steps_planned"] and meta["training_time_s"] > 0
    assert meta["settings"]["seed"] == meta["seed"] and meta["eval"]["seed"] != meta["seed"]
    assert set(meta["accuracy"]["patch_size"]) == {str(p) for p in range(4, 33)}
    assert set(meta["accuracy"]["depth"]) == {str(d) for d in range(1, PRESETS[NAME].num_layers + 1)}


def test_the_shipped_weights_load_without_the_network(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the model trained here must never download")

    monkeypatch.setattr("vit.model.checkpoints.download", no_network)
    monkeypatch.setattr("urllib.request.urlopen", no_network)
    for weights_name in ("imagenet", "trained"):
        model = vit.load_model(NAME, weights=weights_name, device="cpu")
        assert model.weights == "trained" and "trained here on drawn shapes; not ImageNet" in model.status
        assert model.class_names == list(shapes.CLASSES)
    random = vit.load_model(NAME, weights="random")
    assert random.weights == "random" and random.status.startswith("UNTRAINED")
    with pytest.raises(InputError, match="weights='trained' is for the families trained here"):
        vit.load_model("vit_b_32", weights="trained")


def test_the_shipped_weights_are_accurate_on_fresh_drawings(shipped, meta):
    images, labels, _ = shapes.sample(2000, seed=FRESH_SEED)
    got = train.accuracy(shipped, images, labels)
    assert got >= MIN_ACCURACY, got
    assert abs(got - meta["accuracy"]["patch_size"]["8"]) <= 0.03  # the JSON's figure holds on another seed


def test_the_json_tables_are_measured_not_written(meta):
    """Recompute two entries of the JSON's tables on its own evaluation seed (a subset)."""
    n = 300
    images, labels, _ = shapes.sample(n, seed=meta["eval"]["seed"])
    native = vit.load_model(NAME, device="cpu")
    at_p8 = train.accuracy(native, images, labels)
    assert abs(at_p8 - meta["accuracy"]["patch_size"]["8"]) <= 0.03
    shallow = train.accuracy(vit.load_model(NAME, depth=1, device="cpu"), images, labels)
    assert abs(shallow - meta["accuracy"]["depth"]["1"]) <= 0.08


def test_analyze_gives_the_models_own_prediction(shipped):
    images, _, _ = shapes.sample(5, seed=FRESH_SEED + 1)
    for image in images:
        result = vit.analyze(shipped, image, top_k=3)
        with torch.no_grad():
            probs = shipped(shipped.preprocess(image)).softmax(-1)[0]
        assert result.topk[0].label == shapes.CLASSES[int(probs.argmax())]
        torch.testing.assert_close(result.probs, probs, atol=1e-5, rtol=1e-4)
        assert result.stages[-1].shape == (1, 8) and result.grid == (8, 8)


@pytest.mark.server  # a subprocess: the entry point itself
def test_cli_analyze_offline_with_the_trained_weights(tmp_path):
    image = shapes.sample(1, seed=FRESH_SEED + 2)[0][0]
    path = tmp_path / "shapes.png"
    image.save(path)
    env = {"TORCH_HOME": str(tmp_path / "empty"), "VIT_DOWNLOAD_TIMEOUT": "0.01", "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "vit", "analyze", str(path), "--model", NAME, "--json",
                           "--top-k", "8"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["model"] == NAME and data["weights"] == "trained" and "warning" not in proc.stderr
    expected = vit.analyze(vit.load_model(NAME, device="cpu"), path, top_k=8)
    assert [p["label"] for p in data["topk"]] == [p.label for p in expected.topk] and len(data["topk"]) == 8
    assert {p["label"] for p in data["topk"]} == set(shapes.CLASSES)
    assert (data["patch_size"], data["grid"], data["input_size"]) == (8, [8, 8], [64, 64])
    assert not (tmp_path / "empty").exists()  # nothing was downloaded, no cache created


@pytest.mark.server  # a subprocess: the entry point itself
def test_cli_download_says_it_ships():
    proc = subprocess.run([sys.executable, "-m", "vit", "download", NAME], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "nothing to download" in proc.stdout


def test_a_drawn_heart_has_two_lobes_a_notch_and_a_tip():
    """Issue 40: the pen also draws a heart as people do (two round lobes, a notch between them, a tip below), not
    only the curve: the model read a shallow-notched mouse heart as a circle (64 of 80 in the other program's)."""
    depths = []
    for seed in range(40):
        pts = shapes._drawn_heart(np.random.default_rng(seed))  # (M, 2), y down
        assert np.abs(pts).max() == pytest.approx(1) and np.allclose(np.sort(pts[:, 0]), np.sort(-pts[:, 0]))
        on_axis = pts[np.abs(pts[:, 0]) < 1e-6, 1]  # the tip and the notch
        assert len(on_axis) == 3 and on_axis.max() == pytest.approx(pts[:, 1].max())  # the tip: the lowest point
        depths.append(on_axis.min() - pts[:, 1].min())  # the notch, under the lobes' tops
    assert min(depths) > 0.01 and max(depths) > 0.15


def test_the_example_drawings_are_what_they_say():
    """assets/shapes-*.png are images of shapes.sample(15, seed=7, size=256), as assets/CREDITS.md says; the
    two-shape example (shapes-heart_and_circle.png) is image 5 of shapes.sample(12, seed=7, size=256, two=True)."""
    images, labels, _ = shapes.sample(15, seed=7, size=256)
    drawn = sorted(p for p in (ROOT / "assets").glob("shapes-*.png") if "_and_" not in p.stem)
    assert len(drawn) == 5
    for path in drawn:
        with Image.open(path) as img:
            pixels = np.asarray(img.convert("RGB"))
        matches = [i for i, im in enumerate(images) if (np.asarray(im) == pixels).all()]
        assert len(matches) == 1 and shapes.CLASSES[labels[matches[0]]] == path.stem.removeprefix("shapes-")
    pairs, pair_labels, _ = shapes.sample(12, seed=7, size=256, two=True)
    with Image.open(ROOT / "assets" / "shapes-heart_and_circle.png") as img:
        assert (np.asarray(img.convert("RGB")) == np.asarray(pairs[5])).all()
    assert [shapes.CLASSES[k] for k in pair_labels[5]] == ["heart", "circle"]


def test_the_default_recipe_is_the_shipped_files_and_the_others_are_the_ones_before():
    """`train-shapes` with no recipe retrains the shipped file's recipe (its JSON's settings), on its data."""
    shipped = json.loads(families.meta_path(train.NAME).read_text())["settings"]
    recipe = asdict(train.RECIPES[train.SHIPPED])
    assert {k: (list(v) if isinstance(v, tuple) else v) for k, v in recipe.items()} == shipped
    from vit.__main__ import _parser  # noqa: PLC0415

    assert _parser().parse_args(["train-shapes"]).recipe == train.SHIPPED == "sketch"
    sketch = train.RECIPES["sketch"]  # issue 40's: a third sketched with a pen; drawn as the others, in pieces
    assert sketch.sketch_share > 0 and sketch.two_share > 0 and sketch.varied_share > 0 and sketch.max_seconds is None
    tiny = train.TrainSettings(**{**asdict(sketch), "train_images": 1100})
    whole, parts = train.draw_training_set(tiny, 32), train.draw_training_set(tiny, 32, workers=2)
    assert all((x == y).all() for x, y in zip(whole, parts)) and (whole[1][:, 1] >= 0).any()
    mixed = train.RECIPES["mixed"]  # the file shipped before: no sketches
    assert mixed.two_share > 0 and mixed.varied_share > 0 and mixed.sketch_share == 0 and mixed.max_seconds is None
    _, labels, masks = train.draw_training_set(train.TrainSettings(**{**asdict(mixed), "train_images": 40}), 32)
    assert labels.shape == (40, 2) and masks.shape == (40, 2, 32, 32)
    plain = train.RECIPES["plain"]  # one plain shape per drawing
    assert plain == train.TrainSettings() and plain.two_share == plain.varied_share == 0 and not plain.recolour
    small = train.TrainSettings(train_images=40)
    for got, want in zip(train.draw_training_set(small, 32), shapes.sample_arrays(40, 0, 32)):
        np.testing.assert_array_equal(got, want)
