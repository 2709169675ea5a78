"""Why this class? Each explanation against an independent reference on torchvision's own ViT.

The reference runs torchvision's ``VisionTransformer`` (same random weights) block by block with
its attention written out from ``self_attention.in_proj_weight`` so that the probabilities A_l are
tensors of the graph; ``retain_grad()`` on them and on every block's ``ln_1`` output gives
dA_l and the Grad-CAM activations' gradients (at any block) after one ``backward()`` of the target's logit.
Then Chefer's R, the rollout and Grad-CAM are computed in float64 with full matrices, as the
papers write them. At the native patch size 32 and at 24 (torchvision rebuilt at 216 px with our
resampled embeddings); the whole-graph and the block-by-block paths agree.

AttnLRP's reference is torchvision's forward written out with the rule functions of ``lxt`` (the AttnLRP
authors' library, 2.1; ``.ci/run`` installs it without its dependencies, and its rules module is loaded on its
own: the package's ``__init__`` imports transformers' models). Occlusion's runs torchvision's own encoder
blocks on the tokens left, block by block.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT
from test_inside import DEPTH, checkpoint, torchvision_twin  # noqa: F401  (checkpoint is a fixture)

import vit
from vit import cost
from vit.analysis.trace import attention_kept
from vit.errors import InputError
from vit.explanations import maps as explanations
from vit.model.load import load_model

CAT = ROOT / "assets" / "cat.jpg"


def lxt_rules():
    """lxt's ``efficient/rules.py``, loaded by its path (it imports torch only), or a skip that says why."""
    spec = importlib.util.find_spec("lxt")
    path = Path(spec.submodule_search_locations[0]) / "efficient" / "rules.py" if spec else None
    if path is None or not path.is_file():
        if os.environ.get("CI"):
            pytest.fail("lxt is not installed: .ci/run installs it (pip install --no-deps lxt==2.1)")
        pytest.skip("AttnLRP's reference needs lxt: pip install --no-deps lxt==2.1")
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location("lxt_rules", path))
    module.__spec__.loader.exec_module(module)
    return module


def torchvision_explicit(tv, x: torch.Tensor):
    """torchvision's forward with each block's attention explicit: (logits, A_l list, ln_1 output list).

    Every A_l (B, h, T, T) and every block's ln_1 output retain their gradients.
    """
    B = x.shape[0]
    tokens = tv._process_input(x)  # (B, N, D): conv_proj, flattened, as torchvision's forward does
    tokens = torch.cat([tv.class_token.expand(B, -1, -1), tokens], dim=1) + tv.encoder.pos_embedding
    weights, ln_out = [], []
    for block in tv.encoder.layers:
        mha = block.self_attention
        h = mha.num_heads
        a = block.ln_1(tokens)
        if a.requires_grad:
            a.retain_grad()
        ln_out.append(a)
        q, k, v = F.linear(a, mha.in_proj_weight, mha.in_proj_bias).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, -1, h, t.shape[-1] // h).transpose(1, 2) for t in (q, k, v))  # (B, h, T, d)
        A = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(dim=-1)
        if A.requires_grad:
            A.retain_grad()
        weights.append(A)
        out = mha.out_proj((A @ v).transpose(1, 2).reshape(B, -1, h * q.shape[-1]))
        tokens = tokens + out
        tokens = tokens + block.mlp(block.ln_2(tokens))
    logits = tv.heads(tv.encoder.ln(tokens)[:, 0])
    return logits, weights, ln_out


def torchvision_lrp(tv, x: torch.Tensor, target: int | None, versus: int | None) -> torch.Tensor:
    """AttnLRP on torchvision's ViT with lxt's rules: the relevance (N,) of the patch tokens conv_proj puts out."""
    rules = lxt_rules()

    def layer_norm(norm, t):  # lxt's layer_norm_forward: the standard deviation's gradient stopped
        mean = t.mean(dim=-1, keepdim=True)
        std = (((t - mean) ** 2).mean(dim=-1, keepdim=True) + norm.eps).sqrt()
        return (t - mean) / rules.stop_gradient(std) * norm.weight + norm.bias

    with torch.enable_grad():
        patches = tv._process_input(x).detach().requires_grad_()  # (B, N, D)
        B = x.shape[0]
        tokens = torch.cat([tv.class_token.expand(B, -1, -1), patches], dim=1) + tv.encoder.pos_embedding
        for block in tv.encoder.layers:
            mha, h = block.self_attention, block.self_attention.num_heads
            a = layer_norm(block.ln_1, tokens)
            q, k, v = F.linear(a, mha.in_proj_weight, mha.in_proj_bias).chunk(3, dim=-1)
            q, k, v = (t.reshape(B, -1, h, t.shape[-1] // h).transpose(1, 2) for t in (q, k, v))  # (B, h, T, d)
            q, k, v = rules.divide_gradient(q, 4), rules.divide_gradient(k, 4), rules.divide_gradient(v, 2)
            A = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(dim=-1)
            tokens = tokens + mha.out_proj((A @ v).transpose(1, 2).reshape(B, -1, h * q.shape[-1]))
            fc1, fc2 = block.mlp[0], block.mlp[3]
            hidden = rules.identity_rule_implicit(F.gelu, fc1(layer_norm(block.ln_2, tokens)))
            tokens = tokens + fc2(hidden)
        logits = tv.heads(layer_norm(tv.encoder.ln, tokens)[:, 0])
        target = int(logits[0].argmax()) if target is None else target
        score = logits[0, target] - (0 if versus is None else logits[0, versus])
        (grad,) = torch.autograd.grad(score, patches)
    return (patches[0].double() * grad[0].double()).sum(-1).detach()


def torchvision_occlusion(tv, x: torch.Tensor, target: int | None) -> torch.Tensor:
    """Each 2 x 2 block of patch tokens removed, torchvision's own blocks run on the rest: (N,) mean log-prob drops."""
    with torch.no_grad():
        tokens = tv._process_input(x)
        tokens = torch.cat([tv.class_token.expand(1, -1, -1), tokens], dim=1) + tv.encoder.pos_embedding

        def log_probs(kept: list[int]) -> torch.Tensor:
            t = tokens[:, [0] + [1 + i for i in kept]]
            for block in tv.encoder.layers:
                t = block(t)
            return tv.heads(tv.encoder.ln(t)[:, 0])[0].double().log_softmax(-1)

        side = int(math.isqrt(tokens.shape[1] - 1))
        whole = log_probs(list(range(side * side)))
        target = int(whole.argmax()) if target is None else target
        total, count = torch.zeros(side * side, dtype=torch.float64), torch.zeros(side * side)
        for r in range(side - 1):
            for c in range(side - 1):
                square = [r * side + c, r * side + c + 1, (r + 1) * side + c, (r + 1) * side + c + 1]
                drop = whole[target] - log_probs([i for i in range(side * side) if i not in square])[target]
                total[square] += drop
                count[square] += 1
    return total / count.clamp(min=1)


_REFERENCES: dict = {}


def reference(tv, x: torch.Tensor, target: int | None, gradcam_layer: int) -> dict[str, torch.Tensor]:
    """Every method's (N,) map for image 0, as the papers write them, in float64 (Grad-CAM at block 1..L)."""
    key = (id(tv), x.shape, target, gradcam_layer)
    if key not in _REFERENCES:
        _REFERENCES[key] = _reference(tv, x, target, gradcam_layer)
    return _REFERENCES[key]


def _reference(tv, x: torch.Tensor, target: int | None, gradcam_layer: int) -> dict[str, torch.Tensor]:
    with torch.enable_grad():
        logits, weights, ln_out = torchvision_explicit(tv, x)
        target = int(logits[0].argmax()) if target is None else target
        logits[0, target].backward()
    T = weights[0].shape[-1]
    eye = torch.eye(T, dtype=torch.float64)
    R = eye.clone()  # Chefer et al.: R <- R + mean_h[(dA * A)^+] R, layer 1 first
    roll = eye.clone()  # Abnar & Zuidema: R <- rownorm(mean_h A + I) R
    for A in weights:
        a, g = A[0].detach().double(), A.grad[0].double()
        R = R + (g * a).clamp(min=0).mean(0) @ R
        m = a.mean(0) + eye
        roll = (m / m.sum(-1, keepdim=True)) @ roll
    chosen = ln_out[gradcam_layer - 1]
    act, grad = chosen[0, 1:].detach().double(), chosen.grad[0, 1:].double()  # patch tokens only
    return {
        "grad_rollout": R[0, 1:],
        "rollout": roll[0, 1:],
        "attention": weights[-1][0, :, 0, 1:].detach().double().mean(0),
        "gradcam": (act @ grad.mean(0)).clamp(min=0),
        "attnlrp": torchvision_lrp(tv, x, target, None),
        "occlusion": torchvision_occlusion(tv, x, target),
        "logits": logits.detach()[0],
        "target": torch.tensor(target),
    }


@pytest.fixture(scope="module", params=[None, 24], ids=["P32", "P24"])
def case(request, checkpoint):  # noqa: F811
    tv, path = checkpoint
    loaded = load_model("vit_b_32", weights=str(path), patch_size=request.param, depth=DEPTH, device="cpu")
    x = loaded.preprocess.to_tensor(loaded.preprocess.view(vit.images.load_image(CAT)))
    return loaded, torchvision_twin(tv, loaded), x


def test_the_reference_is_torchvisions_forward(case):
    loaded, tv, x = case
    with torch.no_grad():
        logits, _, _ = torchvision_explicit(tv, x)
        torch.testing.assert_close(logits, tv(x), atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(logits, loaded.module(x), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("method", list(explanations.METHODS))
@pytest.mark.parametrize("target", [None, 7], ids=["top1", "class7"])
def test_each_method_matches_the_torchvision_reference(case, method, target):
    loaded, tv, x = case
    ref = reference(tv, x, target, DEPTH - 1)  # Grad-CAM's default elsewhere than the shapes: the block before the last
    e = vit.explain(loaded, CAT, method=method, target=target, versus=None)
    assert e.method == method and e.target == int(ref["target"]) and e.versus is None
    assert e.layer == (DEPTH - 1 if method == "gradcam" else None)
    assert e.label == loaded.class_names[e.target]
    assert e.prob == pytest.approx(float(ref["logits"].softmax(-1)[e.target]), abs=1e-5)
    rows = x.shape[-1] // loaded.config.patch_size
    assert e.map.shape == (rows, rows) and e.grid == (rows, rows)
    expected = ref[method].float().reshape(rows, rows)
    assert expected.abs().max() > 0  # the comparison below is not between two zero maps
    # Occlusion's drops are differences of nearby float32 log-probabilities: rounded at ~1e-6 of a drop of ~1e-2.
    scale = (1e-4 if method == "occlusion" else 1e-5) * float(expected.abs().max())
    torch.testing.assert_close(e.map, expected, rtol=2e-3, atol=scale)


@pytest.mark.parametrize("layer", range(1, DEPTH + 1))
def test_gradcam_at_every_block_matches_the_reference(case, layer):
    loaded, tv, x = case
    ref = reference(tv, x, 7, layer)
    e = vit.explain(loaded, CAT, method="gradcam", target=7, layer=layer, versus=None)
    assert e.layer == layer
    expected = ref["gradcam"].float().reshape(e.grid)
    assert expected.abs().max() > 0
    torch.testing.assert_close(e.map, expected, rtol=2e-3, atol=1e-5 * float(expected.abs().max()))


def _gradcam_by_hand(module, x: torch.Tensor, target: int, layer: int) -> torch.Tensor:
    """Grad-CAM written out: a forward hook on block ``layer``'s norm1 keeps its output, one backward."""
    kept = []
    handle = module.encoder.layers[layer - 1].norm1.register_forward_hook(lambda _m, _i, out: kept.append(out))
    try:
        with torch.enable_grad():
            logits = module(x.clone().requires_grad_())  # the weights may be frozen: the graph starts at x
            (grad,) = torch.autograd.grad(logits[0, target], kept[0])
    finally:
        handle.remove()
    a, g = kept[0][0, 1:].detach().double(), grad[0, 1:].double()  # (N, D) patch tokens
    weights = g.mean(dim=0)  # alpha_d: the gradient averaged over the patch tokens
    return torch.relu((a * weights).sum(dim=1))  # (N,)


@pytest.mark.parametrize("layer", [1, 2, 3, 4])
def test_gradcam_layer_on_the_shapes_model_matches_a_hook_by_hand(layer):
    loaded = vit.load_model("vit_tiny_shapes")
    star = ROOT / "assets" / "shapes-star.png"
    x = loaded.input(star).x
    largest = 0.0
    for target in range(len(loaded.class_names)):  # ReLU may leave one class's map all zero: every class is compared
        e = vit.explain(loaded, star, method="gradcam", target=target, layer=layer, versus=None)
        expected = _gradcam_by_hand(loaded.module, x, target, layer).float().reshape(e.grid)
        assert e.layer == layer
        torch.testing.assert_close(e.map, expected, rtol=1e-3, atol=1e-6 * max(1.0, float(expected.abs().max())))
        largest = max(largest, float(expected.abs().max()))
    assert largest > 0  # not a comparison of zero maps only


def test_gradcam_layer_default_and_refusals():
    from vit.explanations.methods import GRADCAM_LAYERS, default_gradcam_layer

    shapes = vit.load_model("vit_tiny_shapes")
    assert vit.explain(shapes, ROOT / "assets" / "shapes-star.png", method="gradcam").layer == \
        GRADCAM_LAYERS["vit_tiny_shapes"]
    assert vit.explain(shapes, ROOT / "assets" / "shapes-star.png", method="rollout", layer=2).layer is None
    assert default_gradcam_layer("vit_b_16", 12) == 11 and default_gradcam_layer("vit_b_16", 1) == 1
    assert default_gradcam_layer("vit_tiny_shapes", 2) == min(2, GRADCAM_LAYERS["vit_tiny_shapes"])
    for bad in (0, 5, "two", 2.5, True):
        with pytest.raises(InputError, match=r"layer \(Grad-CAM's block\) must be an integer from 1 to 4"):
            vit.explain(shapes, ROOT / "assets" / "shapes-star.png", method="gradcam", layer=bad)


def relevance_row(contributions, query: int = 0) -> torch.Tensor:
    """Row ``query`` of Chefer's R = (I + C_L) ... (I + C_1) from the L per-layer terms, by the package's step."""
    row = torch.zeros(contributions[0].shape[-1], dtype=contributions[0].dtype)
    row[query] = 1.0
    for contribution in reversed(list(contributions)):
        row = explanations.relevance_step(row, contribution)
    return row


def whole_graph_grad_rollout(model, x, target, versus):
    """Chefer's row from one forward and one backward pass keeping every layer's attention (the package recomputes
    one block at a time)."""
    layers = list(model.encoder.layers)
    with torch.enable_grad(), attention_kept(layers) as kept:
        tokens = model.embedding(x).detach().requires_grad_()  # a leaf, so the graph is built from here
        logits = model.head(model.encoder(tokens))  # (B, N+1, D) -> (B, K)
        target, versus = explanations._question(logits, target, versus)
        weights = [kept[i] for i in range(len(layers))]  # L x (B, h, N+1, N+1)
        grads = torch.autograd.grad(explanations._score(logits, target, versus), weights)
    contributions = [explanations.attention_contribution(w[0].detach(), g[0]) for w, g in zip(weights, grads)]
    return logits.detach(), relevance_row(contributions), target, versus


@pytest.mark.parametrize("target", [None, 3])
def test_both_gradient_paths_agree(case, target):
    loaded, _, x = case
    lrp_whole, lrp_blocks = (functools.partial(explanations._attnlrp, recompute=r) for r in (False, True))
    for whole_graph, blocks_run in ((whole_graph_grad_rollout, explanations._grad_rollout), (lrp_whole, lrp_blocks)):
        whole = whole_graph(loaded.module, x, target, "auto")
        blocks = blocks_run(loaded.module, x, target, "auto")
        assert whole[2:] == blocks[2:] and whole[3] is not None
        torch.testing.assert_close(whole[1], blocks[1], rtol=1e-4, atol=1e-6 * float(whole[1].abs().max()))
        torch.testing.assert_close(whole[0], blocks[0])


def test_class_specific_methods_change_with_the_class_and_the_others_do_not(case):
    loaded = case[0]
    for name, method in explanations.METHODS.items():
        a = vit.explain(loaded, CAT, method=name, target=1).map
        b = vit.explain(loaded, CAT, method=name, target=2).map
        assert torch.equal(a, b) != method.class_specific, name


def test_explain_names_a_class_by_its_name_and_leaves_the_model_as_it_was(case):
    loaded = case[0]
    e = vit.explain(loaded, CAT, method="grad_rollout", target=loaded.class_names[5])
    assert e.target == 5
    assert not any(p.requires_grad for p in loaded.parameters())
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in loaded.module.modules())
    assert e.image.shape == (*[x.shape[-1] for x in [case[2]]] * 2, 3)
    assert set(e.timings_ms) == {"preprocess", "explain"}


@pytest.mark.parametrize(
    "kwargs,names",
    [
        ({"method": "lime"}, "method"),
        ({"method": 3}, "method"),
        ({"target": 1000}, "target"),
        ({"target": -1}, "target"),
        ({"target": 2.5}, "target"),
        ({"target": "not a class"}, "target"),
        ({"target": True}, "target"),
    ],
)
def test_bad_method_or_target_is_refused_naming_the_parameter(case, kwargs, names):
    with pytest.raises(InputError, match=rf"^{names} must be"):
        vit.explain(case[0], CAT, **kwargs)


def test_a_bad_image_is_refused(case):
    with pytest.raises(InputError):
        vit.explain(case[0], b"not an image", method="gradcam")


def test_over_the_memory_budget_the_smallest_patch_size_that_fits_is_named(case, monkeypatch):
    loaded = case[0]
    need = explanations.grad_memory(loaded.config)
    monkeypatch.setattr(cost, "MEMORY_BUDGET_GB", need / 1e9 / 2)
    with pytest.raises(InputError, match=r"smallest patch size that fits is (\d+)") as info:
        vit.explain(loaded, CAT, method="grad_rollout")
    p = int(info.value.args[0].split("fits is ")[1].split(".")[0])
    setting = vit.validate.setting("vit_b_32", p, DEPTH)
    assert explanations.grad_memory(setting.config) <= need / 2
    smaller = vit.validate.setting("vit_b_32", p - 1, DEPTH)
    assert p - 1 == loaded.config.patch_size or explanations.grad_memory(smaller.config) > need / 2


def test_relevance_row_is_a_row_of_the_product():
    g = torch.Generator().manual_seed(0)
    terms = [torch.rand(6, 6, generator=g, dtype=torch.float64) / 6 for _ in range(3)]
    R = torch.eye(6, dtype=torch.float64)
    for c in terms:
        R = R + c @ R
    for q in (0, 4):
        torch.testing.assert_close(relevance_row(terms, q), R[q])


def test_gradcam_map_is_relu_of_the_weighted_sum():
    a = torch.tensor([[9.0, 9.0], [1.0, 2.0], [3.0, -4.0]])  # row 0: the class token, ignored
    g = torch.tensor([[5.0, 5.0], [1.0, 0.0], [1.0, 2.0]])  # w = mean of rows 1-2 = (1, 1)
    assert explanations.gradcam_map(a, g).tolist() == [3.0, 0.0]  # (1 + 2, relu(3 - 4))
