"""Pictures drawn to fill the frames the page measured: they fit, their text stays readable, and the page's
measurements are read safely (``vit.ui.inputs.screen``).

The browser tests (tests/test_browser.py) measure the same on screen: the share of each tab's main picture
inside the viewport and the text size as shown (natural vs shown size).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import ImageFont

import vit
from vit.ui import inputs
from vit.views import draw
from vit.views import pictures as registry
from vit.views.pictures import PROJECTOR_ENLARGE, Display

ROOT = Path(__file__).resolve().parents[1]
FRAMES = [(430, 380), (670, 760), (300, 520), (900, 420)]  # a laptop's, a 1080p screen's, narrow, wide
# Pictures drawn whole at any frame; the rest (the code listing, the block diagram over its chart) keep a
# least height, and are checked against the frames they get on the page.
LAID_OUT = {"block-code": (430, 380), "block-view": (430, 380)}


@pytest.fixture(scope="module")
def shown():
    loaded = vit.load_model("vit_tiny_shapes")
    a = vit.analyze(loaded, ROOT / "assets" / "shapes-star.png")
    weights = {"filters": vit.patch_filters(loaded), "similarity": vit.position_similarity(loaded)}
    return a, weights.__getitem__


def _drawn(a, weights, name, display):
    return registry.draw(a, name, display, weights=weights).image


@pytest.mark.parametrize("projector", [False, True])
@pytest.mark.parametrize("frame", FRAMES)
def test_every_analysis_picture_fits_its_frame(shown, frame, projector):
    a, weights = shown
    display = Display(projector=projector, frame=frame)
    w, h = display.target()
    for name in registry.ANALYSIS_PICTURES + ("block-code",):
        if name in LAID_OUT and (w < LAID_OUT[name][0] or h < LAID_OUT[name][1]):
            continue
        img = _drawn(a, weights, name, display)
        scale = min(w / img.width, h / img.height)  # as the page shows it: whole, in its frame
        assert scale >= 0.9, (name, frame, projector, img.size)


def test_a_frame_changes_the_drawing_and_projector_mode_draws_it_smaller_to_enlarge(shown):
    a, weights = shown
    normal = _drawn(a, weights, "rollout-view", Display(frame=(670, 760)))
    projector = _drawn(a, weights, "rollout-view", Display(projector=True, frame=(670, 760)))
    laptop = _drawn(a, weights, "rollout-view", Display(frame=(430, 380)))
    assert normal.width == 670 and laptop.width < normal.width
    assert projector.width == pytest.approx(670 / PROJECTOR_ENLARGE, abs=2)  # shown 1.4x: text 14 px -> 19.6 px


def test_no_text_inside_a_picture_is_drawn_smaller_than_smallest_text(shown, monkeypatch):
    """Every font any picture asks for, at every frame: at least draw.SMALLEST_TEXT px as drawn."""
    a, weights = shown
    sizes = []
    real_truetype = ImageFont.truetype

    def recorded(path, size=10, *args, **kwargs):
        sizes.append(size)
        return real_truetype(path, size, *args, **kwargs)

    monkeypatch.setattr(ImageFont, "truetype", recorded)
    draw.font.cache_clear()
    draw.mono_font.cache_clear()
    try:
        for frame in (None, *FRAMES):
            for projector in (False, True):
                for name in registry.ANALYSIS_PICTURES + ("block-code",):
                    _drawn(a, weights, name, Display(projector=projector, frame=frame))
    finally:
        draw.font.cache_clear()
        draw.mono_font.cache_clear()
    assert sizes and min(sizes) >= draw.SMALLEST_TEXT, sorted(set(sizes))[:5]
    # Shown: 1:1 or larger in normal mode (>= 12 px on a laptop), enlarged 1.4x in projector mode (>= 18 px).
    assert draw.SMALLEST_TEXT * 0.9 >= 12 and draw.SMALLEST_TEXT * PROJECTOR_ENLARGE * 0.95 >= 18


@pytest.mark.parametrize(("value", "expected"), [
    (json.dumps({"p": 1, "tabs": {"patches": [640, 420]}}), (True, (640, 420))),
    (json.dumps({"p": 0, "tabs": {"patches": [1e9, 5]}}), (False, (inputs.MAX_FRAME, registry.MIN_FRAME))),
    (json.dumps({"p": 0, "tabs": {"attention": [640, 420]}}), (False, None)),  # that tab not measured yet
    ('{"p": 0, "tabs": {"patches": [NaN, 400]}}', (False, None)),
    ('{"p": 0, "tabs": {"patches": ["wide", 400]}}', (False, None)),
    ('{"p": 0, "tabs": {"patches": [400]}}', (False, None)),
    ('{"p": 0, "tabs": [1, 2]}', (False, None)),
    ("[1, 2]", (False, None)),
    ("not json", (False, None)),
    ("x" * 5000, (False, None)),  # longer than the page ever sends: not even parsed
    (True, (True, None)),  # a bare flag (an older page, a script): projector mode, the fixed sizes
    (None, (False, None)),
])
def test_the_pages_measurements_are_read_safely(value, expected):
    assert inputs.screen(value, "patches") == expected
