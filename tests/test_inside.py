"""The chapter's equations in numbers, each against an independent computation.

Residual norms, token norms and attention (hence mean attention distance) come from
torchvision's own ViT on the same random weights, read through forward hooks on its
``encoder.layers[i]`` (input and output), ``self_attention`` and ``mlp``; at the native
patch size and at a resized one (torchvision's model built for that patch size and
given our resampled patch and position embeddings). Mean attention distance is also
computed from its definition by plain loops, and pinned on a hand-made 2x2 grid.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from conftest import ROOT, random_torchvision_vit
from reference import mean_attention_distance
from test_model import torchvision_attention
from torchvision.models.vision_transformer import VisionTransformer

import vit
from vit.analysis import rollout
from vit.analysis.figure7 import principal_filters
from vit.analysis.run import analyze
from vit.analysis.trace import Tracer
from vit.config import ViTConfig
from vit.images import load_image
from vit.model.load import load_model
from vit.model.modules import ViTForImageClassification

DEPTH = 2
CAT = ROOT / "assets" / "cat.jpg"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    tv = random_torchvision_vit("vit_b_32", seed=3, num_layers=DEPTH)
    path = tmp_path_factory.mktemp("ckpt") / "vit_b_32.pth"
    torch.save(tv.state_dict(), path)
    return tv, path


def torchvision_twin(tv, loaded) -> VisionTransformer:
    """torchvision's ViT at ``loaded``'s patch size: tv's weights, ours resampled patch and position embeddings."""
    cfg = loaded.config
    if cfg.patch_size == tv.patch_size:
        return tv
    twin = VisionTransformer(image_size=cfg.image_size, patch_size=cfg.patch_size, num_layers=DEPTH,
                             num_heads=cfg.num_heads, hidden_dim=cfg.embed_dim, mlp_dim=cfg.mlp_dim).eval()
    state = dict(tv.state_dict())
    state["conv_proj.weight"] = loaded.module.embedding.patch_embed.proj.weight.detach().clone()
    state["encoder.pos_embedding"] = loaded.module.embedding.pos_embed.weight.detach().clone()
    twin.load_state_dict(state, strict=True)
    return twin


def torchvision_norms(tv, x: torch.Tensor) -> dict[str, list[torch.Tensor]]:
    """Per layer, each token's ||.||_2 (B, N+1) of X, MSA(LN(X)), MLP(LN(H)) and Y, from torchvision's hooks."""
    seen = {"stream": [], "attention": [], "mlp": [], "output": []}

    def norms(part):
        return lambda t: seen[part].append(t.norm(dim=-1))

    handles = []
    for layer in tv.encoder.layers:
        handles.append(layer.register_forward_pre_hook(lambda _m, args, f=norms("stream"): f(args[0])))
        handles.append(layer.self_attention.register_forward_hook(
            lambda _m, _i, out, f=norms("attention"): f(out[0])))
        handles.append(layer.mlp.register_forward_hook(lambda _m, _i, out, f=norms("mlp"): f(out)))
        handles.append(layer.register_forward_hook(lambda _m, _i, out, f=norms("output"): f(out)))
    try:
        tv(x)
    finally:
        for h in handles:
            h.remove()
    return seen


def literal_distance(attention: np.ndarray, grid: tuple[int, int], P: int) -> np.ndarray:
    """Mean attention distance by the definition, in loops: (h, T, T) -> (h,)."""
    rows, cols = grid
    N = rows * cols
    out = np.zeros(attention.shape[0])
    for head, a in enumerate(attention.astype(np.float64)):
        total = 0.0
        for i in range(N):
            row = a[1 + i, 1:]  # patch i's attention over the patches
            row = row / row.sum()
            ri, ci = divmod(i, cols)
            total += sum(row[j] * P * math.hypot(ri - j // cols, ci - j % cols) for j in range(N))
        out[head] = total / N
    return out


@pytest.fixture(scope="module", params=[None, 24], ids=["P32", "P24"])
def case(request, checkpoint):
    """(analysis, loaded, torchvision twin, x): the cat at the native patch size and at P=24."""
    tv, path = checkpoint
    loaded = load_model("vit_b_32", weights=str(path), patch_size=request.param, depth=DEPTH, device="cpu")
    a = analyze(loaded, CAT)
    x = loaded.preprocess.to_tensor(loaded.preprocess.view(load_image(CAT)))  # the pixels analyze ran on
    return a, loaded, torchvision_twin(tv, loaded), x


@torch.inference_mode()
def test_residual_and_token_norms_match_torchvision(case):
    a, loaded, tv, x = case
    assert x.shape[-1] == a.input_size[1] and a.grid == (x.shape[-2] // a.patch_size,) * 2
    ref = torchvision_norms(tv, x)
    residual = a.residual()
    assert [r.layer for r in residual] == list(range(1, DEPTH + 1))
    for layer, r in enumerate(residual):
        for part in ("stream", "attention", "mlp", "output"):
            want = float(ref[part][layer][0].mean())
            assert getattr(r, part) == pytest.approx(want, rel=1e-5, abs=1e-5), (layer + 1, part)
        assert r.attention > 0.1 and r.mlp > 0.1  # a zero branch would make the comparison vacuous
    # the stream entering block l+1 is block l's output
    assert residual[1].stream == pytest.approx(residual[0].output, rel=1e-6)
    assert a.token_norms.shape == (DEPTH, a.num_tokens)
    torch.testing.assert_close(a.token_norms, torch.stack([t[0] for t in ref["output"]]), atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(a.token_norms.mean(-1), torch.tensor([r.output for r in residual]))


@torch.inference_mode()
def test_attention_and_its_distance_match_torchvision_and_the_definition(case):
    a, loaded, tv, x = case
    _, maps = torchvision_attention(tv, x)  # L x (1, h, T, T)
    h = a.num_heads
    distance = a.mean_attention_distance()
    assert distance.shape == (DEPTH, h)
    for layer, w in enumerate(maps, 1):
        for head in (1, h):  # 1-based, as the app counts heads
            matrix = a.attention_matrix(layer, head)
            assert matrix.shape == (a.num_tokens, a.num_tokens)
            torch.testing.assert_close(matrix, w[0, head - 1], atol=1e-5, rtol=1e-4)
            torch.testing.assert_close(matrix[5], a.attention(layer, head, query=5))
        literal = literal_distance(w[0].numpy(), a.grid, a.patch_size)
        np.testing.assert_allclose(distance[layer - 1].numpy(), literal, rtol=1e-4)
    # in pixels: between 0 and the grid's diagonal
    assert (distance > 0).all() and (distance < a.patch_size * math.hypot(*a.grid)).all()


def test_mean_attention_distance_on_a_hand_made_grid():
    """A 2x2 grid at P=10: neighbours 10 px apart, diagonals 10*sqrt(2)."""
    T = 5
    eye = torch.zeros(T, T)
    eye[1:, 1:] = torch.eye(4)  # head 0: each patch attends to itself only
    others = torch.zeros(T, T)
    others[1:, 1:] = (1 - torch.eye(4)) / 3  # head 1: uniformly to the three others
    corner = torch.zeros(T, T)
    corner[:, 0] = 0.5  # head 2: half on the class token (dropped, rows renormalised), half on patch 1
    corner[:, 1] = 0.5
    weights = torch.stack([eye, others, corner])[None]  # (1, 3, T, T)
    d = mean_attention_distance(weights, rollout.patch_distances((2, 2), 10))
    assert d.shape == (1, 3)
    # head 2: patches 1..4 at (0,0), (0,1), (1,0), (1,1) all look at (0,0): 0, 10, 10, 10 sqrt(2)
    want = [0.0, 10 * (2 + math.sqrt(2)) / 3, (0 + 10 + 10 + 10 * math.sqrt(2)) / 4]
    torch.testing.assert_close(d[0], torch.tensor(want))
    with pytest.raises(ValueError, match="N\\+1"):
        mean_attention_distance(weights, rollout.patch_distances((3, 3), 10))
    # a non-square grid: patch distances in row-major order
    dist = rollout.patch_distances((2, 3), 4)
    assert dist[0, 5] == pytest.approx(4 * math.hypot(1, 2)) and dist[2, 3] == pytest.approx(4 * math.hypot(1, 2))


def test_position_similarity(case):
    a, loaded = case[:2]
    sim = vit.position_similarity(loaded)
    N = loaded.config.grid_size ** 2
    assert sim.shape == (N, N) == (a.num_patches,) * 2 and a.grid in ((7, 7), (9, 9))
    torch.testing.assert_close(sim.diagonal(), torch.ones(N))
    torch.testing.assert_close(sim, sim.T)
    pos = loaded.module.embedding.pos_embed.weight[0, 1:]  # (N, D), class token's position dropped
    direct = torch.nn.functional.cosine_similarity(pos[:, None, :], pos[None, :, :], dim=-1)
    torch.testing.assert_close(sim, direct, atol=1e-5, rtol=1e-5)


def test_patch_filters_span_the_top_principal_subspace(case):
    loaded = case[1]
    P = loaded.config.patch_size
    k = 28
    filters = vit.patch_filters(loaded, k=k)
    assert filters.shape == (k, 3, P, P)
    flat = filters.reshape(k, -1).double()
    torch.testing.assert_close(flat @ flat.T, torch.eye(k, dtype=torch.float64), atol=1e-5, rtol=0)
    w = loaded.module.embedding.patch_embed.proj.weight.reshape(768, -1).double()  # (D, 3 P^2)
    w = w - w.mean(0)
    # The covariance's top eigenvectors, through the D x D Gram matrix (cheaper than 3P^2 x 3P^2):
    # w w^T u = lam u  =>  (w^T w) (w^T u) = lam (w^T u).
    lam, u = torch.linalg.eigh(w @ w.T)  # ascending eigenvalues
    top = w.T @ u[:, -k:] / lam[-k:].sqrt()  # (3 P^2, k), orthonormal
    torch.testing.assert_close(flat.T @ flat, top @ top.T, atol=1e-4, rtol=0)  # the same projector
    # strongest first: the variance along each component does not increase
    variance = (w @ flat.T).var(0)
    assert (variance[:-1] >= variance[1:] - 1e-9).all()


def test_patch_filters_cap_k_at_the_rank():
    kernels = torch.randn(4, 3, 2, 2, generator=torch.Generator().manual_seed(0))  # 4 kernels: rank 3 once centred
    assert principal_filters(kernels, 28).shape == (3, 3, 2, 2)
    assert principal_filters(kernels, 2).shape == (2, 3, 2, 2)
    with pytest.raises(ValueError, match="at least 1"):
        principal_filters(kernels, 0)
    loaded = load_model("vit_tiny_shapes", weights="random", device="cpu")  # D = 96 < 3 P^2 = 192: rank 95
    assert vit.patch_filters(loaded, k=500).shape == (95, 3, 8, 8)


def test_tracer_keeps_only_per_layer_summaries():
    """The new numbers cost L x B x (4 + (N+1) + h) floats: no (B, N+1, D) tensor is kept per layer."""
    cfg = ViTConfig(image_size=64, patch_size=8, embed_dim=32, num_heads=4, num_layers=3, num_classes=5)
    model = ViTForImageClassification(cfg).eval()
    L, B, T, h = 3, 2, cfg.num_tokens, 4
    with torch.inference_mode(), Tracer(model) as record:
        model(torch.randn(B, 3, 64, 64))
    assert record.residual.shape == (L, B, 4)
    assert record.token_norms.shape == (L, B, T)
    assert record.attention_distance.shape == (L, B, h)
    extra = sum(t.numel() for t in (record.residual, record.token_norms, record.attention_distance))
    assert extra == L * B * (4 + T + h) < L * B * T * cfg.embed_dim / 4
    assert sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules()) == 0


def test_analysis_keeps_and_prints_the_numbers(case):
    a = case[0]
    extra = 4 * (DEPTH * 4 + DEPTH * a.num_tokens + DEPTH * a.num_heads)
    without = replace(a, residual_means=None, token_norms=None, attention_distance=None)
    assert a.nbytes - without.nbytes == extra
    data = a.to_json()
    assert [r["layer"] for r in data["residual"]] == [1, 2]
    assert set(data["residual"][0]) == {"layer", "stream", "attention", "mlp", "output"}
    assert np.array(data["mean_attention_distance"]).shape == (DEPTH, a.num_heads)
