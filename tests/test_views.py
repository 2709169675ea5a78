"""vit.views: every picture corresponds to the numbers its caption and colour bar name."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import ROOT
from PIL import Image

import vit
from vit.views import attention, base, depth, draw, patches, why
from vit.views.registry import PICTURES

CAT = "assets/cat.jpg"
OPACITY, CMAP = 0.6, "cividis"


@pytest.fixture(scope="module")
def a():
    """ViT-B/32, random weights, 2 layers: a 7 x 7 grid of 32-px patches."""
    model = vit.load_model("vit_b_32", weights="random", depth=2, device="cpu")
    return vit.analyze(model, CAT)


@pytest.fixture(scope="module")
def fine():
    """ViT-B/32 at P = 4 and depth 1: a 56 x 56 grid (11-px cells at 640 px), 3,137 tokens."""
    model = vit.load_model("vit_b_32", weights="random", patch_size=4, depth=1, device="cpu")
    return vit.analyze(model, CAT)


@pytest.fixture(scope="module")
def shapes_model():
    return vit.load_model("vit_tiny_shapes", weights="random", device="cpu")


def bar_ends(view: base.View, picture_height: int) -> tuple[np.ndarray, np.ndarray]:
    """The colour bar's first and last pixel colours, read from the drawn picture."""
    x0, y0, x1, y1 = draw.colorbar_rect(view.image.width)
    px = np.asarray(view.image)
    y = picture_height + (y0 + y1) // 2
    return px[y, x0], px[y, x1 - 1]


def numbers(cells: list[str]) -> int:
    return sum(int(c.replace(",", "")) for c in cells if re.fullmatch(r"[\d,]+", c))


# --------------------------------------------------------------------------- patches and clicks


def test_token_index_is_row_major_after_the_class_token():
    assert base.token_index((0, 0), (7, 7)) == 1
    assert base.token_index((2, 0), (7, 7)) == 15
    assert base.token_index((55, 55), (56, 56)) == 3136
    assert base.token_index((1, 2), (3, 5)) == 1 + 5 + 2  # a non-square grid: cols count


def test_query_cell_clamps_to_the_grid():
    assert base.query_cell((0.0, 0.0), (7, 7)) == (0, 0)
    assert base.query_cell((0.999, 0.5), (7, 7)) == (3, 6)
    assert base.query_cell((1.5, -2), (7, 7)) == (0, 6)  # clamped: x past the right, y above the top


def test_display_size_and_picture_box(a, fine):
    assert base.DISPLAY_SIZE == 640
    assert base.display_size(a) == (640, 640) and base.display_size(a, 300) == (300, 300)
    assert base.picture_box(a) == (0, 0, 640, 640)  # numbers in the cells: the picture is the image
    x0, y0, w, h = base.picture_box(fine)
    assert x0 > 0 and y0 > 0 and (w, h) == (640, 640)
    assert patches.grid_view(fine, (0.5, 0.5)).image.size == (x0 + w, y0 + h)


def test_a_click_on_the_drawn_grid_selects_the_patch_under_it(fine):
    """Through the margins: the centre of patch (r, c) on the picture maps back to (r, c)."""
    x0, y0, w, h = base.picture_box(fine)
    rows, cols = fine.grid
    for r, c in ((0, 0), (10, 41), (55, 55), (28, 3)):
        x, y = x0 + (c + 0.5) * w / cols, y0 + (r + 0.5) * h / rows
        assert base.query_cell(((x - x0) / w, (y - y0) / h), fine.grid) == (r, c)


# --------------------------------------------------------------------------- the patch grid


def test_grid_view_caption_names_the_grid_and_the_outlined_token(a):
    v = patches.grid_view(a, (0.5, 0.5))
    assert v.image.size == (640, 640)
    for words in ("7×7 grid", "N = 49 patch tokens", "N+1 = 50", "patch (row 3, col 3) = token 25",
                  "1 + r·7 + c"):
        assert words in v.caption, words
    assert v.scale is None and v.note == "" and "7x7" in v.title


def test_fine_grid_numbers_its_margins_and_rings_the_query(fine):
    v = patches.grid_view(fine, (0.3, 0.6))
    x0, y0, w, h = base.picture_box(fine)
    px = np.asarray(v.image).astype(int)
    left, top = px[y0:, :x0 - 18], px[:y0 - 16, x0:]  # beside the arrow strips
    assert (left.sum(-1) < 200).any() and (top.sum(-1) < 200).any()  # dark numbers on the white margins
    assert "reading order: row by row, left to right" in v.caption and "every 2nd row" in v.caption
    layout = draw.grid_layout(fine.grid, (w, h))
    assert not layout.in_cells and layout.font_size >= 14
    r, c = base.query_cell((0.3, 0.6), fine.grid)
    assert f"token {base.token_index((r, c), fine.grid)}" in v.caption
    cell = w / 56
    cx, cy = x0 + (c + 0.5) * cell, y0 + (r + 0.5) * cell
    pink = np.abs(px - np.array(draw.MARK)).max(-1) <= 10
    ys, xs = np.nonzero(pink)
    far = np.hypot(xs - cx, ys - cy)
    assert far.max() > 2 * cell  # a ring well outside the 11-px cell, not only its outline
    assert far.max() < 5 * cell


# --------------------------------------------------------------------------- heatmaps


def test_rollout_view_scale_is_the_maps_range_and_the_bar_its_colormap(a):
    heat = a.rollout(2)
    v = attention.rollout_view(a, 2, OPACITY, CMAP)
    assert v.scale == (float(heat.min()), float(heat.max()))
    lut = draw.colormap_lut(CMAP)
    left, right = bar_ends(v, 640)
    assert tuple(left) == tuple(lut[0]) and tuple(right) == tuple(lut[255])
    assert "layers 1–2" in v.caption and "**mean**" in v.caption
    assert f"{v.scale[1]:.3g}" in v.legend and "brighter = more attention" in v.legend
    assert v.title == "Attention rollout, layers 1-2"
    picture = v.image.crop((0, 0, 640, 640))
    assert picture.tobytes() == draw.overlay(a.image, heat.numpy(), OPACITY, CMAP, 640).tobytes()
    guessed = attention.rollout_view(a, 2, OPACITY, CMAP, mark=(3, 1))  # the lesson's reveal: a class's guess outlined
    expected = draw.overlay(a.image, heat.numpy(), OPACITY, CMAP, 640, mark=(3, 1))
    assert guessed.image.crop((0, 0, 640, 640)).tobytes() == expected.tobytes() != picture.tobytes()


def test_query_view_draws_that_tokens_row_at_that_layer_and_head(a):
    query = (0.5 / 7, 2.5 / 7)  # patch (2, 0): token 15
    v = patches.query_view(a, query, 2, 3, OPACITY, "magma")
    heat = a.attention_map(2, 3, 15).numpy()
    assert v.scale == (float(heat.min()), float(heat.max()))
    expected = draw.overlay(a.image, heat, OPACITY, "magma", 640, mark=(2, 0))
    assert v.image.crop((0, 0, 640, 640)).tobytes() == expected.tobytes()
    assert "token 15" in v.caption and "layer 2, head 3" in v.caption and "(row 2, col 0)" in v.caption
    left, right = bar_ends(v, 640)
    lut = draw.colormap_lut("magma")
    assert tuple(left) == tuple(lut[0]) and tuple(right) == tuple(lut[255])
    share = 1 - heat.sum()
    assert f"{share:.0%} goes to the class token" in v.caption


def test_views_are_drawn_at_the_size_asked(a):
    assert attention.rollout_view(a, 1, OPACITY, CMAP, size=800).image.width == 800
    assert patches.query_view(a, (0.5, 0.5), 1, 1, OPACITY, CMAP, size=480).image.width == 480
    assert patches.grid_view(a, (0.5, 0.5), size=480).image.size == (480, 480)


def test_heads_and_layers_sheets(a):
    heads = attention.heads_view(a, 2, OPACITY, CMAP)
    assert base.DISPLAY_SIZE <= heads.image.width <= 900
    assert "Layer 2" in heads.caption and "h = 12" in heads.caption and heads.scale is None
    assert "own max" in heads.legend
    lut = draw.colormap_lut(CMAP)
    sheet_h = draw.small_multiples(a.image, a.head_maps(2).numpy(), [""] * 12, 4, base.TILE_SIZE).height
    left, right = bar_ends(heads, sheet_h)
    assert tuple(left) == tuple(lut[0]) and tuple(right) == tuple(lut[255])
    layers = attention.layers_view(a, OPACITY, CMAP)
    assert "L = 2" in layers.caption and layers.title == "Class token attention, layers 1-2"


def test_sheet_tiles_run_from_zero_to_their_own_max():
    """A head attending evenly stays evenly coloured: its tile is the colormap's top colour throughout."""
    image = np.full((32, 32, 3), 0, dtype=np.uint8)
    maps = np.stack([np.full((2, 2), 0.25), np.array([[0.0, 0.1], [0.2, 0.7]])])
    sheet = np.asarray(draw.small_multiples(image, maps, ["a", "b"], columns=2, tile=40, alpha=1.0,
                                            from_zero=True))
    lut = draw.colormap_lut("cividis")
    gap, label = 6, 24
    assert (np.abs(sheet[gap + label + 5, gap + 5].astype(int) - lut[255]).max()) <= 1  # uniform: top colour
    second = sheet[gap + label + 5, gap + 40 + gap + 5]  # 0.0 of a tile whose max is 0.7
    assert np.abs(second.astype(int) - lut[0]).max() <= 1


def test_depth_view(a):
    v = depth.depth_view(a)
    assert v.image.size == base.DEPTH_PLOT_SIZE
    assert a.topk[0].label in v.caption and "L = 2" in v.caption and "blue" in v.legend


def test_every_view_works_at_depth_one(fine):
    drawn = [patches.grid_view(fine, (0.5, 0.5)), attention.rollout_view(fine, 1, OPACITY, CMAP),
             patches.query_view(fine, (0.5, 0.5), 1, 12, OPACITY, CMAP), attention.heads_view(fine, 1, OPACITY, CMAP),
             attention.layers_view(fine, OPACITY, CMAP), depth.depth_view(fine)]
    assert all(isinstance(v.image, Image.Image) and v.caption and v.title for v in drawn)
    assert "L = 1" in drawn[4].caption and "layers 1–1" in drawn[1].caption


# --------------------------------------------------------------------------- tables


def test_stage_rows_count_each_parameter_once_and_total(a):
    rows = patches.stage_rows(a)
    assert all(len(r) == len(patches.STAGE_HEADERS) for r in rows)
    total = rows[-1]
    assert total[0] == "total" and total[-1] == f"{a.params:,}"
    model = vit.load_model("vit_b_32", weights="random", depth=2, device="cpu")
    assert a.params == sum(p.numel() for p in model.parameters())
    assert numbers([r[-1] for r in rows[:-1]]) == a.params  # the column sums to the total
    by_name = {r[0]: r for r in rows}
    assert by_name["patch tokens"][-1] == "(counted above)"
    assert by_name["class token"][1] == "head" and by_name["image"][-1] == "–"
    assert by_name["layer 1 output"][1] == "encoder.layers.0"


def test_stage_rows_fold_the_middle_layers(shapes_model):
    a = vit.analyze(shapes_model, "assets/shapes-star.png")  # 4 layers
    rows = patches.stage_rows(a)
    names = [r[0] for r in rows]
    assert "layers 2–3 (same shapes, ×2)" in names and "layer 2 output" not in names
    assert "layer 1 output" in names and "layer 4 output" in names
    folded = rows[names.index("layers 2–3 (same shapes, ×2)")]
    assert folded[1] == "encoder.layers.1–2"
    assert numbers([r[-1] for r in rows[:-1]]) == a.params == sum(p.numel() for p in shapes_model.parameters())


def test_top_k_past_the_kept_predictions(a):
    kept = patches.top_k(a, 3)
    assert list(kept) == [p.label for p in a.topk[:3]]
    many = patches.top_k(a, 12)
    assert len(many) == 12 and list(many)[:5] == [p.label for p in a.topk]
    values = list(many.values())
    assert values == sorted(values, reverse=True)
    assert values[0] == pytest.approx(float(a.probs.max()))


# --------------------------------------------------------------------------- honest about the input


def test_fit_note_says_when_the_model_sees_little_of_the_upload(shapes_model):
    strip = Image.new("RGB", (2000, 200), "white")
    tiny = Image.new("RGB", (8, 8), "gray")
    photo = Image.open(CAT)  # 451 x 300
    cropped = vit.analyze(shapes_model, strip)
    assert cropped.source_size == (2000, 200)
    note = base.fit_note(cropped)
    assert "centre square of this 2000×200 image, about 10%" in note
    enlarged = vit.analyze(shapes_model, tiny)
    assert "This 8×8 image was enlarged 8× to 64×64" in base.fit_note(enlarged)  # the shapes model sees 64 px
    assert base.fit_note(vit.analyze(shapes_model, photo)) == ""
    assert patches.grid_view(cropped, (0.5, 0.5)).note == note
    assert attention.rollout_view(cropped, 1, OPACITY, CMAP).note == note
    assert patches.query_view(cropped, (0.5, 0.5), 1, 1, OPACITY, CMAP).note == note


def test_fit_note_at_imagenet_size(a):
    from dataclasses import replace

    assert base.fit_note(a) == ""  # cat.jpg, 451 x 300: a normal photo
    assert "enlarged 28× to 224×224" in base.fit_note(replace(a, source_size=(8, 8)))
    assert base.fit_note(replace(a, source_size=None)) == ""
    assert base.fit_note(replace(a, source_size=(90, 100))) == (
        "This 90×100 image was enlarged 2.5× to 224×224: the model sees blurred blocks, not detail.")
    assert base.fit_note(replace(a, source_size=(1920, 1080))).startswith("The model sees only the centre square")
    assert base.fit_note(replace(a, source_size=(1600, 1200))) == ""  # 4:3 keeps 75%


# --------------------------------------------------------------------------- to keep


def test_captioned_is_one_picture_with_the_words(a):
    v = attention.rollout_view(a, 2, OPACITY, CMAP)
    kept = base.captioned(v)
    assert kept.width == v.image.width and kept.height > v.image.height + 120
    wide = base.captioned(v, width=900)
    assert wide.width == 900 and wide.height < kept.height  # wider lines, fewer of them
    assert base.plain("**bold** and `code`") == "bold and code"


def test_wrapped_text_fits_its_width():
    f = draw.font(18, bold=False)
    lines = draw.wrap_text("a " * 50 + "pneumonoultramicroscopicsilicovolcanoconiosis " * 3, f, 200)
    assert all(f.getlength(line) <= 200 for line in lines) and len(lines) > 3


def test_what_is_explains_every_view():
    assert PICTURES
    for picture in PICTURES.values():
        assert 2 <= picture.what_is["en"].count(". ") + 1 <= 5, picture.name


def test_explanation_and_curve_views_carry_their_numbers():
    loaded = vit.load_model("vit_tiny_shapes")
    star = ROOT / "assets" / "shapes-star.png"
    e = vit.explain(loaded, star, method="grad_rollout", target=4)
    v = why.explanation_view(e, 0.6, "cividis")
    assert v.scale == (float(e.map.min()), float(e.map.max()))
    assert v.image.width == base.DISPLAY_SIZE and "“cross”" in v.caption and "does not depend" not in v.caption
    r = why.explanation_view(vit.explain(loaded, star, method="rollout", target=4), 0.6, "cividis")
    assert "does not depend on the class" in r.caption
    curves = vit.perturbation_curves(loaded, star, e.map, e.target, steps=4)
    c = why.curves_view(e, curves)
    for mode in ("deletion", "insertion"):
        ours, rand = curves[mode, "saliency"].auc, curves[mode, "random"].auc
        assert f"{mode} AUC {ours:.3g} against {rand:.3g} for random" in c.caption
    assert "lower is better" in c.legend and "higher is better" in c.legend
    rows = why.comparison_rows([(e, curves)])
    assert rows[0][:4] == ["Gradient-weighted rollout", "yes", f"{curves['deletion', 'saliency'].auc:.3g}",
                           f"{curves['insertion', 'saliency'].auc:.3g}"]
    assert rows[-1][0] == "random order (chance)"
