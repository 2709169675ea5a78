"""A teacher's walk (issue 36), in Chromium, on the model trained here (a real answer, no download): every screen
right in every mode.

* Clicks: at 1280x720, 1920x1080 and on a phone (390x844), in normal and projector mode, in English and Chinese, the
  centres of corner, edge and inner patches of every picture that takes clicks (the patch grid, What if?'s map and its
  heads, the lesson's "click the patch", Quiz me), and the outline, the query view and the server's answer name the
  patch clicked. Where a patch is on screen is worked out here from the picture as shown (its box and the model's
  8x8 grid), not from the page's own mapping.
* The lesson at layer 1, a middle layer and L: every number of each step's text is the one the step's picture is
  drawn from (the text the server writes for that layer and head, which tests/test_lesson.py checks against the
  record), and the picture beside it says that layer.
* Full screen on every picture of every tab: the picture fills the screen, its caption under it; a click there too.
* No empty frame after an analysis, on any tab or lesson step.
* axe-core on every tab after an analysis, in both languages: no critical or serious violation.
* Draw in every mode: the canvas whole on screen, a mouse's strokes (a finger's on the phone) analysed.
* The pen and the answer on one screen (issue 53): with Draw on, after a stroke, the canvas, the top-1 with its
  probability and a picture the stroke changed, at 1280x720, 1080p projector and a phone, in both languages; the
  examples over the tabs gone after an analysis on any tab; a corner patch's ring whole on a phone.

Nothing here waits on a clock: every wait is for a state of the page (tests/test_walk.py runs beside two CPU burners).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest
import test_browser
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_browser import ROOT, TIMEOUT_MS, WATCH_ERRORS, no_error_badges, upload, wait_for_text

from vit.lesson import AT_LAYER, LESSON, lesson_text
from vit.views.registry import Display

url, browser = test_browser.url, test_browser.browser  # the browser tests' fixtures: this module's own instances

pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::DeprecationWarning:gradio.queueing")]

SIZES = {"laptop": (1280, 720), "projector": (1920, 1080), "phone": (390, 844)}
# (screen, projector mode, language): every screen in both modes, each language on every screen.
WALKS = [("laptop", False, "en"), ("laptop", True, "zh"), ("projector", True, "en"), ("projector", False, "zh"),
         ("phone", False, "zh"), ("phone", True, "en")]
DRAWING = ROOT / "assets" / "shapes-heart_and_circle.png"
GRID = 8  # the shapes model at P = 8: 64 x 64 px cut into 8 x 8 patches, token = 1 + 8 r + c
CLICKS = [(0, 0), (0, 7), (7, 0), (7, 7), (0, 3), (4, 7), (7, 2), (3, 0), (3, 4), (5, 5)]  # corners, edges, inner
AXE = os.environ.get("VIT_AXE") or str(ROOT / "node_modules" / "axe-core" / "axe.min.js")


def token(r: int, c: int) -> int:
    return 1 + GRID * r + c


def walk_page(browser, url: str, screen: str, projector: bool, lang: str) -> Page:
    """The page at ``screen`` in ``lang`` (projector mode from the address), the drawing analysed by the model
    trained here (the banner's offer: the ImageNet weights are missing offline)."""
    width, height = SIZES[screen]
    context = browser.new_context(viewport={"width": width, "height": height}, locale="zh-CN" if lang == "zh" else
                                  "en-US", has_touch=screen == "phone", accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(WATCH_ERRORS)
    page.goto(f"{url}?lang={lang}" + ("&projector" if projector else ""))
    expect(page.locator(f"#lang input[value='{lang}']")).to_be_checked(timeout=TIMEOUT_MS)  # the load event's
    upload(page, DRAWING)
    page.locator("#offer-trained").click()
    wait_for_text(page, "#stage-table", "(1, 65, 96)")
    page.wait_for_function("() => { const img = document.querySelector('#patch-grid img');"  # its own 8 x 8 grid
                           " return img && img.naturalWidth > 0 && /-8-8\\.jpg$/.test(decodeURIComponent(img.src)); }")
    expect(page.locator("#projector input")).to_be_checked(checked=projector)
    shown(page, "#patch-grid")
    return page


def shown(page: Page, selector: str) -> None:
    """Wait until the picture of ``selector`` is loaded and still (its box the same over two frames), in view."""
    img = page.locator(f"{selector} img").first
    img.scroll_into_view_if_needed()
    page.wait_for_function("""(img) => new Promise((done) => {
        if (!img.complete || !img.naturalWidth) return done(false);
        const a = JSON.stringify(img.getBoundingClientRect());
        requestAnimationFrame(() => requestAnimationFrame(() =>
            done(JSON.stringify(img.getBoundingClientRect()) === a && img.complete)));
    })""", arg=img.element_handle(), polling=100)


def patch_centre(page: Page, selector: str, r: int, c: int, view_rows: int = GRID) -> dict:
    """Where the centre of patch (r, c) is on screen, from the picture as it is shown: its box, and the model's square
    view at its top (the whole picture for the patch grid; over the colour bar for the maps)."""
    box = page.evaluate("""(img) => {  // the picture as shown: whole and centred in its <img>'s box (full screen)
        const b = img.getBoundingClientRect(), s = Math.min(b.width / img.naturalWidth, b.height / img.naturalHeight);
        return {x: b.left + (b.width - s * img.naturalWidth) / 2, y: b.top + (b.height - s * img.naturalHeight) / 2,
                width: s * img.naturalWidth}; }""", page.locator(f"{selector} img").first.element_handle())
    side = box["width"]  # the square model's view spans the picture's width, from its top
    return {"x": box["x"] + (c + 0.5) * side / view_rows, "y": box["y"] + (r + 0.5) * side / view_rows}


def click_patch(page: Page, selector: str, r: int, c: int) -> None:
    shown(page, selector)
    point = patch_centre(page, selector, r, c)
    page.mouse.click(point["x"], point["y"])


def numbers_after_token(text: str) -> set[int]:
    """The token numbers a text names: "token 3", "tokens 1, 8, 64", "token 1、8、64"."""
    found = set()
    for run in re.findall(r"tokens? ((?:\d+(?:, |、| and |和)?)+)", text):
        found |= {int(n) for n in re.findall(r"\d+", run)}
    return found


# --------------------------------------------------------------------------- clicks, in every mode


@pytest.mark.parametrize(("screen", "projector", "lang"), WALKS)
def test_every_click_names_the_patch_clicked(browser, url, screen, projector, lang):
    page = walk_page(browser, url, screen, projector, lang)
    assert_banner_reads(page)
    assert_value_whole(page, "#model input", projector)
    for r, c in CLICKS:
        click_patch(page, "#patch-grid", r, c)
        expect(page.locator("#grid-geometry")).to_have_attribute("data-token", str(token(r, c)))  # the server's
        wait_for_text(page, "#query-view-caption", f"token {token(r, c)}")  # the query view's
        expect(page.locator("#query-view img").first).to_have_attribute("alt", re.compile(f"token {token(r, c)}"))
        try:  # the outline follows the server's answer a frame or more later on a busy machine
            page.wait_for_function(f"([r, c]) => {{ const at = ({OUTLINE_AT})({GRID});"
                                   " return at[0] === r && at[1] === c; }", arg=[r, c])
        except PlaywrightTimeout:
            pass  # the assertion below says where it is
        inside = page.evaluate(OUTLINE_AT, GRID)
        assert inside == [r, c], (screen, projector, lang, (r, c), inside)
    _what_if_clicks(page, lang, projector)
    _quiz_click(page, lang)
    _lesson_click(page, lang)
    no_error_badges(page)
    page.context.close()


OUTLINE_AT = """(n) => {  // the patch (row, column) the outline's centre is in, as shown
    const img = document.querySelector('#patch-grid img').getBoundingClientRect();
    const m = document.querySelector('#grid-mark .mark-cell').getBoundingClientRect();
    return [Math.floor((m.top + m.height / 2 - img.top) / img.height * n),
            Math.floor((m.left + m.width / 2 - img.left) / img.width * n)]; }"""


def assert_banner_reads(page: Page) -> None:
    """The banner shows whole lines in its own room: none cut through (nothing of a third line shows), nothing over
    the controls under it (the rest of a long sentence shows on hover: the mouse leaves it first)."""
    page.mouse.move(1, 1)
    seen = page.evaluate("""() => {
        const room = document.querySelector('#banner').getBoundingClientRect();
        const b = document.querySelector('#banner .banner'), box = b.getBoundingClientRect();
        const style = getComputedStyle(b), clip = box.bottom - parseFloat(style.borderBottomWidth);
        const glyph = 0.7 * parseFloat(style.fontSize);
        const range = document.createRange(); range.selectNodeContents(b);
        const cut = [...range.getClientRects()].filter((r) => r.top < clip && r.top + glyph > clip);
        return {room: room.bottom, bottom: box.bottom, cut: cut.map((r) => [r.top, r.bottom, clip])};
    }""")
    assert seen["bottom"] <= seen["room"] + 1, seen
    assert seen["cut"] == [], seen  # a line shows whole or not at all


def assert_value_whole(page: Page, selector: str, projector: bool = False) -> None:
    """A dropdown's value shows whole, nothing of it under the caret (the caret: the icon in the input's right
    half, level with it); in projector mode on a laptop, whose text is larger in the same sidebar, a value too long
    for it ends in an ellipsis."""
    seen = page.locator(selector).evaluate("""(i) => {
        const r = i.getBoundingClientRect(), box = i.closest('.block') || i.parentElement;
        const carets = [...box.querySelectorAll('svg')].map((s) => s.getBoundingClientRect())
            .filter((s) => s.width > 0 && s.top < r.bottom && s.bottom > r.top && s.left >= r.left + r.width / 2);
        return [i.value, i.scrollWidth, i.clientWidth, getComputedStyle(i).textOverflow,
                r.right - parseFloat(getComputedStyle(i).paddingRight),
                carets.length ? Math.min(...carets.map((s) => s.left)) : null];
    }""")
    assert seen[1] <= seen[2] or (projector and seen[3] == "ellipsis"), seen
    assert seen[5] is not None and seen[4] <= seen[5] + 0.5, seen  # the text's room ends where the caret begins


def _tab(page: Page, name: str) -> None:
    page.locator(f"#tab-{name}-button").click()


def _what_if_clicks(page: Page, lang: str, projector: bool = False) -> None:
    """Three patches taken away by clicks (a corner, an edge, an inner one) and a head switched off: the map and the
    heads say exactly those."""
    _tab(page, "whatif")
    shown(page, "#whatif-map")
    assert_value_whole(page, "#whatif-order input", projector)
    label = page.locator("#whatif-fraction").get_by_text(re.compile(r"^x")).first  # was 4 lines of 2-4 glyphs (zh)
    height, size = label.evaluate("e => [e.getBoundingClientRect().height, parseFloat(getComputedStyle(e).fontSize)]")
    assert height <= 3 * size, (lang, projector, height, size)  # two lines at most (a phone's)
    removed = set()
    for r, c in ((0, 0), (7, 3), (4, 4)):
        before = page.locator("#whatif-map img").first.get_attribute("src")
        click_patch(page, "#whatif-map", r, c)
        removed.add(token(r, c))
        expect(page.locator("#whatif-map img").first).not_to_have_attribute("src", before)
        alt = page.locator("#whatif-map img").first.get_attribute("alt")
        assert numbers_after_token(alt.split("p(")[0].split("概率")[0]) == removed, alt
    shown(page, "#whatif-heads")
    point = page.wait_for_function("""() => {  // layer 2, head 3 of the 4 x 3 cells, where the picture says they are
        const img = document.querySelector('#whatif-heads img');
        if (!img || !img.complete || !img.naturalWidth) return null;  // redrawn after the clicks: asked again
        const b = img.getBoundingClientRect(), s = b.width / img.naturalWidth, name = decodeURIComponent(img.src);
        const [x0, y0, w, h] = /\\.cells-([\\d.]+)-([\\d.]+)-([\\d.]+)-([\\d.]+)-/.exec(name).slice(1).map(Number);
        return {x: b.left + s * (x0 + 2.5 * w / 3), y: b.top + s * (y0 + 1.5 * h / 4)}; }""").json_value()
    before = page.locator("#whatif-heads img").first.get_attribute("src")
    page.mouse.click(point["x"], point["y"])
    expect(page.locator("#whatif-heads img").first).not_to_have_attribute("src", before)
    head = "layer 2 head 3" if lang == "en" else "第 2 层 head 3"
    expect(page.locator("#whatif-heads img").first).to_have_attribute("alt", re.compile(head))
    if projector:  # read from the back row: What if?'s before / after and the chapter's stage table (were 15-19 px)
        for cell in ("#whatif-result td", "#stage-table td"):
            size = page.locator(cell).first.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")
            assert size >= 20, (cell, size)


def _quiz_click(page: Page, lang: str) -> None:
    """Quiz me on the Attention tab: a click on the bottom-right patch is the guess."""
    _tab(page, "attention")
    page.locator("#quiz-attention input[type=checkbox]").check()
    shown(page, "#quiz-attention-picture")
    click_patch(page, "#quiz-attention-picture", 7, 7)
    wait_for_text(page, "#quiz-attention-answer", "token 64")
    page.locator("#quiz-attention input[type=checkbox]").uncheck()


def _lesson_click(page: Page, lang: str) -> None:
    """The lesson's "click the patch": the guess recorded is the patch clicked (row 4, column 1: token 34)."""
    _tab(page, "lesson")
    page.locator("#lesson-predict-on input[type=checkbox]").check()
    wait_for_text(page, "#lesson-progress", "15")
    box = page.locator("#lesson-progress").bounding_box()  # a line to read: on a phone it was one glyph wide
    assert box["width"] >= 200 and box["height"] <= 160, box
    for n in range(2, 13):
        page.locator("#lesson-next").click()
        wait_for_text(page, "#lesson-progress", f"{n}")
        expect(page.locator("#lesson-progress")).to_contain_text(re.compile(rf"\b{n}\b.*15"))
    shown(page, "#lesson-picture")
    click_patch(page, "#lesson-picture", 4, 1)
    wait_for_text(page, "#lesson-answer", "token 34")
    page.locator("#lesson-predict-on input[type=checkbox]").uncheck()


# --------------------------------------------------------------------------- the lesson agrees with itself


@pytest.fixture(scope="module")
def record():
    """The analysis the page shows, made again here (the same model, precision, image and setting: the same numbers)."""
    import vit
    from vit.images import load_image
    from vit.ui import state

    return vit.analyze(vit.load_model("vit_tiny_shapes", dtype=state.dtype_setting()), load_image(DRAWING))


def _set_layer(page: Page, layer: int) -> None:
    box = page.locator("#layer input[type=number]")
    box.fill(str(layer))
    box.press("Enter")
    expect(box).to_have_value(str(layer))


NUMBER = re.compile(r"\d+(?:\.\d+)?")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lesson_says_what_its_pictures_show_at_every_layer(browser, url, record, lang):
    """At layer 1, 2 and L (head 2): each step on the page gives exactly the numbers of the text the server writes for
    that layer and head, and its picture, never an empty frame, is drawn at that layer (its alt text says so)."""
    page = walk_page(browser, url, "laptop", False, lang)
    box = page.locator("#head input[type=number]")
    box.fill("2")
    box.press("Enter")
    _tab(page, "lesson")
    steps = list(enumerate(LESSON))
    for k, layer in enumerate((1, 2, record.depth)):  # forward at layer 1, back at 2, forward at L
        _set_layer(page, layer)
        for n, (i, step) in enumerate(steps if k % 2 == 0 else steps[::-1]):
            if n:  # the next step, or the previous one
                page.locator("#lesson-next" if k % 2 == 0 else "#lesson-prev").click()
            wait_for_text(page, "#lesson-progress", f"{i + 1}")
            wait_for_text(page, "#lesson-progress", step.words(lang)[1])
            text = lesson_text(step, record, lang, Display(layer=layer, head=2))
            words = re.sub(r"\*\*|`|</?su[bp]>", "", text.split("\n\n")[-1])  # as the page shows it: no marks
            expect(page.locator("#lesson-text")).to_contain_text(words[:50])
            want = sorted(NUMBER.findall(text))
            try:  # the text follows the Layer control once the redraw the change started has come back
                page.wait_for_function("""want => {
                    const el = document.querySelector('#lesson-text [data-testid=markdown]');
                    const got = el ? (el.innerText.match(/\\d+(?:\\.\\d+)?/g) || []).sort() : [];
                    return JSON.stringify(got) === JSON.stringify(want); }""", arg=want)
            except PlaywrightTimeout:
                pass  # the assertion below says what differs
            on_page = page.locator("#lesson-text [data-testid=markdown]").inner_text()  # not a progress timer
            assert sorted(NUMBER.findall(on_page)) == sorted(NUMBER.findall(text)), (layer, step.view, on_page)
            if step.view == "stage-table":  # "Read the table": it starts on the first screen
                expect(page.locator("#lesson-table table")).to_be_visible()
                expect(page.locator("#lesson-picture")).to_be_hidden()  # a frame shows a picture or is not there
                page.evaluate("window.scrollTo(0, 0)")
                assert 0 <= page.locator("#lesson-table table").bounding_box()["y"] < SIZES["laptop"][1] * 0.75
            else:
                shown(page, "#lesson-picture")
                if step.view in AT_LAYER:  # the picture beside the text: that layer
                    alt = page.locator("#lesson-picture img").first.get_attribute("alt")
                    said = f"{layer} of {record.depth}" if lang == "en" else f"第 {layer} 层（共 {record.depth} 层"
                    assert said in alt or f"第 {layer} 个 block（共 {record.depth} 个" in alt, (step.view, alt)
            assert_no_empty_frame(page)
        last = "#lesson-next" if k % 2 == 0 else "#lesson-prev"
        expect(page.locator(last)).to_be_disabled()  # the last (or first) step: nowhere to go
    no_error_badges(page)
    page.context.close()


# --------------------------------------------------------------------------- full screen, empty frames, axe-core


EMPTY_FRAMES = """() => [...document.querySelectorAll('.picture-frame, [aria-label="Empty value"]')]
    .filter((f) => f.offsetParent !== null && !(f.querySelector('img') && f.querySelector('img').naturalWidth))
    .map((f) => (f.closest('[id]') || {}).id)"""


def assert_no_empty_frame(page: Page, settle_ms: int = 20_000) -> None:
    """Every picture frame on screen shows a picture (and gradio's empty-value boxes are nowhere to be seen) once
    the pictures on their way have loaded: a picture redrawn for the tab on screen is a new image, empty for as
    long as it takes to load (longer on a busy machine); a frame still empty after ``settle_ms`` fails."""
    try:
        page.wait_for_function(f"({EMPTY_FRAMES})().length === 0", polling=100, timeout=settle_ms)
    except PlaywrightTimeout:
        pass
    assert page.evaluate(EMPTY_FRAMES) == []


TABS = ("patches", "attention", "depth", "why", "whatif", "inside", "figure7", "lesson")


def test_full_screen_shows_every_picture_whole_with_its_caption(browser, url):
    page = walk_page(browser, url, "laptop", False, "en")
    width, height = SIZES["laptop"]
    opened = []
    for tab in TABS:
        _tab(page, tab)
        buttons = page.locator(f"#tab-{tab} button[id$='-fullscreen']:visible")
        expect(buttons.first).to_be_visible() if tab != "lesson" else None
        for i in range(buttons.count()):
            button = buttons.nth(i)
            name = button.get_attribute("id").removesuffix("-fullscreen")
            page.locator(f"#{name}").scroll_into_view_if_needed()
            button.click()
            page.wait_for_function(f"document.fullscreenElement && document.fullscreenElement.id === '{name}-block'")
            seen = page.evaluate(f"""() => {{  // the picture as shown: whole, centred in what is left of the screen
                const img = document.querySelector('#{name} img'), b = img.getBoundingClientRect();
                const s = Math.min(b.width / img.naturalWidth, b.height / img.naturalHeight);
                const cap = document.getElementById('{name}-caption').getBoundingClientRect();
                return {{w: img.naturalWidth * s, h: img.naturalHeight * s, left: b.left, right: b.right,
                         top: b.top, bottom: b.bottom, caption: [cap.top, cap.bottom]}}; }}""")
            assert seen["left"] >= 0 and seen["right"] <= width + 1, (name, seen)  # on screen
            assert seen["w"] >= 0.6 * width or seen["h"] >= 0.5 * height, (name, seen)  # it fills the screen
            assert seen["caption"][0] >= seen["bottom"] - 1 and seen["caption"][0] < height, (name, seen)
            if name == "patch-grid":  # a click in full screen takes the patch under it
                click_patch(page, "#patch-grid", 7, 6)
                expect(page.locator("#grid-geometry")).to_have_attribute("data-token", str(token(7, 6)))
            page.locator(f"#{name}-fullscreen").click()
            page.wait_for_function("!document.fullscreenElement")
            opened.append(name)
    assert {"patch-grid", "query-view", "rollout-view", "head-views", "layer-views", "depth-plot", "why-map",
            "whatif-map", "whatif-heads", "block-view", "filters-view", "position-view", "distance-view"} <= set(opened)
    page.context.close()


NEEDS_AXE = pytest.mark.skipif(not Path(AXE).is_file() and not os.environ.get("CI"),
                               reason="axe-core not installed (npm install axe-core@4.14.1; .ci/run does)")


@NEEDS_AXE
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_axe_finds_nothing_serious_on_any_tab_and_no_frame_is_empty(browser, url, lang):
    page = walk_page(browser, url, "laptop", False, lang)
    found = {}
    for tab in TABS:
        _tab(page, tab)
        if tab == "why":
            for choice in ("target", "method", "baseline", "layer"):  # "默认（第 4 个 bloc" ran under the caret
                assert_value_whole(page, f"#why-{choice} input")
            page.locator("#why-test").click()
            shown(page, "#why-curves")
        else:
            shown(page, {"lesson": "#lesson-picture", "inside": "#block-view", "figure7": "#filters-view",
                         "depth": "#layer-views", "attention": "#rollout-view", "whatif": "#whatif-map"}.get(
                tab, "#patch-grid"))
        assert_no_empty_frame(page)
        page.add_script_tag(path=AXE)
        violations = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .filter((v) => v.impact === 'critical' || v.impact === 'serious')
            .map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | '))""")
        if violations:
            found[tab] = violations
    assert found == {}
    no_error_badges(page)
    page.context.close()


# --------------------------------------------------------------------------- Draw, in every mode (issue 40)


def _finger(page: Page, points: list[tuple[float, float]]) -> None:
    """One stroke with a finger: touch start, moves, end (the browser's own touch events, through its devtools)."""
    cdp = page.context.new_cdp_session(page)
    kinds = ["touchStart"] + ["touchMove"] * (len(points) - 2) + ["touchEnd"]
    for kind, (x, y) in zip(kinds, points):
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [] if kind == "touchEnd" else
                                              [{"x": x, "y": y, "id": 1}]})
    cdp.detach()


@NEEDS_AXE  # it runs axe-core on the drawing's controls too
@pytest.mark.parametrize(("screen", "projector", "lang"), WALKS)
def test_draw_works_in_every_mode_with_a_mouse_or_a_finger(browser, url, screen, projector, lang):
    """The Draw switch in its language; the canvas whole on screen with its pen widths, Undo and Clear; a heart
    and a circle drawn (with a finger on the phone, a mouse elsewhere) analysed, the upload box back after."""
    page = walk_page(browser, url, screen, projector, lang)
    switch = page.locator("#draw")
    expect(switch).to_contain_text("画" if lang == "zh" else "Draw")
    switch.locator("input").check()
    canvas = page.locator("#draw-canvas")
    canvas.scroll_into_view_if_needed()
    box, width = canvas.bounding_box(), page.viewport_size["width"]
    assert box["width"] >= 200 and box["x"] >= 0 and box["x"] + box["width"] <= width, (screen, box)
    for tool in ("#pen", "#draw-undo", "#draw-clear"):
        expect(page.locator(tool)).to_be_visible()
    page.add_script_tag(path=AXE)  # the switch, the canvas and its tools: nothing serious for axe-core either
    violations = page.evaluate("""async () => (await axe.run({include: [['#draw'], ['#draw-box']]},
        {resultTypes: ['violations']})).violations.filter((v) => v.impact === 'critical' || v.impact === 'serious')
        .map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | '))""")
    assert violations == [], (screen, lang, violations)
    before = page.locator("#patch-grid img").first.get_attribute("src")
    heart = [(0.5, 0.45), (0.35, 0.25), (0.15, 0.4), (0.5, 0.8), (0.85, 0.4), (0.65, 0.25), (0.5, 0.45)]
    circle = [(0.5 + 0.12 * math.cos(a * math.pi / 8), 0.5 + 0.12 * math.sin(a * math.pi / 8)) for a in range(17)]
    for shape in (heart, circle):
        points = [(box["x"] + fx * box["width"], box["y"] + fy * box["height"]) for fx, fy in shape]
        if screen == "phone":
            _finger(page, points)
        else:
            test_browser.stroke(page, shape)
    page.wait_for_function("before => { const img = document.querySelector('#patch-grid img');"
                           " return img && img.src !== before && img.complete && img.naturalWidth > 0; }", arg=before)
    expect(page.locator("#analyze-btn")).to_be_enabled()
    switch.locator("input").uncheck()
    expect(page.locator("#input-image img")).to_be_visible()
    no_error_badges(page)
    page.context.close()


# ---------------------------------------------------------------- the pen and the answer on one screen (issue 53)

# At scroll 0: the canvas, the top-1 with its probability (gr.Label's heading and its first row) and a picture the
# last stroke changed, each whole inside the screen. The pictures: the patch grid and the clicked patch's attention
# on the tab, and the copy of the tab's picture beside the canvas on a phone (vit/ui/page.js: #pen-view).
PEN_PICTURES = ("#patch-grid img", "#query-view img", "#pen-view img")
ON_ONE_SCREEN = """(before) => {
    const inside = (el) => { if (!el || el.offsetParent === null) return false; const r = el.getBoundingClientRect();
        return r.width > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth + 1 && r.bottom <= innerHeight + 1; };
    const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
        return [r.left, r.top, r.right, r.bottom].map(Math.round); };
    const top1 = document.querySelector('#predictions .output-class');
    const first = document.querySelector('#predictions .confidence-set');
    const updated = Object.keys(before).filter((s) => { const img = document.querySelector(s);
        return img && img.src && img.src !== before[s] && img.complete && img.naturalWidth > 0 && inside(img); });
    return {ok: scrollY === 0 && inside(document.querySelector('#draw-canvas')) && inside(top1) && inside(first)
                && updated.length > 0,
            scroll: scrollY, canvas: box(document.querySelector('#draw-canvas')), top1: box(top1), first: box(first),
            top1_text: top1 ? top1.textContent.trim() : null, first_text: first ? first.textContent.trim() : null,
            updated, pictures: Object.fromEntries(Object.keys(before).map((s) => [s, box(document.querySelector(s))]))};
}"""


@pytest.mark.parametrize(("screen", "projector", "lang"), [(s, s == "projector", lang) for s in SIZES
                                                           for lang in ("en", "zh")])
def test_the_pen_the_top1_and_a_picture_follow_on_one_screen(browser, url, screen, projector, lang):
    """Issue 53 (review 2026-12-04, defect 5): with Draw on, after a stroke, at 1280x720, 1080p in projector mode and
    on a phone, in both languages: the canvas, the top-1 with its probability and a picture the stroke changed are
    all on the first screen, nothing scrolled (a student draws and sees, stroke after stroke)."""
    page = walk_page(browser, url, screen, projector, lang)
    page.locator("#draw input").check()
    page.evaluate("window.scrollTo(0, 0)")
    before = page.evaluate("(sels) => Object.fromEntries(sels.map((s) => [s, (document.querySelector(s) || {}).src"
                           " || '']))", list(PEN_PICTURES))
    box = page.locator("#draw-canvas").bounding_box()
    heart = [(0.5, 0.45), (0.35, 0.25), (0.15, 0.4), (0.5, 0.8), (0.85, 0.4), (0.65, 0.25), (0.5, 0.45)]
    if screen == "phone":
        _finger(page, [(box["x"] + fx * box["width"], box["y"] + fy * box["height"]) for fx, fy in heart])
    else:
        test_browser.stroke(page, heart)
    page.wait_for_function("before => { const img = document.querySelector('#patch-grid img');"
                           " return img && img.src !== before && img.complete && img.naturalWidth > 0; }",
                           arg=before["#patch-grid img"])
    expect(page.locator("#analyze-btn")).to_be_enabled()
    page.evaluate("window.scrollTo(0, 0)")
    try:  # the copy beside a phone's canvas follows its picture a frame later
        page.wait_for_function(f"(before) => ({ON_ONE_SCREEN})(before).ok", arg=before, timeout=15_000)
    except PlaywrightTimeout:
        pass  # the assertion below says what is off screen
    seen = page.evaluate(ON_ONE_SCREEN, before)
    assert seen["ok"], (screen, projector, lang, seen)
    top1 = seen["top1_text"]
    assert seen["first_text"].startswith(top1) and seen["first_text"].endswith("%"), seen  # its probability
    no_error_badges(page)
    page.context.close()


def test_the_start_examples_go_after_an_analysis_on_any_tab(browser, url):
    """Issue 53 (defect 8): the examples over the tabs go once an analysis has run, also when it ran on another tab
    than Patches & shapes (whose grid is drawn only while it is on screen)."""
    page = test_browser.open_app(browser, url)
    expect(page.locator("#start-examples")).to_be_visible()
    _tab(page, "why")
    upload(page, DRAWING)
    wait_for_text(page, "#banner", "showing")
    expect(page.locator("#why-map img").first).to_be_visible()
    assert page.locator("#patch-grid img").count() == 0  # the analysis ran on Why this class? alone
    expect(page.locator("#start-examples")).to_be_hidden()
    no_error_badges(page)
    page.close()


def test_a_corner_patch_ring_is_whole_on_a_phone(browser, url):
    """Issue 53 (defect 9): on a phone at P = 4 the bottom-right patch's ring is drawn whole: nothing around the
    patch grid cuts it, and it stays on the screen."""
    page = walk_page(browser, url, "phone", False, "en")
    test_browser.type_number(page, "patch-size", "4")
    page.wait_for_function("() => { const img = document.querySelector('#patch-grid img'); return img"  # 16 a side
                           " && img.naturalWidth > 0 && /-16-16\\.jpg$/.test(decodeURIComponent(img.src)); }")
    shown(page, "#patch-grid")
    page.locator("#patch-grid img").first.click(position=test_browser.patch_point(page, 15, 15))
    wait_for_text(page, "#query-view-caption", "token 256")
    ring = page.locator("#grid-mark .mark-ring")
    expect(ring).to_be_visible()
    cut = ring.evaluate("""(ring) => { const r = ring.getBoundingClientRect(), cuts = [];
        for (let el = ring.parentElement; el; el = el.parentElement) {
            const style = getComputedStyle(el), b = el.getBoundingClientRect();
            const clips = style.overflowX !== 'visible' || style.overflowY !== 'visible';
            if (clips && (r.left < b.left - 0.5 || r.top < b.top - 0.5 || r.right > b.right + 0.5
                          || r.bottom > b.bottom + 0.5)) cuts.push(el.id || el.className.toString().slice(0, 40));
        }
        if (r.left < 0 || r.right > innerWidth) cuts.push('the screen');
        return cuts; }""")
    assert cut == [], cut
    no_error_badges(page)
    page.context.close()
