"""Pictures drawn for the page's screens (vit.views.registry.SCREENS): they fit, their text stays readable, the
screen the page names is read safely (``vit.ui.inputs.screen``), and no text inside a picture overlaps another,
leaves its canvas or is cut, at every frame the page can ask for.

The browser tests (tests/test_browser.py) measure the same on screen: the share of each tab's main picture
inside the viewport and the text size as shown (natural vs shown size).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

import vit
from vit.lesson import LESSON_VIEWS
from vit.ui import inputs
from vit.views import draw, registry
from vit.views.registry import PROJECTOR_ENLARGE, Display
from vit.views.whatif import HeadGrid

ROOT = Path(__file__).resolve().parents[1]
FRAMES = [frame for frames in registry.SCREENS.values() for frame in frames.values()]  # every frame the page has
# Text as shown, at least: 12 px on a 1280x720 laptop, 18 px on a 1080p projector (draw.SMALLEST_TEXT as drawn,
# enlarged 1.4x in projector mode, shown at the scale its frame allows).
REFERENCE = [("laptop", False, 12), ("wide", True, 18)]


@pytest.fixture(scope="module")
def shown():
    loaded = vit.load_model("vit_tiny_shapes")
    a = vit.analyze(loaded, ROOT / "assets" / "shapes-star.png")
    weights = {"filters": vit.patch_filters(loaded), "similarity": vit.position_similarity(loaded)}
    return a, weights.__getitem__


def _drawn(a, weights, name, display):
    return registry.draw(a, name, display, weights=weights).image


def _tabs(name: str) -> list[str]:
    """The tabs a picture is shown on: its own, and the lesson's for those the lesson shows."""
    own = registry.PICTURES[name].tab
    return [own, *(["lesson"] if name in LESSON_VIEWS and own != "lesson" else [])]


@pytest.mark.parametrize(("screen", "projector", "least_px"), REFERENCE)
def test_every_analysis_picture_fits_its_frame_and_its_text_reads(shown, screen, projector, least_px):
    """At the reference screens every picture of an analysis, on every tab that shows it, fits the frame it is drawn
    for (the page shows it whole, never enlarged): its smallest text as shown is at least 12 px on the laptop and
    18 px on the 1080p projector."""
    a, weights = shown
    for name in registry.ANALYSIS_PICTURES + ("block-code",):
        for tab in _tabs(name):
            frame = registry.screen_frame(screen, tab, name)
            img = _drawn(a, weights, name, Display(projector=projector, frame=frame))
            scale = min(1.0, frame[0] / img.width, frame[1] / img.height)  # as the page shows it
            smallest = draw.SMALLEST_TEXT * (PROJECTOR_ENLARGE if projector else 1.0) * scale
            assert smallest >= least_px, (name, tab, screen, frame, img.size)


def test_a_screen_changes_the_drawing_and_projector_mode_enlarges_it_to_its_frame(shown):
    a, weights = shown
    wide, laptop = (registry.screen_frame(s, "attention") for s in ("wide", "laptop"))
    normal = registry.draw(a, "rollout-view", Display(frame=wide))
    projector = registry.draw(a, "rollout-view", Display(projector=True, frame=wide))
    small = registry.draw(a, "rollout-view", Display(frame=laptop))
    assert small.image.width < normal.image.width <= wide[0]
    # Drawn at frame / 1.4 and enlarged to it (text 14 px -> 19.6 px), its cells with it: a click maps the same.
    assert projector.image.width <= wide[0] + 1 and projector.image.height <= wide[1] + 1
    assert projector.image.width > 0.8 * normal.image.width  # about the same size on screen...
    drawn = registry.frame_sizes(registry.PICTURES["rollout-view"], a, Display(projector=True, frame=wide))[0]
    assert projector.image.width == pytest.approx(drawn * PROJECTOR_ENLARGE, abs=2)  # ...drawn 1.4 times smaller
    assert projector.cells.w == pytest.approx(projector.image.width, abs=1)


def test_no_text_inside_a_picture_is_drawn_smaller_than_smallest_text(shown, monkeypatch):
    """Every font any picture asks for, at every frame: at least draw.SMALLEST_TEXT px as drawn."""
    a, weights = shown
    sizes = []
    real_truetype = ImageFont.truetype

    def recorded(path, size=10, *args, **kwargs):
        sizes.append(size)
        return real_truetype(path, size, *args, **kwargs)

    monkeypatch.setattr(ImageFont, "truetype", recorded)
    draw.typeface.cache_clear()
    draw.mono_font.cache_clear()
    try:
        for frame in (None, *FRAMES):
            for projector in (False, True):
                for name in registry.ANALYSIS_PICTURES + ("block-code",):
                    _drawn(a, weights, name, Display(projector=projector, frame=frame))
    finally:
        draw.typeface.cache_clear()
        draw.mono_font.cache_clear()
    assert sizes and min(sizes) >= draw.SMALLEST_TEXT, sorted(set(sizes))[:5]


@pytest.mark.parametrize(("value", "expected"), [
    ("laptop", (False, registry.screen_frame("laptop", "patches"))),
    ("wide+projector", (True, registry.screen_frame("wide", "patches"))),
    ("phone", (False, registry.screen_frame("phone", "patches"))),
    ("laptop+anything", (False, registry.screen_frame("laptop", "patches"))),
    ("4k", (False, None)),  # no such screen: the fixed sizes
    ("x" * 5000, (False, None)),  # longer than the page ever sends: not even parsed
    ('{"p": 1, "tabs": {"patches": [1e9, 5]}}', (False, None)),  # a frame of its own choosing: never drawn for
    (True, (True, None)),  # a bare flag (a script): projector mode, the fixed sizes
    (None, (False, None)),
    (12, (False, None)),
])
def test_the_pages_screen_is_read_safely(value, expected):
    """The page names its screen; a request can only pick among the few frames of SCREENS (nothing is drawn at a size
    a client makes up: no giant drawings, no new file per made-up frame)."""
    assert inputs.screen(value, "patches") == expected


# --------------------------------------------------------------------------- the text every picture draws

HEART_AND_CIRCLE = ROOT / "assets" / "shapes-heart_and_circle.png"
LESSON_PICTURES = tuple(n for n in LESSON_VIEWS if n in registry.PICTURES)


@pytest.fixture(scope="module")
def sources():
    """What each picture is drawn from: an analysis, an explanation and its curves, an intervention, a head grid."""
    loaded = vit.load_model("vit_tiny_shapes")
    a = vit.analyze(loaded, HEART_AND_CIRCLE)
    e = vit.explain(loaded, HEART_AND_CIRCLE, method="grad_rollout")
    curves = vit.perturbation_curves(loaded, HEART_AND_CIRCLE, e, e.target, steps=4)
    w = vit.intervene(loaded, HEART_AND_CIRCLE, remove=[27, 28, 35, 36], ablate=[(2, 1), (4, 3)])
    importance = np.linspace(-0.05, 0.4, a.depth * a.num_heads).reshape(a.depth, a.num_heads)
    grids = [HeadGrid(a.depth, a.num_heads, w.ablated), HeadGrid(a.depth, a.num_heads, w.ablated, importance,
                                                                   a.topk[0].label)]
    weights = {"filters": vit.patch_filters(loaded), "similarity": vit.position_similarity(loaded)}
    return {"why-map": [e], "why-curves": [(e, curves)], "whatif-map": [w], "whatif-heads": grids}, a, \
        weights.__getitem__


def every_display(name: str) -> list[Display]:
    """Every way the page and the CLI draw ``name``: the frame of each screen for its tab (and the lesson's for a
    picture the lesson shows), in normal and projector mode, in each language; and without a frame."""
    picture = registry.PICTURES[name]
    frames = {registry.screen_frame(s, picture.tab, name) for s in registry.SCREENS}
    if name in LESSON_PICTURES:
        frames |= {registry.screen_frame(s, "lesson", "lesson-picture") for s in registry.SCREENS}
    out = [Display(lang=lang) for lang in ("en", "zh")]
    for frame in sorted(frames):
        out += [Display(frame=frame, projector=p, lang=lang) for p in (False, True) for lang in ("en", "zh")]
    return out


class Texts:
    """Every text PIL draws, as the box ``textbbox`` gives it on the image it is drawn on, and what is wrong with it
    there. An image pasted into another (or copied) carries its texts and problems along, shifted: the picture's own
    image holds every text it shows, and what was drawn on a part thrown away is not held against it."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        """Forget what was recorded: a new drawing starts."""
        self.boxes: dict[int, list[tuple[tuple[float, ...], str]]] = {}
        self.problems: dict[int, list[str]] = {}
        self.images: dict[int, Image.Image] = {}  # kept alive while recorded: their ids stay unique
        self.enlarged: dict[int, Image.Image] = {}  # a resized image -> the image it was resized from
        self.depth = 0

    def on(self, image: Image.Image) -> tuple[list, list]:
        self.images[id(image)] = image
        return self.boxes.setdefault(id(image), []), self.problems.setdefault(id(image), [])

    def text(self, image: Image.Image, box, text: str) -> None:
        boxes, problems = self.on(image)
        w, h = image.size
        if box[0] < 0 or box[1] < 0 or box[2] > w or box[3] > h:
            problems.append(f"{text!r} {tuple(round(v) for v in box)} leaves its {w}x{h} image")
        boxes.append((box, text))

    def paste(self, target: Image.Image, im: Image.Image, box, mask) -> None:
        x, y = (0, 0) if box is None else box[:2]
        boxes, problems = self.on(target)
        if x < 0 or y < 0 or x + im.width > target.width or y + im.height > target.height:
            problems.append(f"a {im.width}x{im.height} part pasted at {(x, y)} leaves its "
                            f"{target.width}x{target.height} image")
        region = (x, y, x + im.width, y + im.height)
        if mask is None:  # an opaque paste covers what was drawn under it
            boxes[:] = [(b, t) for b, t in boxes if not (b[0] >= region[0] and b[1] >= region[1]
                                                         and b[2] <= region[2] and b[3] <= region[3])]
        boxes += [((b[0] + x, b[1] + y, b[2] + x, b[3] + y), t) for b, t in self.boxes.get(id(im), [])]
        problems += self.problems.get(id(im), [])

    def copied(self, source: Image.Image, out: Image.Image) -> None:
        if id(source) in self.boxes:
            boxes, problems = self.on(out)
            boxes += self.boxes[id(source)]
            problems += self.problems[id(source)]

    def check(self, image: Image.Image, pad: float = 1.0) -> list[str]:
        """What is wrong with the texts ``image`` shows (the image it was enlarged from, in projector mode): one
        leaves its image, one is cut with "…", two overlap by more than ``pad`` px."""
        image = self.enlarged.get(id(image), image)
        boxes, problems = self.on(image)
        out = list(problems) + [f"cut with an ellipsis: {t!r}" for _, t in boxes if "…" in t]
        for i, (a, ta) in enumerate(boxes):
            for b, tb in boxes[i + 1:]:
                if a[0] < b[2] - pad and b[0] < a[2] - pad and a[1] < b[3] - pad and b[1] < a[3] - pad:
                    out.append(f"{ta!r} overlaps {tb!r}")
        return list(dict.fromkeys(out))


@pytest.fixture
def texts(monkeypatch):
    """A :class:`Texts` recording every ``ImageDraw.text``, and ``Image.paste``, ``copy`` and ``resize``."""
    record = Texts()
    real_init, real_text = ImageDraw.ImageDraw.__init__, ImageDraw.ImageDraw.text
    real_paste, real_copy, real_resize = Image.Image.paste, Image.Image.copy, Image.Image.resize
    signature = inspect.signature(real_text)
    box_args = set(inspect.signature(ImageDraw.ImageDraw.textbbox).parameters) - {"self"}

    def init(self, im, *args, **kwargs):
        real_init(self, im, *args, **kwargs)
        self.vit_image = im

    def text(self, *args, **kwargs):
        if record.depth == 0:  # a multiline text is one text, however PIL draws its lines
            bound = signature.bind(self, *args, **kwargs)
            given = {k: v for k, v in bound.arguments.items() if k in box_args}
            record.text(self.vit_image, self.textbbox(**given), str(given["text"]))
        record.depth += 1
        try:
            return real_text(self, *args, **kwargs)
        finally:
            record.depth -= 1

    def paste(self, im, box=None, mask=None):
        if isinstance(im, Image.Image):
            record.paste(self, im, box, mask)
        return real_paste(self, im, box, mask)

    def copy(self):
        out = real_copy(self)
        record.copied(self, out)
        return out

    def resize(self, *args, **kwargs):
        out = real_resize(self, *args, **kwargs)
        record.enlarged[id(out)] = self
        record.images[id(out)] = out
        return out

    monkeypatch.setattr(ImageDraw.ImageDraw, "__init__", init)
    monkeypatch.setattr(ImageDraw.ImageDraw, "text", text)
    monkeypatch.setattr(Image.Image, "paste", paste)
    monkeypatch.setattr(Image.Image, "copy", copy)
    monkeypatch.setattr(Image.Image, "resize", resize)
    draw._grid_layers.cache_clear()  # its numbered grids are drawn again, their numbers recorded
    return record


@pytest.mark.parametrize("name", list(registry.PICTURES))
def test_no_text_in_a_picture_overlaps_another_leaves_its_canvas_or_is_cut(sources, texts, name):
    """At every frame the page can ask for (:data:`registry.SCREENS`; the lesson's), in normal and projector mode,
    in English and Chinese, and in the CLI's fixed sizes: every text PIL draws lies inside its image, no two
    overlap, none is cut with "…", and every part pasted into a picture lies inside it."""
    own, a, weights = sources
    failures = []
    for source in own.get(name, [a]):
        for display in every_display(name):
            texts.reset()
            problems = texts.check(registry.draw(source, name, display, weights=weights).image)
            if problems:
                failures.append(f"{display.frame} projector={display.projector} {display.lang}: "
                                + "; ".join(dict.fromkeys(problems)))
    assert not failures, f"{name}:\n" + "\n".join(failures)
