"""Every picture corresponds to numbers: checked pixel by pixel where it matters."""

from __future__ import annotations

import numpy as np
import pytest

from vit import render


@pytest.fixture
def image() -> np.ndarray:
    return np.full((64, 96, 3), 128, dtype=np.uint8)  # a grey 2 x 3 grid of 32-px patches


def test_overlay_colours_follow_the_heatmap(image):
    heat = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    out = np.asarray(render.overlay(image, heat, alpha=1.0, cmap="cividis", size=96))
    assert out.shape == (64, 96, 3)
    lut = render.colormap_lut("cividis")
    for r in range(2):
        for c in range(3):
            level = round((heat[r, c] / 5.0) * 255)
            centre = out[r * 32 + 16, c * 32 + 16]
            assert np.abs(centre.astype(int) - lut[level]).max() <= 1, (r, c)
    half = np.asarray(render.overlay(image, heat, alpha=0.5, size=96))[16, 16]
    assert np.abs(half.astype(int) - (0.5 * 128 + 0.5 * lut[0])).max() <= 1


def test_constant_map_does_not_divide_by_zero(image):
    out = np.asarray(render.overlay(image, np.ones((2, 3)), alpha=1.0, size=96))
    assert (out == render.colormap_lut("cividis")[0]).all()


def test_colormaps_are_valid_and_unknown_refused():
    for name in render.COLORMAPS:
        lut = render.colormap_lut(name)
        assert lut.shape == (256, 3) and lut.dtype == np.uint8
    with pytest.raises(ValueError, match="colormap"):
        render.colormap_lut("jet")


def test_patch_grid_lines_at_patch_borders_and_mark():
    image = np.zeros((64, 96, 3), dtype=np.uint8)
    out = np.asarray(render.patch_grid(image, (2, 3), size=96, mark=(1, 2)))
    assert out.shape == (64, 96, 3)
    assert out[50, 32].mean() > 150 and out[50, 64].mean() > 150  # vertical lines between columns
    assert out[32, 50].mean() > 150  # horizontal line between rows
    assert out[48, 48].mean() < 20  # inside a patch: the picture itself
    assert tuple(out[63, 80]) == (255, 64, 160)  # the marked patch (row 1, col 2) is outlined


def test_small_multiples_one_tile_per_map(image):
    maps = np.random.default_rng(0).random((12, 2, 3))
    sheet = render.small_multiples(image, maps, [f"head {i + 1}" for i in range(12)], columns=4, tile=60)
    gap, label = 6, 24
    assert sheet.size == (4 * (60 + gap) + gap, 3 * (60 + label + gap) + gap)
    # the first tile's hottest patch is drawn in the colormap's top colour
    r, c = np.unravel_index(maps[0].argmax(), (2, 3))
    tile = np.asarray(sheet)[gap + label: gap + label + 40, gap: gap + 60]
    pixel = tile[int(r * 20 + 10), int(c * 20 + 10)]
    expected = 0.3 * 128 + 0.7 * render.colormap_lut("cividis")[255]
    assert np.abs(pixel - expected).max() <= 2


def test_depth_plot_puts_points_at_their_probability():
    img = render.depth_plot([1, 2, 3, 4], [0.5, 0.5, 0.5, 0.5], ["a"] * 4, [0.0, 0.25, 0.75, 1.0], "cat",
                            size=(400, 300))
    px = np.asarray(img)
    x_at, y_at = render.depth_axes(4, (400, 300))
    blue = np.array([0, 114, 178])
    for i, p in enumerate([0.0, 0.25, 0.75, 1.0]):
        x, y = round(x_at(i)), round(y_at(p))
        assert np.abs(px[y, x].astype(int) - blue).max() <= 10, (i, px[y, x])
