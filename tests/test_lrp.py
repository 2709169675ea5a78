"""AttnLRP and occlusion on every family the app runs: the rule forward is the model's own, the relevance is lxt's
rules written out over the model's modules, "A rather than B" is the difference of the two questions, and
occlusion is What if?'s removal of each 2 x 2 block.

torchvision's family is checked against torchvision's own model in tests/test_explanations.py; here the Hub's
pieces (registers, DeiT's distillation token and head, DINOv2's LayerScale and head, CLIP's pre-norm and QuickGELU)
on random weights, two blocks deep.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT
from test_explanations import lxt_rules

import vit
from vit.config import ViTConfig
from vit.errors import InputError
from vit.explanations import lrp, occlusion
from vit.explanations import maps as explanations
from vit.model import precision
from vit.model.modules import ViTForImageClassification, split_heads

SHAPES = ROOT / "assets" / "shapes-heart_and_circle.png"
SMALL = dict(image_size=32, patch_size=8, num_classes=6, embed_dim=32, num_heads=4, num_layers=2)
FAMILIES = {
    "chapter": {},
    "registers, LayerScale, DINOv2 head": dict(num_register_tokens=4, layer_scale=True, head="token_and_patch_mean"),
    "DeiT distilled": dict(distilled=True, head="token_distill_mean"),
    "CLIP": dict(pre_norm=True, patch_bias=False, activation="quick_gelu", ln_eps=1e-5),
}


def family(name: str, seed: int = 0) -> ViTForImageClassification:
    torch.manual_seed(seed)
    model = ViTForImageClassification(ViTConfig(**SMALL, **FAMILIES[name])).eval()
    with torch.no_grad():
        for p in model.parameters():  # every weight random (LayerNorm's, LayerScale's and the tokens' too)
            p.copy_(torch.randn_like(p) * (0.3 if p.ndim > 1 else 0.5) + (1.0 if p.ndim == 1 else 0.0) * 0.2)
    return model.requires_grad_(False)


def reference(model, x: torch.Tensor, target: int, versus: int | None) -> torch.Tensor:
    """lxt's rules over the model's modules, written out: the relevance (N,) of the patch tokens."""
    rules = lxt_rules()

    def norm(module, t):  # lxt's layer_norm_forward
        if not isinstance(module, torch.nn.LayerNorm):
            return module(t)
        mean = t.mean(dim=-1, keepdim=True)
        std = (((t - mean) ** 2).mean(dim=-1, keepdim=True) + module.eps).sqrt()
        return (t - mean) / rules.stop_gradient(std) * module.weight + module.bias

    e, cfg = model.embedding, model.config
    with torch.enable_grad():
        patches = e.patch_embed(x).detach().requires_grad_()  # (1, N, D)
        tokens = norm(e.norm_pre, e.pos_embed(e.add_cls_token(patches)))
        for block in model.encoder.layers:
            a = norm(block.norm1, tokens)
            attn = block.attn
            q, k, v = (split_heads(proj(a), cfg.num_heads) for proj in (attn.q_proj, attn.k_proj, attn.v_proj))
            q, k, v = rules.divide_gradient(q, 4), rules.divide_gradient(k, 4), rules.divide_gradient(v, 2)
            A = (q @ k.transpose(-2, -1) / math.sqrt(cfg.head_dim)).softmax(dim=-1)  # (1, h, T, T)
            tokens = tokens + block.scale1(attn.out_proj((A @ v).transpose(1, 2).flatten(2)))
            mlp = block.mlp.net
            hidden = rules.identity_rule_implicit(block.mlp.act, mlp[0](norm(block.norm2, tokens)))
            tokens = tokens + block.scale2(mlp[3](hidden))
        logits = model.head(norm(model.encoder.norm, tokens))
        score = logits[0, target] - (0 if versus is None else logits[0, versus])
        (grad,) = torch.autograd.grad(score, patches)
    return (patches[0].double() * grad[0].double()).sum(-1).detach()


@pytest.mark.parametrize("name", FAMILIES)
def test_the_rule_forward_gives_the_models_own_logits_bit_for_bit(name):
    model = family(name)
    x = torch.randn(2, 3, 32, 32)
    plain = model(x)
    with torch.enable_grad(), lrp.rules(model), lrp.patch_tokens(model) as kept:
        ruled = model(x)
    assert torch.equal(plain, ruled) and kept[0].requires_grad
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())  # all removed


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("recompute", [False, True], ids=["whole graph", "block by block"])
def test_attnlrp_matches_lxts_rules_on_every_family(name, recompute):
    model = family(name)
    x = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    for target, versus in ((0, None), (3, 5), (None, "auto")):
        logits, row, a, b = explanations._attnlrp(model, x, target, versus, recompute=recompute)
        assert (a, b) == explanations._question(model(x), target, versus)
        expected = reference(model, x, a, b).float()
        prefix = model.config.num_prefix_tokens
        assert row[:prefix].abs().max() == 0 and expected.abs().max() > 0
        torch.testing.assert_close(row[prefix:], expected, rtol=1e-3, atol=1e-4 * float(expected.abs().max()))
        torch.testing.assert_close(logits, model(x))


def test_why_a_rather_than_b_is_why_a_less_why_b():
    loaded = vit.load_model("vit_tiny_shapes")
    a = vit.explain(loaded, SHAPES, "attnlrp", target="heart", versus=None).map
    b = vit.explain(loaded, SHAPES, "attnlrp", target="circle", versus=None).map
    both = vit.explain(loaded, SHAPES, "attnlrp", target="heart", versus="circle")
    assert (both.label, both.versus_label) == ("heart", "circle")
    torch.testing.assert_close(both.map, a - b, rtol=1e-4, atol=1e-5 * float(a.abs().max()))
    auto = vit.explain(loaded, SHAPES, "attnlrp")  # the top-1 rather than the strongest other class
    order = auto.probs.argsort(descending=True).tolist()
    assert (auto.target, auto.versus) == (order[0], order[1])
    assert vit.explain(loaded, SHAPES, "attnlrp", target=order[1]).versus == order[0]
    assert vit.explain(loaded, SHAPES, "rollout", target="circle").versus is None  # class-agnostic: no rival
    assert vit.explain(loaded, SHAPES, "occlusion", versus="circle").versus is None


@pytest.mark.parametrize("target,bad", [("heart", "heart"), ("star", 3), ("heart", "a star"), ("heart", 8),
                                        ("heart", -1), ("heart", 2.5)])
def test_a_rival_that_is_the_class_itself_or_no_class_is_refused(target, bad):
    loaded = vit.load_model("vit_tiny_shapes")
    with pytest.raises(InputError, match=r"^versus must be"):
        vit.explain(loaded, SHAPES, "attnlrp", target=target, versus=bad)


def test_the_shapes_model_points_at_the_asked_shape():
    """heart and circle: each question's brightest patch on its own shape (the left and right halves)."""
    loaded = vit.load_model("vit_tiny_shapes")
    for label in ("heart", "circle"):
        for method in ("attnlrp", "occlusion"):
            e = vit.explain(loaded, SHAPES, method, target=label)
            col = int(e.map.flatten().argmax()) % e.grid[1]
            assert (col < e.grid[1] // 2) == (label == "heart"), (method, label, e.map)


def test_bfloat16_relevance_follows_float32():
    f32 = vit.load_model("vit_tiny_shapes")
    b16 = vit.load_model("vit_tiny_shapes", dtype="bfloat16")
    assert precision.of(b16.module) == torch.bfloat16
    for target in ("heart", "circle"):
        a = vit.explain(f32, SHAPES, "attnlrp", target=target).map.flatten()
        b = vit.explain(b16, SHAPES, "attnlrp", target=target).map.flatten()
        assert b.dtype == torch.float32 and int(a.argmax()) == int(b.argmax())
        assert F.cosine_similarity(a, b, dim=0) > 0.99


def test_occlusion_is_what_if_with_each_two_by_two_block_removed():
    loaded = vit.load_model("vit_tiny_shapes")
    e = vit.explain(loaded, SHAPES, "occlusion", target="circle")
    squares = occlusion.blocks(*e.grid)
    assert squares.shape == ((e.grid[0] - 1) * (e.grid[1] - 1), 4)
    assert occlusion.runs(*e.grid) == len(squares) + 1
    whole = vit.intervene(loaded, SHAPES, target="circle")
    drops = torch.tensor([math.log(whole.prob_after) - math.log(vit.intervene(loaded, SHAPES, remove=s.tolist(),
                                                                              target="circle").prob_after)
                          for s in squares])
    expected = torch.zeros(e.grid[0] * e.grid[1])
    for i in range(len(expected)):
        expected[i] = drops[(squares == i).any(dim=1)].mean()
    torch.testing.assert_close(e.map.flatten(), expected, rtol=1e-3, atol=1e-4 * float(expected.abs().max()))


def test_patch_scores_average_the_blocks_that_hold_each_patch():
    squares = occlusion.blocks(2, 3)  # two 2 x 2 blocks of a 2 x 3 grid: patches {0, 1, 3, 4} and {1, 2, 4, 5}
    assert squares.tolist() == [[0, 1, 3, 4], [1, 2, 4, 5]]
    assert occlusion.patch_scores(torch.tensor([1.0, 3.0]), squares, 6).tolist() == [1, 2, 3, 1, 2, 3]
    assert occlusion.blocks(1, 4).tolist() == [[0], [1], [2], [3]]  # one row: one patch at a time


def test_attnlrp_memory_is_the_smaller_and_fits_at_patch_size_4():
    from vit import cost

    setting = vit.validate.setting("vit_b_16", 4, 12)
    assert explanations.lrp_memory(setting.config) < explanations.grad_memory(setting.config) / 4
    assert explanations.lrp_memory(setting.config) < cost.MEMORY_BUDGET_GB * 1e9
