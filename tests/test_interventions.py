"""What if? (issue 24): the model on a subset of its tokens and with heads switched off, against references written
here by hand on the libraries' own modules (torchvision's encoder blocks, timm's), never through ``vit.interventions``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from conftest import random_torchvision_vit

import vit
from vit.errors import InputError
from vit.interventions import forward
from vit.interventions.run import head_pairs, kept_patches, ranked

IMAGE = "assets/shapes-star.png"


@pytest.fixture(scope="module")
def tv_pair(tmp_path_factory):
    """torchvision's ViT-B/32 cut to 2 layers with random weights, and ours loaded from its state dict."""
    tv = random_torchvision_vit("vit_b_32", seed=4, num_layers=2)
    path = tmp_path_factory.mktemp("tv") / "vit_b_32.pth"
    torch.save(tv.state_dict(), path)
    return tv, vit.load_model("vit_b_32", weights=str(path), depth=2, device="cpu")


def tv_block(block, t: torch.Tensor, off: dict | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """torchvision's EncoderBlock by hand from its nn.MultiheadAttention weights, heads in ``off`` replaced:
    {head (0-based): "zero" | "mean"}. Returns (output, weights (h, T, T))."""
    mha = block.self_attention
    h, D = mha.num_heads, mha.embed_dim
    a = block.ln_1(t)
    q, k, v = (a @ mha.in_proj_weight.T + mha.in_proj_bias).chunk(3, dim=-1)
    q, k, v = (z.reshape(1, -1, h, D // h).transpose(1, 2) for z in (q, k, v))  # (1, h, T, d)
    w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D // h), dim=-1)
    o = w @ v
    for head, how in (off or {}).items():
        o[:, head] = 0.0 if how == "zero" else o[:, head].mean(dim=-2, keepdim=True)
    o = o.transpose(1, 2).reshape(1, -1, D) @ mha.out_proj.weight.T + mha.out_proj.bias
    t = t + o
    return t + block.mlp(block.ln_2(t)), w[0]


def tv_run(tv, x, kept=None, off=None):
    """torchvision's model on the class token and the kept patches (each with its own position embedding),
    ``off`` = {layer (0-based): {head: how}}. Returns (probs (K,), per-layer weights)."""
    t = tv._process_input(x)
    t = torch.cat([tv.class_token.expand(1, -1, -1), t], dim=1) + tv.encoder.pos_embedding
    if kept is not None:
        t = t[:, [0] + [1 + i for i in kept]]
    maps = []
    for l, block in enumerate(tv.encoder.layers):
        t, w = tv_block(block, t, (off or {}).get(l))
        maps.append(w)
    return tv.heads(tv.encoder.ln(t)[:, 0])[0].softmax(-1), maps


def rollout_by_hand(maps, heads_on=None):
    """A_l = rownorm(mean of the heads on + I), R = A_L ... A_1, row 0 over the patches."""
    r = None
    for l, w in enumerate(maps):
        on = list(range(w.shape[0])) if heads_on is None else heads_on[l]
        a = (w[on].mean(0) if on else torch.zeros_like(w[0])) + torch.eye(w.shape[-1])
        a = a / a.sum(-1, keepdim=True)
        r = a if r is None else a @ r
    return r[0, 1:]


@torch.inference_mode()
def test_on_kept_tokens_equals_torchvisions_encoder_on_those_tokens(tv_pair):
    tv, ours = tv_pair
    inp = ours.input("assets/cat.jpg")
    kept = [0, 3, 4, 5, 10, 11, 12, 20, 31, 48]
    w = vit.intervene(ours, inp, keep=kept)
    probs, maps = tv_run(tv, inp.x, kept)
    assert probs.max() < 0.9  # a saturated softmax would hide differences
    torch.testing.assert_close(w.probs, probs, atol=1e-5, rtol=0)
    torch.testing.assert_close(w.probs_before, tv(inp.x)[0].softmax(-1), atol=1e-5, rtol=0)
    assert w.kept == kept and len(w.removed) == 49 - len(kept)
    heat = w.rollout.flatten()
    assert np.isnan(np.delete(heat, kept)).all()
    np.testing.assert_allclose(heat[kept], rollout_by_hand(maps).numpy(), atol=1e-6)
    assert not torch.allclose(w.probs, w.probs_before, atol=1e-3)  # removing 39 of 49 patches changes something


@torch.inference_mode()
@pytest.mark.parametrize("ablation", ["zero", "mean"])
def test_switching_heads_off_equals_the_block_by_hand(tv_pair, ablation):
    tv, ours = tv_pair
    inp = ours.input("assets/cat.jpg")
    w = vit.intervene(ours, inp, ablate=[(1, 3), (2, 7), (2, 1)], ablation=ablation, remove=[1, 2, 47])
    kept = [i for i in range(49) if i not in (1, 2, 47)]
    probs, maps = tv_run(tv, inp.x, kept, off={0: {2: ablation}, 1: {6: ablation, 0: ablation}})
    torch.testing.assert_close(w.probs, probs, atol=1e-5, rtol=0)
    on = [[h for h in range(12) if h != 2], [h for h in range(12) if h not in (6, 0)]]
    np.testing.assert_allclose(w.rollout.flatten()[kept], rollout_by_hand(maps, on).numpy(), atol=1e-6)
    assert w.ablated == ((1, 3), (2, 1), (2, 7)) and w.ablation == ablation


@torch.inference_mode()
def test_head_importance_is_the_drop_of_a_full_forward_with_that_head_off(tv_pair):
    tv, ours = tv_pair
    inp = ours.input("assets/cat.jpg")
    drops = vit.head_importance(ours, inp)
    assert drops.shape == (2, 12)
    before = tv(inp.x)[0].softmax(-1)
    top = int(before.argmax())
    for layer, head in [(1, 1), (1, 12), (2, 5)]:
        off, _ = tv_run(tv, inp.x, off={layer - 1: {head - 1: "zero"}})
        assert drops[layer - 1, head - 1] == pytest.approx(float(before[top] - off[top]), abs=1e-5)
    assert np.abs(drops).max() > 1e-4  # the heads matter: the comparison is not between zeros
    mean = vit.head_importance(ours, inp, ablation="mean", target=7)
    off, _ = tv_run(tv, inp.x, off={1: {3: "mean"}})
    assert mean[1, 3] == pytest.approx(float(before[7] - off[7]), abs=1e-5)


@torch.inference_mode()
def test_keeping_every_token_changes_nothing(tv_pair):
    _, ours = tv_pair
    inp = ours.input("assets/cat.jpg")
    for w in (vit.intervene(ours, inp), vit.intervene(ours, inp, keep=range(49)), vit.intervene(ours, inp, remove=[])):
        assert (w.probs - w.probs_before).abs().max() < 1e-6
        assert not w.changed and w.removed == [] and not np.isnan(w.rollout).any()
    a = vit.analyze(ours, inp)
    np.testing.assert_allclose(w.rollout, a.rollout(), atol=1e-5)  # rollout over every patch is the analysis' own


def test_prefix_tokens_stay_and_keep_their_positions(tmp_path):
    """A timm ViT with four registers and LayerScale: the subset run equals timm's own blocks on those tokens."""
    timm = pytest.importorskip("timm")
    from timm.models._hub import save_for_hf

    model = timm.create_model("vit_small_patch14_reg4_dinov2", pretrained=False, embed_dim=48, depth=2, num_heads=2,
                              img_size=28, patch_size=7, num_classes=5).eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    save_for_hf(model, str(tmp_path), safe_serialization=True)
    config = json.loads((tmp_path / "config.json").read_text())
    config["pretrained_cfg"]["label_names"] = [f"c{i}" for i in range(5)]
    (tmp_path / "config.json").write_text(json.dumps(config))
    ours = vit.load_model(str(tmp_path), device="cpu")
    assert ours.config.num_prefix_tokens == 5
    inp = ours.input("assets/cat.jpg")
    kept = [1, 2, 6, 9, 15]
    with torch.inference_mode():
        w = vit.intervene(ours, inp, keep=kept, ablate=[(2, 2)])
        t = model.norm_pre(model._pos_embed(model.patch_embed(inp.x)))  # (1, 5 + 16, 48)
        t = t[:, list(range(5)) + [5 + i for i in kept]]
        t = model.blocks[0](t)
        blk = model.blocks[1]  # by hand, head 2 (index 1) off
        a = blk.norm1(t)
        q, k, v = blk.attn.qkv(a).reshape(1, t.shape[1], 3, 2, 24).permute(2, 0, 3, 1, 4)
        o = torch.softmax(q @ k.transpose(-1, -2) * blk.attn.scale, dim=-1) @ v
        o[:, 1] = 0
        t = t + blk.ls1(blk.attn.proj(o.transpose(1, 2).reshape(1, -1, 48)))
        t = t + blk.ls2(blk.mlp(blk.norm2(t)))
        probs = model.forward_head(model.norm(t))[0].softmax(-1)
    torch.testing.assert_close(w.probs, probs, atol=1e-5, rtol=0)
    assert w.prefix_token_names[0] == "class" and w.num_prefix_tokens == 5


def test_the_shapes_model_loses_its_answer_without_the_shape():
    """The README's example: remove the cross's patches and the cross goes; remove the background's and it stays."""
    loaded = vit.load_model("vit_tiny_shapes")
    inp = loaded.input("assets/shapes-cross.png")  # a plain shape on a background: the shape is far from its colour
    view = inp.view.astype(np.float32)  # (64, 64, 3)
    shape_pixels = np.linalg.norm(view - view[:4, :4].reshape(-1, 3).mean(0), axis=-1) > 60
    coverage = shape_pixels.reshape(8, 8, 8, 8).mean((1, 3)).flatten()  # (64,): how much of each patch is shape
    shape = [i for i in range(64) if coverage[i] > 0.05]
    background = [i for i in range(64) if coverage[i] <= 0.05]
    assert 5 < len(shape) < 40
    no_shape = vit.intervene(loaded, inp, remove=shape, grey=True)
    no_background = vit.intervene(loaded, inp, remove=background, grey=True)
    assert no_shape.label == "cross" and no_shape.prob_before > 0.5
    assert no_shape.prob_after < 0.2 * no_shape.prob_before and no_shape.grey_prob < 0.2 * no_shape.prob_before
    assert no_background.topk[0].label == "cross"


def test_bad_values_get_one_sentence_naming_the_parameter(tv_pair):
    _, ours = tv_pair
    with pytest.raises(InputError, match=r"remove must hold patch indices from 0 to 48 .* got 49"):
        vit.intervene(ours, "assets/cat.jpg", remove=[3, 49])
    with pytest.raises(InputError, match="at least one patch must stay"):
        vit.intervene(ours, "assets/cat.jpg", remove=range(49))
    with pytest.raises(InputError, match=r"ablate must hold \(layer, head\) pairs .* 2 layers of 12 heads.*\(3, 1\)"):
        vit.intervene(ours, "assets/cat.jpg", ablate=[(3, 1)])
    with pytest.raises(InputError, match="ablate"):
        head_pairs("1:13", 2, 12)
    with pytest.raises(InputError, match="ablation must be one of"):
        vit.intervene(ours, "assets/cat.jpg", ablation="half")
    with pytest.raises(InputError, match="not both"):
        kept_patches([1], [2], 49)
    with pytest.raises(InputError, match="keep must be a list"):
        kept_patches("3,4", None, 49)
    assert head_pairs("2:5, 1:1,2:5", 2, 12) == ((1, 1), (2, 5))


def test_ranked_takes_the_top_or_a_seeded_random_fraction():
    saliency = torch.tensor([[0.1, 0.9], [0.5, 0.5]])
    assert ranked(saliency, 0.5) == [1, 2]  # 0.9, then the first of the tied 0.5s
    assert ranked(saliency, 0.0) == [] and ranked(saliency, 1.0) == [0, 1, 2, 3]
    assert ranked(saliency, 0.5, "random", seed=1) == ranked(saliency, 0.5, "random", seed=1)
    with pytest.raises(InputError, match="fraction must be a number from 0 to 1"):
        ranked(saliency, 1.5)


def test_a_block_with_every_head_on_is_the_block():
    torch.manual_seed(0)
    cfg = vit.ViTConfig(image_size=16, patch_size=4, num_classes=3, embed_dim=16, num_heads=2, num_layers=1)
    from vit.model.modules import ViTForImageClassification

    layer = ViTForImageClassification(cfg).eval().encoder.layers[0]
    x = torch.randn(2, 17, 16)
    with torch.no_grad():
        for ablation in forward.ABLATIONS:
            y = forward.heads_off(layer, x, torch.ones(2), ablation)
            torch.testing.assert_close(y, layer(x), atol=1e-6, rtol=0)


def test_the_cli_removes_a_fraction_switches_heads_off_and_prints_strict_json(tmp_path, capsys):
    from vit.__main__ import main

    args = ["intervene", IMAGE, "--model", "vit_tiny_shapes", "--remove", "30%", "--ablate", "3:2", "--grey",
            "--head-importance", "--json", "--out", str(tmp_path)]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["removed"]) == round(0.3 * 64) and doc["ablated"] == [[3, 2]]
    assert doc["label"] == "star" and doc["prob_after"] < doc["prob_before"] and doc["grey_prob"] is not None
    assert np.array(doc["head_importance"]).shape == (4, 3)
    assert (tmp_path / "whatif.png").is_file() and (tmp_path / "heads.png").is_file()
    loaded = vit.load_model("vit_tiny_shapes")  # the same run through the API: the CLI adds nothing of its own
    e = vit.explain(loaded, IMAGE)
    w = vit.intervene(loaded, IMAGE, remove=ranked(e.map, 0.3), ablate=[(3, 2)])
    assert doc["removed"] == w.removed and doc["prob_after"] == pytest.approx(w.prob_after, abs=1e-6)


@pytest.mark.parametrize(("args", "said"), [
    (["--remove", "3,4,99"], "remove must hold patch indices from 0 to 63"),
    (["--remove", "1.5"], "--remove must be a fraction from 0 to 1"),
    (["--keep", "0%"], "at least one patch must stay"),
    (["--ablate", "9:1"], "got 9:1"),
    (["--remove", "0.2", "--keep", "0.2"], "not both"),
    (["--order", "best"], "--order must be one of"),
])
def test_the_cli_says_what_is_wrong_in_one_sentence(capsys, args, said):
    from vit.__main__ import main

    assert main(["intervene", IMAGE, "--model", "vit_tiny_shapes", *args]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err


def test_nothing_taken_away_moves_nothing_in_bfloat16():
    """What if? with nothing taken away said p(heart) 60.2 % -> 60.3 % in bfloat16 (the app's default on this machine):
    "before" ran model(x), whose fused attention rounds otherwise than the blocks with their weights written out.
    Now before is the same run: equal with nothing taken away, and the Analysis' p (the sidebar's, Why?'s)."""
    loaded = vit.load_model("vit_tiny_shapes", dtype="bfloat16")
    image = "assets/shapes-heart_and_circle.png"
    w = vit.intervene(loaded, image)
    assert torch.equal(w.probs, w.probs_before) and not w.changed
    assert w.prob_before == pytest.approx(float(vit.analyze(loaded, image).probs[w.target]), abs=5e-4)
    removed = vit.intervene(loaded, image, remove=[0, 1], ablate=[(1, 1)])
    assert torch.equal(removed.probs_before, w.probs_before)  # the same unchanged model, whatever is taken away
