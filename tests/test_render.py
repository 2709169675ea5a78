"""Every picture corresponds to numbers: checked pixel by pixel where it matters."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from vit.views import draw, plots


@pytest.fixture
def image() -> np.ndarray:
    return np.full((64, 96, 3), 128, dtype=np.uint8)  # a grey 2 x 3 grid of 32-px patches


def test_overlay_colours_follow_the_heatmap(image):
    heat = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    out = np.asarray(draw.overlay(image, heat, alpha=1.0, cmap="cividis", size=96))
    assert out.shape == (64, 96, 3)
    lut = draw.colormap_lut("cividis")
    for r in range(2):
        for c in range(3):
            level = round((heat[r, c] / 5.0) * 255)
            centre = out[r * 32 + 16, c * 32 + 16]
            assert np.abs(centre.astype(int) - lut[level]).max() <= 1, (r, c)
    half = np.asarray(draw.overlay(image, heat, alpha=0.5, size=96))[16, 16]
    assert np.abs(half.astype(int) - (0.5 * 128 + 0.5 * lut[0])).max() <= 1


def test_constant_map_does_not_divide_by_zero(image):
    out = np.asarray(draw.overlay(image, np.ones((2, 3)), alpha=1.0, size=96))
    assert (out == draw.colormap_lut("cividis")[0]).all()


def test_colormaps_are_valid_and_unknown_refused():
    for name in draw.COLORMAPS:
        lut = draw.colormap_lut(name)
        assert lut.shape == (256, 3) and lut.dtype == np.uint8
    with pytest.raises(ValueError, match="colormap"):
        draw.colormap_lut("jet")


def test_patch_grid_lines_at_patch_borders_and_mark():
    image = np.zeros((64, 96, 3), dtype=np.uint8)
    out = np.asarray(draw.patch_grid(image, (2, 3), size=96, mark=(1, 2)))
    assert out.shape == (64, 96, 3)
    assert out[50, 32].mean() > 150 and out[50, 64].mean() > 150  # vertical lines between columns
    assert out[32, 50].mean() > 150  # horizontal line between rows
    assert out[48, 48].mean() < 20  # inside a patch: the picture itself
    # the marked patch (row 1, col 2) is outlined, its pink inside the black edge it shares with the picture's
    assert tuple(out[60, 80]) == (255, 64, 160) and tuple(out[63, 80]) == (0, 0, 0)


def line_contrast(picture: Image.Image, grid: tuple[int, int], box: tuple[int, int, int, int]) -> float:
    """The weakest border between two patches, as a class sees it: at points along every border (three quarters
    into each cell, clear of the numbers at its top left), the largest luminance difference from the picture's own
    background within 2 px of the border. ``box`` = (x0, y0, w, h): where the picture lies in the drawing."""
    lum = np.asarray(picture.convert("RGB")).astype(float) @ [0.299, 0.587, 0.114]
    x0, y0, w, h = box
    rows, cols = grid
    cw, ch = w / cols, h / rows
    background = np.median(lum[y0:y0 + h, x0:x0 + w])
    weakest = np.inf
    for c in range(1, cols):
        x = x0 + round(c * cw)
        for r in range(rows):
            y = y0 + int((r + 0.75) * ch)
            weakest = min(weakest, np.abs(lum[y, x - 2:x + 3] - background).max())
    for r in range(1, rows):
        y = y0 + round(r * ch)
        for c in range(cols):
            x = x0 + int((c + 0.75) * cw)
            weakest = min(weakest, np.abs(lum[y - 2:y + 3, x] - background).max())
    return float(weakest)


@pytest.mark.parametrize("grid", [(16, 16), (8, 8), (5, 5), (2, 3), (56, 56)])
@pytest.mark.parametrize("level", [255, 0])
def test_the_patch_borders_show_on_a_white_and_a_black_picture(grid, level):
    """Issue 53 (3): on a drawing (a white canvas) the patch grid was white on white, so at P = 4, 5, 16 no patch
    could be seen. Measured from the pixels: every border differs from a white and from a black picture."""
    image = np.full((224, 224, 3), level, dtype=np.uint8)
    picture = draw.patch_grid(image, grid, size=640)
    box = draw.grid_layout(grid, (640, 640)).box
    assert line_contrast(picture, grid, box) > 100


def test_small_multiples_one_tile_per_map(image):
    maps = np.random.default_rng(0).random((12, 2, 3))
    sheet = draw.small_multiples(image, maps, [f"head {i + 1}" for i in range(12)], columns=4, tile=60)
    gap, label = 6, 24
    assert sheet.size == (4 * (60 + gap) + gap, 3 * (60 + label + gap) + gap)
    # the first tile's hottest patch is drawn in the colormap's top colour
    r, c = np.unravel_index(maps[0].argmax(), (2, 3))
    tile = np.asarray(sheet)[gap + label: gap + label + 40, gap: gap + 60]
    pixel = tile[int(r * 20 + 10), int(c * 20 + 10)]
    expected = 0.3 * 128 + 0.7 * draw.colormap_lut("cividis")[255]
    assert np.abs(pixel - expected).max() <= 2


def test_depth_plot_puts_points_at_their_probability():
    img = plots.depth_plot([1, 2, 3, 4], [0.5, 0.5, 0.5, 0.5], ["a"] * 4, [0.0, 0.25, 0.75, 1.0], "cat",
                            size=(400, 300))
    px = np.asarray(img)
    x_at, y_at = plots.depth_axes(4, (400, 300), *plots.depth_margins("cat", (400, 300)))
    blue = np.array([0, 114, 178])
    for i, p in enumerate([0.0, 0.25, 0.75, 1.0]):
        x, y = round(x_at(i)), round(y_at(p))
        assert np.abs(px[y, x].astype(int) - blue).max() <= 10, (i, px[y, x])


def test_colorbar_ends_are_the_colormaps_ends():
    for name in draw.COLORMAPS:
        strip = np.asarray(draw.colorbar(500, name, "0", "0.031", "brighter = more attention"))
        x0, y0, x1, y1 = draw.colorbar_rect(500)
        lut = draw.colormap_lut(name)
        assert tuple(strip[(y0 + y1) // 2, x0]) == tuple(lut[0])
        assert tuple(strip[(y0 + y1) // 2, x1 - 1]) == tuple(lut[255])
        assert tuple(strip[y0, x0 - 1]) != tuple(lut[0])  # the bar starts exactly at x0


def test_a_colour_bar_label_too_long_for_its_line_shrinks_then_wraps_and_is_never_cut():
    """The Why map's bar said "brighter = more relevant to this..." at laptop size: now the whole label, smaller;
    and where even the smallest text is too wide, the whole label on two lines."""
    label, width = "brighter = more relevant to this class", 296  # the Why map's bar at 1280 x 800
    x0, _, x1, y1 = draw.colorbar_rect(width)
    assert draw.font(draw.BAR_FONT, bold=False).getlength(label) > width - 8  # too long at the bar's own size
    f = draw._label_font(label, width - 8)
    assert draw.BAR_LABEL_MIN_FONT <= f.size < draw.BAR_FONT and f.getlength(label) <= width - 8
    strip = draw.colorbar(width, "cividis", "0.00112", "0.126", label)
    row = y1 + 6 + draw.BAR_FONT + 6  # the label's line
    whole = Image.new("RGB", (width, strip.height), "white")
    ImageDraw.Draw(whole).text((width / 2, row), label, fill=(30, 30, 30), font=f, anchor="ma")
    assert strip.crop((0, row, width, strip.height)).tobytes() == whole.crop((0, row, width, strip.height)).tobytes()
    assert strip.height == draw.COLORBAR_RESERVE
    # No room even at the smallest size: the label on two lines, the numbers inside the bar's ends.
    on_bar, lines = draw.colorbar_lines(180, "0.000603", "0.272", label)
    assert [t for _, t, _, _ in on_bar] == ["0.000603", "0.272"]
    assert [t for line in lines for _, t, _, _ in line] == ["brighter = more", "relevant to this class"]
    assert draw.colorbar(180, "cividis", "0.000603", "0.272", label).height == draw.COLORBAR_RESERVE
    on_bar, lines = draw.colorbar_lines(142, "0.000603", "0.272", label)  # nor there: a line more, nothing cut
    assert on_bar == [] and [t for line in lines for _, t, _, _ in line] == [
        "0.000603", "0.272", "brighter = more", "relevant to this", "class"]


def test_with_colorbar_keeps_the_picture_at_the_top_left(image):
    picture = draw.overlay(image, np.arange(6.0).reshape(2, 3), size=96)
    both = draw.with_colorbar(picture, "cividis", "0", "5", "brighter = more")
    assert both.width == 96 and both.height > 64 + 40
    assert both.crop((0, 0, 96, 64)).tobytes() == picture.tobytes()


def test_normalize_with_an_explicit_scale():
    np.testing.assert_allclose(draw.normalize(np.array([0.0, 0.5, 1.0]), (0.0, 2.0)), [0, 0.25, 0.5])
    np.testing.assert_allclose(draw.normalize(np.array([2.0, 3.0, 4.0])), [0, 0.5, 1])


@pytest.mark.parametrize("grid,in_cells", [((7, 7), True), ((14, 14), True), ((17, 17), True),
                                           ((28, 28), False), ((56, 56), False)])
def test_grid_labels_are_readable_at_every_patch_size(grid, in_cells):
    """>= 14 px at 640 px: in every cell while the largest token fits, else on the margins."""
    layout = draw.grid_layout(grid, (640, 640))
    assert layout.in_cells == in_cells and layout.font_size >= 14
    if in_cells:
        assert layout.box == (0, 0, 640, 640) and layout.size == (640, 640)
        return
    cell = 640 / grid[0]
    assert layout.row_step * cell >= 14 and (layout.row_step - 1) * cell < 18  # as many rows as fit
    x0, y0, w, h = layout.box
    assert layout.size == (x0 + w, y0 + h)
    f = draw.font(layout.font_size)
    assert f.getlength(str(1 + (grid[0] - 1) * grid[1])) < x0  # the widest row number fits its margin


def test_fine_patch_grid_puts_numbers_outside_the_picture():
    image = np.zeros((224, 224, 3), dtype=np.uint8)
    plain = draw._display(image, 640)
    drawn = draw.patch_grid(image, (56, 56), size=640)
    x0, y0, w, h = draw.grid_layout((56, 56), (640, 640)).box
    inside = np.asarray(drawn)[y0:y0 + h, x0:x0 + w]
    lines_only = np.asarray(draw.patch_grid(image, (56, 56), size=640).crop((x0, y0, x0 + w, y0 + h)))
    assert (inside == lines_only).all() and inside.shape[:2] == (640, 640)
    # inside the picture only the grid lines: no number boxes darken or lighten a cell's interior
    assert (inside[5:9, 5:9] == np.asarray(plain)[5:9, 5:9]).all()
    margin = np.asarray(drawn)[y0:, :x0]
    assert (margin.sum(-1) < 200).any()  # dark numbers on the white margin


def test_mark_on_a_fine_grid_has_a_ring():
    image = np.full((224, 224, 3), 128, dtype=np.uint8)
    out = draw.overlay(image, np.zeros((56, 56)), size=640, mark=(20, 30))
    px = np.asarray(out).astype(int)
    pink = np.abs(px - np.array(draw.MARK)).max(-1) == 0
    ys, xs = np.nonzero(pink)
    cell = 640 / 56
    cx, cy = (30.5) * cell, (20.5) * cell
    assert np.hypot(xs - cx, ys - cy).max() > 2 * cell
    coarse = np.asarray(draw.overlay(image, np.zeros((7, 7)), size=640, mark=(3, 3))).astype(int)
    ys, xs = np.nonzero(np.abs(coarse - np.array(draw.MARK)).max(-1) == 0)
    assert xs.min() >= 3 * 640 / 7 - 1 and xs.max() <= 4 * 640 / 7  # a large cell: its outline suffices


LONG = ["English springer spaniel", "ptarmigan", "chainlink fence", "Egyptian cat", "tabby",
        "Welsh springer spaniel", "window screen"]


@pytest.mark.parametrize("n,size", [(12, (800, 400)), (32, (800, 400)), (12, (720, 360)), (32, (480, 300)),
                                    (12, (296, 340)), (1, (800, 400))])
def test_depth_plot_texts_never_overlap_nor_leave_the_picture(n, size):
    rng = np.random.default_rng(n)
    labels = [LONG[(i // 2) % len(LONG)] for i in range(n)]  # the top-1 changes every other layer
    top1 = rng.uniform(0.1, 0.95, n)
    final = np.linspace(0.0, 0.9, n)
    texts = plots.depth_texts(list(range(1, n + 1)), top1, labels, final, "English springer spaniel", size)
    boxes = [t.box for t in texts]
    for i, b in enumerate(boxes):
        assert b[0] >= 0 and b[1] >= 0 and b[2] <= size[0] and b[3] <= size[1], texts[i]
        for c in boxes[i + 1:]:
            assert not (b[0] < c[2] and c[0] < b[2] and b[1] < c[3] and c[1] < b[3]), (texts[i], c)
    kinds = {t.kind for t in texts}
    assert {"legend", "axis", "tick", "label"} <= kinds
    for t in texts:
        if t.kind == "label":  # a whole class name, or one of its two lines: never cut
            assert t.text in LONG or any(s.startswith(t.text + " ") or s.endswith(" " + t.text) for s in LONG)
    labelled = [t for t in texts if t.kind == "label"]
    assert labelled and set(labels[-1].split()) <= set(" ".join(t.text for t in labelled[:2]).split())  # placed first
    ticks = [t.text for t in texts if t.kind == "tick" and t.anchor == "mt"]
    assert ticks[0] == "1" and len(ticks) >= min(n, 6)
    plots.depth_plot(list(range(1, n + 1)), top1, labels, final, "English springer spaniel", size)


def test_the_marked_patch_keeps_its_number_readable():
    """Issue 20: the outline hid the number of the patch it marks; the number is drawn over it, on pink."""
    image = np.full((224, 224, 3), 128, dtype=np.uint8)
    grid = (14, 14)
    marked = np.asarray(draw.patch_grid(image, grid, size=640, mark=(3, 5))).astype(int)
    plain = np.asarray(draw.patch_grid(image, grid, size=640)).astype(int)
    cw = 640 / 14
    x0, y0 = int(5 * cw), int(3 * cw)
    label = (slice(y0 + 2, y0 + 2 + draw.GRID_FONT), slice(x0 + 3, x0 + 3 + 18))  # where "48" is written
    text_pixels = (plain[label].sum(-1) > 600)  # white digits on the unmarked grid
    assert text_pixels.sum() > 20
    assert (marked[label][text_pixels].sum(-1) < 150).mean() > 0.8  # the same digits, black on pink, all there
    assert (np.abs(marked[label][~text_pixels] - np.array(draw.MARK)).sum(-1) < 10).mean() > 0.5


def _grid_in_order(image, grid, size, mark):
    """The patch grid drawn as the chapter's picture is, in one pass: lines, the mark, then every number."""
    from PIL import Image, ImageDraw

    img = Image.fromarray(image).resize(draw.fit_size(image.shape, size), Image.Resampling.LANCZOS).convert("RGB")
    rows, cols = grid
    layout = draw.grid_layout(grid, img.size)
    pen = ImageDraw.Draw(img, "RGBA")
    cw, ch = img.width / cols, img.height / rows
    draw.grid_lines(img, grid)
    draw.mark_patch(img, grid, mark)
    f = draw.font(layout.font_size)
    for r in range(rows):
        for c in range(cols):
            xy, text = (c * cw + 3, r * ch + 2), str(1 + r * cols + c)
            box = pen.textbbox(xy, text, font=f)
            pen.rectangle([box[0] - 2, box[1] - 2, box[2] + 2, box[3] + 2],
                          fill=(*draw.MARK, 255) if (r, c) == mark else (0, 0, 0, 160))
            pen.text(xy, text, fill=(0, 0, 0, 255) if (r, c) == mark else (255, 255, 255, 255), font=f)
    return img


@pytest.mark.parametrize(("grid", "size"), [((14, 14), 640), ((7, 7), 430), ((9, 9), 671), ((12, 12), 500)])
def test_a_clicks_grid_redraws_only_around_its_mark_and_equals_one_drawn_in_order(grid, size):
    """The grid of a click starts from the cached numbered grid (a click costs one cell's work): pixel for
    pixel it is the grid drawn in one pass, at every mark, the corners and edges included."""
    image = np.random.default_rng(0).integers(0, 256, (224, 224, 3), dtype=np.uint8)  # texture everywhere
    assert draw.grid_layout(grid, draw.fit_size(image.shape, size)).in_cells
    for mark in [(0, 0), (grid[0] - 1, grid[1] - 1), (0, grid[1] - 1), (grid[0] // 2, grid[1] // 3), (1, 1)]:
        ours = draw.patch_grid(image, grid, size, mark=mark)
        expected = _grid_in_order(image, grid, size, mark)
        assert ours.size == expected.size
        assert np.array_equal(np.asarray(ours), np.asarray(expected)), mark


def _mark_pixels(img) -> np.ndarray:
    return (np.abs(np.asarray(img).astype(int) - np.array(draw.MARK)).sum(-1) < 30)


@pytest.mark.parametrize("corner", [(0, 0), (0, 15), (15, 0), (15, 15)])
def test_a_corner_patchs_outline_and_ring_are_whole_inside_the_picture(corner):
    """Classroom review 2026-12-04, defect 9: on a phone the ring around a corner patch (a 16x16 grid in 320 px: 20-px
    cells, so ringed) was cut in half by the picture's edge, and its pink square touched the edge."""
    size, grid = 320, (16, 16)
    img = Image.new("RGB", (size, size), (90, 110, 130))
    draw.mark_patch(img, grid, corner)
    pink = _mark_pixels(img)
    cell = size // grid[0]
    r0, c0 = corner[0] * cell, corner[1] * cell
    in_cell = np.zeros_like(pink)
    in_cell[r0:r0 + cell, c0:c0 + cell] = True
    # The pink square: on all four sides of the patch, and nowhere on the picture's outermost two pixels.
    assert not pink[:2].any() and not pink[-2:].any() and not pink[:, :2].any() and not pink[:, -2:].any()
    square = pink & in_cell
    for side in (square[r0 + 3], square[r0 + cell - 4], square[:, c0 + 3], square[:, c0 + cell - 4]):
        assert side.any()
    # The ring (the pink outside the patch): whole, its four sides (beyond its centre by ~its radius) all drawn.
    ring = pink & ~in_cell
    ys, xs = np.nonzero(ring)
    assert len(xs) > 100
    cx, cy = (xs.min() + xs.max()) / 2, (ys.min() + ys.max()) / 2
    radius = max(22.0, 1.2 * cell + 12)
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):  # pink at the ring's radius on each of its four sides
        x, y = round(cx + dx * radius), round(cy + dy * radius)
        assert 0 <= x < size and 0 <= y < size, (corner, dx, dy, "the ring leaves the picture")
        assert pink[max(0, y - 3):y + 4, max(0, x - 3):x + 4].any(), (corner, dx, dy)
    # and it still points at the patch: the patch's inner corner lies inside the ring
    inner = (c0 + cell / 2 + (cell / 2 if corner[1] == 0 else -cell / 2), r0 + cell / 2 + (cell / 2 if corner[0] == 0
                                                                                          else -cell / 2))
    assert np.hypot(inner[0] - cx, inner[1] - cy) < radius


def test_a_ringed_mark_away_from_the_edges_is_centred_on_its_patch():
    img = Image.new("RGB", (320, 320), (90, 110, 130))
    draw.mark_patch(img, (16, 16), (7, 8))
    ring = _mark_pixels(img)
    ring[140:160, 160:180] = False
    ys, xs = np.nonzero(ring)
    assert abs((xs.min() + xs.max()) / 2 - 169.5) <= 1.5 and abs((ys.min() + ys.max()) / 2 - 149.5) <= 1.5
