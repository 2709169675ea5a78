"""Inside the encoder: the per-patch lens against a direct computation, and the views drawn from the numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vit
from vit.analysis import rollout
from vit.analysis.figure7 import cosine_similarity_matrix
from vit.views import base, draw, figure7, inside, plots

CAT = "assets/cat.jpg"
OPACITY, CMAP = 0.6, "cividis"


@pytest.fixture(scope="module")
def loaded():
    """ViT-B/32, random weights, 2 layers: a 7 x 7 grid of 32-px patches."""
    return vit.load_model("vit_b_32", weights="random", depth=2, device="cpu")


@pytest.fixture(scope="module")
def a(loaded):
    return vit.analyze(loaded, CAT)


@pytest.fixture(scope="module")
def shallow():
    """The tiny shapes model cut to depth 1."""
    return vit.analyze(vit.load_model("vit_tiny_shapes", weights="random", depth=1, device="cpu"), CAT)


# --------------------------------------------------------------------------- the patch lens


def test_patch_lens_is_norm_and_head_on_every_patch_token(loaded, a):
    model = loaded.module
    outputs = []
    handles = [layer.register_forward_hook(lambda _m, _i, out: outputs.append(out.detach()))
               for layer in model.encoder.layers]
    x = loaded.preprocess.to_tensor(loaded.preprocess.view(vit.images.load_image(CAT)))
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    rows, cols = a.grid
    for layer, out in enumerate(outputs, 1):
        probs = model.head.head(model.encoder.norm(out[0])).softmax(-1)  # (N+1, K)
        top, index = probs.max(-1)
        got_index, got_prob = a.patch_lens(layer)
        assert got_index.shape == got_prob.shape == (rows, cols)
        assert torch.equal(got_index.flatten(), index[1:])
        torch.testing.assert_close(got_prob.flatten(), top[1:])
        cls = a.layer_predictions[layer - 1]  # the class token's own early exit still matches
        assert cls.index == int(index[0]) and cls.prob == pytest.approx(float(top[0]), rel=1e-5)
    assert len(set(a.patch_lens(2)[0].flatten().tolist())) > 1  # random weights: patches disagree


def test_patch_lens_counts_in_nbytes(a):
    lens = a.lens_index.numel() * a.lens_index.element_size() + a.lens_prob.numel() * a.lens_prob.element_size()
    assert a.lens_index.shape == (a.depth, a.num_patches)
    without = vit.Analysis(**{**a.__dict__, "lens_index": None, "lens_prob": None})
    assert a.nbytes - without.nbytes == lens


# --------------------------------------------------------------------------- the views


def test_block_view_states_the_last_layers_numbers(a):
    v = inside.block_view(a)
    assert v.image.size == base.DEPTH_PLOT_SIZE  # the diagram over the chart, both in its size
    first = inside.block_view(a, 1)  # the drawn block carries the chosen layer's numbers
    assert first.image.size == v.image.size and first.image.tobytes() != v.image.tobytes()
    assert inside.block_view(a, 99).image.tobytes() == v.image.tobytes()  # past the depth: the last layer
    last = a.residual()[-1]
    for number in (last.stream, last.attention, last.mlp, last.output):
        assert f"{number:.1f}" in v.caption
    assert "H = X + MSA(LN(X))" in v.caption and "Y = H + MLP(LN(H))" in v.caption


def test_lens_colours_are_the_legend_classes_at_each_patch_centre(a):
    layer = 2
    v = inside.lens_view(a, layer, size=base.DISPLAY_SIZE)
    indices = a.patch_lens(layer)[0].numpy()
    top = inside.lens_classes(indices)
    counts = dict(zip(*np.unique(indices, return_counts=True)))
    assert [n for _, n in top] == sorted((n for n in counts.values()), reverse=True)[:len(top)]
    w, h = base.display_size(a)
    assert v.image.width == w and v.image.height > h  # the legend is drawn under the picture
    classes = inside.lens_palette(a)
    expected = inside.lens_colours(indices, classes)
    final = a.topk[0].index
    assert classes[0] == final  # the final answer has the palette's first colour
    assert {tuple(expected[i]) for i in np.ndindex(indices.shape) if indices[i] == final} <= {draw.PALETTE[0]}
    px = np.asarray(v.image, dtype=float)
    photo = np.asarray(draw._display(a.image, base.DISPLAY_SIZE), dtype=float)
    rows, cols = a.grid
    for r in range(rows):
        for c in range(cols):
            y, x = int((r + 0.5) * h / rows), int((c + 0.5) * w / cols)
            drawn = 0.3 * photo[y, x] + 0.7 * expected[r, c]  # the photo shows through 30 %
            assert np.abs(px[y, x] - drawn).max() <= 1
    final = a.topk[0]
    assert f"{int((indices == final.index).sum())} of {a.num_patches} patches" in v.caption
    assert f"layer {layer}" in v.caption


def test_a_class_keeps_its_colour_at_every_layer():
    """The classroom review: "circle" was orange at layer 2 and another colour at layer 4, its colour following its
    rank among the patches' votes. It is the final prediction's rank that picks the colour, the same at every layer."""
    shapes = vit.analyze(vit.load_model("vit_tiny_shapes"), "assets/shapes-heart_and_circle.png")
    rows, cols = shapes.grid
    colours: dict[int, set] = {}
    for layer in range(1, shapes.depth + 1):
        px = np.asarray(inside.lens_view(shapes, layer, size=160, opacity=1.0).image)  # the colours alone
        indices = shapes.patch_lens(layer)[0].numpy()
        for r, c in np.ndindex(rows, cols):
            colours.setdefault(int(indices[r, c]), set()).add(tuple(px[int((r + 0.5) * 160 / rows),
                                                                       int((c + 0.5) * 160 / cols)]))
    assert len(colours) > 2 and all(len(c) == 1 for c in colours.values()), colours
    coloured = [next(iter(c)) for c in colours.values() if next(iter(c)) != draw.OTHER]
    assert len(set(coloured)) == len(coloured)  # one colour per class
    assert colours[shapes.topk[0].index] == {draw.PALETTE[0]}  # the final answer's: the palette's first


def test_token_norm_view_scale_is_the_patch_norms_range(a):
    v = inside.token_norm_view(a, 1, OPACITY, CMAP)
    patches = a.token_norms[0, 1:]
    assert v.scale == (float(patches.min()), float(patches.max()))
    assert f"{float(a.token_norms[0, 0]):.1f}" in v.caption and "Darcet" in v.caption
    assert v.image.width == base.display_size(a)[0]


def test_causal_zeroes_above_the_diagonal_and_renormalises_rows():
    m = torch.rand(6, 6).softmax(-1)
    c = rollout.causal(m)
    assert torch.equal(torch.triu(c, 1), torch.zeros(6, 6))
    torch.testing.assert_close(c.sum(-1), torch.ones(6))
    torch.testing.assert_close(c[3, :4], m[3, :4] / m[3, :4].sum())
    assert c[0, 0] == 1 and torch.equal(m, m.clone())  # input untouched


def test_downsampling_keeps_the_class_row_and_column():
    m = torch.rand(1 + 10, 1 + 10)
    d = rollout.downsample_matrix(m, 4)  # 10 patches -> 3 blocks (the last one short)
    assert d.shape == (4, 4) and d[0, 0] == m[0, 0]
    torch.testing.assert_close(d[0, 1:], torch.stack([m[0, 1:5].max(), m[0, 5:9].max(), m[0, 9:].max()]))
    torch.testing.assert_close(d[1:, 0], torch.stack([m[1:5, 0].max(), m[5:9, 0].max(), m[9:, 0].max()]))
    assert d[3, 3] == m[9:, 9:].max()
    assert torch.equal(rollout.downsample_matrix(m, 1), m)


def test_matrix_view_draws_both_halves_on_the_data_scale(a):
    v = inside.matrix_view(a, 2, 3)
    full = a.attention_matrix(2, 3)
    hi = float(full.max())  # the encoder's largest weight tops the log scale, three decades above its floor
    assert v.scale == pytest.approx((hi / 1000, hi))
    assert f"{a.num_tokens}×{a.num_tokens}" in v.caption and "11.4.2" in v.caption
    assert abs(v.image.width - base.DISPLAY_SIZE) <= 2
    assert inside.matrix_factor(3137, 314) == 10 and inside.matrix_factor(50, 314) == 1


def test_filters_view_has_one_tile_per_filter():
    filters = torch.randn(28, 3, 4, 4)
    tiles = figure7.filter_tiles(filters)
    assert len(tiles) == 28 and all(t.min() == 0 and t.max() == 255 for t in tiles)  # each on its own range
    v = figure7.filters_view(filters)
    tile = (base.DISPLAY_SIZE - 4) // 7 - 4
    assert v.image.size == (7 * (tile + 4) + 4, 4 * (tile + 4) + 4)
    px = np.asarray(v.image)
    for i in (0, 27):
        x, y = draw.tile_origin(i, 7, tile)
        assert tuple(px[y + 1, x + 1]) == tuple(tiles[i][0, 0])  # tile i's top-left filter pixel
    assert "first 28 principal components" in v.caption and "own range" in v.caption


def test_position_view_one_map_per_position_on_the_data_scale():
    rows, cols = 3, 4
    pos = torch.randn(rows * cols, 16)
    sim = cosine_similarity_matrix(pos)
    v = figure7.position_view(sim, (rows, cols))
    assert v.scale == (float(sim.min()), float(sim.max()))
    assert figure7.position_step((56, 56)) == 4 and figure7.position_step((7, 7)) == 1
    big = figure7.position_view(torch.eye(30 * 30), (30, 30))
    assert "every 3rd row and column" in big.caption


def test_distance_view_one_dot_per_head_per_layer(a):
    xs, ys = figure7.distance_points(a)
    assert len(xs) == len(ys) == a.depth * a.num_heads
    assert ys == a.mean_attention_distance().flatten().tolist()
    v = figure7.distance_view(a)
    assert v.image.size == base.DEPTH_PLOT_SIZE and f"h = {a.num_heads}" in v.caption


def test_every_inside_view_works_at_depth_one(shallow):
    loaded = vit.load_model("vit_tiny_shapes", weights="random", depth=1, device="cpu")
    for v in (inside.block_view(shallow), inside.lens_view(shallow, 1),
              inside.token_norm_view(shallow, 1, OPACITY, CMAP), inside.matrix_view(shallow, 1, 1),
              figure7.distance_view(shallow),
              figure7.filters_view(vit.patch_filters(loaded)),
              figure7.position_view(vit.position_similarity(loaded), shallow.grid)):
        assert v.image.width > 0 and v.caption


# --------------------------------------------------------------------------- the lesson


def test_every_lesson_step_names_a_view_and_fills_in_the_real_shapes(a):
    from vit.lesson import LESSON, LESSON_VIEWS, lesson_text

    assert 7 <= len(LESSON) <= 10
    assert {s.section[:6] for s in LESSON} >= {"11.4.1", "11.4.2", "11.4.3", "11.4.4", "11.4.5", "11.4.6", "11.4.7"}
    texts = []
    for step in LESSON:
        assert step.view in LESSON_VIEWS
        texts.append(lesson_text(step, a))
        assert step.section in texts[-1] and step.chapter in texts[-1]
    text = "\n".join(texts)
    D = a.queries[0].shape[-1]
    assert f"(1, {a.num_tokens}, {D})" in text  # (1, 50, 768)
    for fact in (f"N = {a.num_patches}", f"D = {D}", f"h = {a.num_heads}", f"L = {a.depth}", a.topk[0].label,
                 f"{a.topk[0].prob:.1%}", f"(1, {a.probs.shape[0]})", f"{a.residual()[-1].output:.1f}"):
        assert fact in text


def test_block_bars_are_drawn_in_the_series_colours(a):
    px = {tuple(p) for p in np.asarray(inside.block_view(a).image).reshape(-1, 3)}
    assert set(plots.SERIES_COLOURS) <= px


def test_matrix_view_on_a_fine_grid_is_block_maxed_to_the_display():
    fine = vit.analyze(vit.load_model("vit_b_32", weights="random", patch_size=8, depth=1, device="cpu"), CAT)
    T = fine.num_tokens  # 785
    factor = inside.matrix_factor(T, (base.DISPLAY_SIZE - 12) // 2)
    assert factor == 3
    v = inside.matrix_view(fine, 1, 1)
    n = 1 + -(-(T - 1) // factor)
    assert f"Drawn at {n}×{n}" in v.caption and "block max" in v.caption
    full = fine.attention_matrix(1, 1)
    hi = float(rollout.downsample_matrix(full, factor).max())
    assert v.scale == pytest.approx((hi / 1000, hi))
    assert abs(v.image.width - base.DISPLAY_SIZE) <= 2


def test_axes_end_on_round_numbers():
    assert [plots.nice_ceiling(v) for v in (45.25, 15.4, 1.0, 0.03, 101, 0)] == [50, 20, 1, 0.05, 200, 1]


def test_matrix_view_shows_every_token_seeing_all_and_the_masked_triangle(a):
    """Issue 20: on a linear 0-1 scale the encoder's half was black (mean luminance 2/255); on the log scale it is
    bright, and the triangle the causal mask removes has its own colour, the legend saying so."""
    from vit.views.inside import MASKED

    v = inside.matrix_view(a, a.depth, 1)
    sheet = np.asarray(v.image.convert("RGB")).astype(float)
    panel = (base.DISPLAY_SIZE - 12) // 2
    top = draw.BAR_FONT + 12 + 4  # below the panel titles and the class token's outlined row
    left = sheet[top:top + panel - 8, 4:panel - 4]
    right = sheet[top:top + panel - 8, panel + 12 + 4:2 * panel + 12 - 4]
    assert left.mean() > 60, f"the encoder's half is dark: mean {left.mean():.0f}/255"
    upper = right[: right.shape[0] // 4, -right.shape[1] // 4:]  # the top-right corner: j > i, masked
    assert (np.abs(upper - np.array(MASKED)).max(axis=-1) == 0).mean() > 0.95
    lower = right[-right.shape[0] // 4:, : right.shape[1] // 4]  # the bottom-left corner: j < i, kept
    assert (np.abs(lower - np.array(MASKED)).max(axis=-1) == 0).mean() < 0.05
    assert "log scale" in v.legend and "blue: removed by the mask" in v.legend


def test_the_position_caption_says_what_this_model_learned():
    """Issue 20: the caption promised rows and columns the shapes model does not show; it now reads the model's own
    similarities. A synthetic grid whose embeddings are its rows and columns is told apart from one that knows only
    its border, and from noise."""
    g = 8
    r, c = np.divmod(np.arange(g * g), g)
    rows_cols = np.concatenate([np.eye(g)[r], np.eye(g)[c]], axis=1)  # one-hot row and column
    rng = np.random.default_rng(0)
    noise = rng.normal(size=(g * g, 64))
    edge = ((r == 0) | (r == g - 1) | (c == 0) | (c == g - 1)).astype(float)[:, None]
    border = np.concatenate([8 * edge, noise], axis=1)  # border positions alike, the rest unrelated
    for emb, words in ((rows_cols, "tiles light up their own row and column"),
                       (border, "tiles light up the image's border"), (noise, "show little 2-D structure")):
        unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)
        v = figure7.position_view(unit @ unit.T, (g, g))
        assert words in v.caption, v.caption
        assert ("learned the 2-D grid" in v.caption) == (emb is rows_cols)


def test_the_lens_caption_says_how_this_model_was_trained(a):
    """Issue 20: the shapes model's head was trained on its patch tokens too (token labelling); ImageNet's was not."""
    shapes = vit.analyze(vit.load_model("vit_tiny_shapes", device="cpu"), CAT)
    assert "token labelling" in inside.lens_view(shapes, shapes.depth).caption
    assert "class token of the last layer only" in inside.lens_view(a, a.depth).caption


def test_the_block_in_code_carries_this_images_shapes_and_norms(a):
    """Issue 20: 11.4.4's step shows the chapter's forward of ViTEncoderLayer beside this image's numbers."""
    from vit.views.inside import block_code_lines

    layer = 2
    r = a.residual()[layer - 1]
    D, T = int(a.queries[0].shape[-1]), a.num_tokens
    lines = block_code_lines(a, layer)
    code = [c.strip() for c, _ in lines]
    assert "attn_input = self.norm1(x)" in code and "x = x + self.mlp(self.norm2(x))" in code
    notes = " ".join(n for _, n in lines)
    for fact in (f"(1, {T}, {D})", f"(1, {T}, {4 * D})", f"(1, {a.num_heads}, {T}, {T})", f"{r.stream:.1f}",
                 f"{r.attention:.1f}", f"{r.mlp:.1f}", f"{r.output:.1f}"):
        assert fact in notes
    v = inside.block_code_view(a, layer)
    assert f"layer {layer}" in v.caption and abs(v.image.width - base.DISPLAY_SIZE) <= 2
