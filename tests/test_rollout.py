"""Rollout and attention views against direct reference computations."""

from __future__ import annotations

import pytest
import reference
import torch

from vit.analysis import rollout


def random_attention(L=4, h=3, T=10, seed=0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(L, h, T, T, generator=g).softmax(-1)  # (L, h, T, T)


def reference_rollout(weights: torch.Tensor, fusion="mean", discard=0.0) -> torch.Tensor:
    """Abnar & Zuidema written out plainly with loops, for comparison."""
    L, h, T, _ = weights.shape
    result = torch.eye(T, dtype=torch.float64)
    for layer in range(L):
        w = weights[layer].double()
        fused = {"mean": w.mean(0), "max": w.max(0).values, "min": w.min(0).values}[fusion]
        a = fused.clone()
        drop = int(discard * (T - 1))
        for i in range(T):
            order = sorted(range(1, T), key=lambda j: a[i, j].item())
            for j in order[:drop]:
                a[i, j] = 0.0
        a = a + torch.eye(T, dtype=torch.float64)
        for i in range(T):
            a[i] = a[i] / a[i].sum()
        result = a @ result
    return result


@pytest.mark.parametrize("fusion", rollout.HEAD_FUSIONS)
@pytest.mark.parametrize("discard", [0.0, 0.3, 0.9])
def test_rollout_equals_direct_product(fusion, discard):
    w = random_attention()
    fused = rollout.fuse_heads(w.double(), fusion)
    ours = reference.attention_rollout(fused, discard)
    ref = reference_rollout(w, fusion, discard)
    torch.testing.assert_close(ours, ref)
    for layer in range(1, 5):
        partial = reference_rollout(w[:layer], fusion, discard)
        for query in (0, 3):
            torch.testing.assert_close(reference.attention_rollout(fused[:layer], discard)[query], partial[query])


def test_rows_sum_to_one():
    w = random_attention(L=6, T=17)
    for fusion in rollout.HEAD_FUSIONS:
        for discard in (0.0, 0.5, 0.99):
            r = reference.attention_rollout(rollout.fuse_heads(w, fusion), discard)
            torch.testing.assert_close(r.sum(-1), torch.ones(17))
            assert (r >= 0).all()


def test_discard_never_drops_class_column():
    a = torch.full((5, 5), 0.01)
    a[:, 1:] = torch.arange(1, 5).float()  # the class column is the smallest everywhere
    out = reference.discard_lowest(a, 0.99)
    assert torch.equal(out[:, 0], a[:, 0])
    assert (out[:, 1:4] == 0).all() and (out[:, 4] == 4).all()
    assert torch.equal(a[:, 1], torch.ones(5))  # input untouched


def test_discard_is_per_row():
    a = torch.tensor([[0.0, 1.0, 2.0, 3.0], [0.0, 3.0, 2.0, 1.0]])
    out = reference.discard_lowest(a, 0.34)  # one of three patch columns per row
    assert out.tolist() == [[0.0, 0.0, 2.0, 3.0], [0.0, 3.0, 2.0, 0.0]]


def test_fuse_heads_modes_and_error():
    w = torch.tensor([[[1.0, 3.0]], [[3.0, 1.0]]])  # (h=2, 1, 2)
    assert rollout.fuse_heads(w, "mean").tolist() == [[2.0, 2.0]]
    assert rollout.fuse_heads(w, "max").tolist() == [[3.0, 3.0]]
    assert rollout.fuse_heads(w, "min").tolist() == [[1.0, 1.0]]
    with pytest.raises(ValueError, match="head_fusion"):
        rollout.fuse_heads(w, "median")


def test_non_square_grid():
    rows, cols = 3, 5
    T = rows * cols + 1
    w = random_attention(L=3, T=T)
    grid = rollout.patch_grid(rollout.rollout_rows(rollout.fuse_heads(w))[-1], (rows, cols))  # after every layer
    assert grid.shape == (3, 5)
    full = reference_rollout(w)[0, 1:].reshape(3, 5)
    torch.testing.assert_close(grid.double(), full, atol=1e-6, rtol=1e-5)
    # row-major: patch (r, c) is token 1 + r*cols + c
    row = torch.arange(T).float()
    assert rollout.patch_grid(row, (rows, cols))[2, 1] == 1 + 2 * cols + 1
    with pytest.raises(ValueError, match="3x4 grid"):
        rollout.patch_grid(row, (3, 4))


def test_attention_from_qk_matches_softmax():
    torch.manual_seed(0)
    q, k = torch.randn(7, 12), torch.randn(7, 12)
    full = rollout.attention_from_qk(q, k, num_heads=3)
    assert full.shape == (3, 7, 7)
    qh, kh = q.reshape(7, 3, 4).transpose(0, 1), k.reshape(7, 3, 4).transpose(0, 1)
    ref = torch.softmax(qh @ kh.transpose(1, 2) / 2.0, -1)
    torch.testing.assert_close(full, ref)
    torch.testing.assert_close(rollout.attention_from_qk(q, k, 3, query=4), ref[:, 4])


@pytest.mark.parametrize("fusion", rollout.HEAD_FUSIONS)
def test_the_last_depths_row_alone_equals_the_full_product(fusion):
    w = random_attention(L=5, T=13)
    fused = rollout.fuse_heads(w.double(), fusion)
    for upto in range(1, 6):
        for query in (0, 7):
            torch.testing.assert_close(rollout.rollout_rows(fused[:upto], query, every_depth=False)[0],
                                       reference.attention_rollout(fused[:upto])[query])


@pytest.mark.parametrize("discard", [0.0, 0.4, 0.9])
def test_rollout_rows_of_every_depth_equal_the_full_product(discard):
    w = random_attention(L=5, T=13)
    fused = rollout.fuse_heads(w.double(), "max")
    for query in (0, 6):
        rows = rollout.rollout_rows(fused, query, discard)
        assert rows.shape == (5, 13)
        for upto in range(1, 6):
            torch.testing.assert_close(rows[upto - 1], reference.attention_rollout(fused[:upto], discard)[query])
            torch.testing.assert_close(rows[upto - 1], reference_rollout(w[:upto], "max", discard)[query])


def test_rollout_rows_in_chunks_and_from_float16(monkeypatch):
    """Chunks of rows give the same rows; float16 maps are computed in float32 and left untouched."""
    w = random_attention(L=3, T=21)
    fused = rollout.fuse_heads(w, "mean")
    whole = rollout.rollout_rows(fused, 0, 0.5)
    monkeypatch.setattr(rollout, "DISCARD_CHUNK", 4)
    torch.testing.assert_close(rollout.rollout_rows(fused, 0, 0.5), whole)
    half = fused.half()
    kept = half.clone()
    rows = rollout.rollout_rows(half, 0, 0.5)
    assert rows.dtype == torch.float32 and torch.equal(half, kept)
    torch.testing.assert_close(rows, rollout.rollout_rows(half.float(), 0, 0.5))


def test_discard_with_ties_shares_the_drop_alike():
    """Entries equal to the largest one dropped share its drop: column order does not matter."""
    a = torch.tensor([[0.5, 0.2, 0.1, 0.2, 0.2, 0.3]], dtype=torch.float64)  # count = int(0.6 * 5) = 3
    out = reference.discard_lowest(a, 0.6)  # 0.1 goes; two of the three 0.2s go, shared by the three
    torch.testing.assert_close(out, torch.tensor([[0.5, 0.2 / 3, 0.0, 0.2 / 3, 0.2 / 3, 0.3]], dtype=torch.float64))
    quantised = (torch.rand(2, 9, 9, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 4).round() / 4
    for ratio in (0.2, 0.5, 0.9):
        count = int(ratio * 8)
        out = reference.discard_lowest(quantised, ratio)
        lowest = quantised[..., 1:].sort(dim=-1).values[..., :count].sum(-1)  # what an exact discard drops
        torch.testing.assert_close((quantised - out).sum(-1), lowest)
        assert torch.equal(out[..., 0], quantised[..., 0]) and (out >= 0).all()
        order = torch.randperm(8, generator=torch.Generator().manual_seed(2)) + 1  # the patch columns shuffled
        shuffled = torch.cat([quantised[..., :1], quantised[..., order]], dim=-1)
        again = reference.discard_lowest(shuffled, ratio)
        assert torch.equal(again[..., 1:], out[..., order])  # the same drop, whatever the column order


@pytest.mark.parametrize("ratio", [0.0, 0.5, 0.9])
def test_the_threshold_on_the_cpu_is_torchs_kthvalue(ratio):
    """The one discard finds each row's threshold with numpy on the CPU (on a float16 map's bits) and with
    torch.kthvalue elsewhere: the same thresholds, float32 and float16 maps, ties included, so the same discard."""
    w = random_attention(L=3, h=4, T=29, seed=3)
    quantised = ((w.mean(1) * 64).round() / 64).float()  # many ties in every row
    count = max(1, int(ratio * (29 - 2)))
    for maps in (rollout.fuse_heads(w, "max"), rollout.fuse_heads(w, "mean").half(), quantised):
        for layer in maps:
            patches = layer[:, 2:]
            torch.testing.assert_close(rollout._kth_smallest(patches, count),
                                       patches.kthvalue(count, dim=-1, keepdim=True).values, atol=0, rtol=0)


def test_a_layer_in_chunks_equals_the_whole_map_at_once(monkeypatch):
    """times_layer's chunks and thread pool give the product of the rows with the whole discarded map."""
    w = random_attention(L=2, h=4, T=29, seed=5)
    rows = torch.rand(5, 29, generator=torch.Generator().manual_seed(6))
    monkeypatch.setattr(rollout, "DISCARD_CHUNK", 4)
    for layer in rollout.fuse_heads(w, "max"):
        a = reference.rollout_factors(layer, 0.5, num_prefix=2)  # rownorm(discard(F) + I), the whole map
        torch.testing.assert_close(rollout.times_layer(rows, layer, int(0.5 * 27), num_prefix=2), rows @ a)
