"""The app in a real browser: Debian's Chromium driven by Playwright, as a student would use it.

The server runs in-process with no checkpoint and no network (downloads fail at
once), so the weights are random and the banner must say UNTRAINED; that is also
what the screenshots in docs/ show. They are retaken on every run: look at them.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Page, expect, sync_playwright

import app
from conftest import free_port
import vit.api
import vit.weights
from vit import shapes

# gradio 6.31 itself calls deprecated pandas options on every request.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:gradio.queueing")

ROOT = Path(__file__).resolve().parents[1]
# The README's screenshots are rewritten only when asked (VIT_SCREENSHOTS=docs); otherwise they go to a
# temporary folder, so a test run leaves the working tree clean.
DOCS = ROOT / "docs" if os.environ.get("VIT_SCREENSHOTS") == "docs" else Path(tempfile.gettempdir()) / "vit-screenshots"
CAT = ROOT / "assets" / "cat.jpg"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic"]
TIMEOUT_MS = 90_000  # an analysis on a busy 2-core machine, plus loading torch the first time

PICTURES = ("#patch-grid", "#rollout", "#query", "#heads", "#layers", "#depth-plot")


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    """The app with no checkpoint and no network: it must fall back to random weights and say so."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TORCH_HOME", str(tmp_path_factory.mktemp("empty_torch_home")))

    def offline(name, *args, **kwargs):
        raise vit.weights.DownloadError("no network")

    mp.setattr(vit.weights, "download", offline)
    mp.setattr(vit.api, "download", offline, raising=False)
    mp.setattr(vit.api, "RETRY_DOWNLOAD_AFTER_S", 0.0)  # no failure outlives this module
    app._cache = None
    demo = app.build_demo()
    _, address, _ = app.launch(demo, port=free_port(), prevent_thread_lock=True, quiet=True)
    yield address
    demo.close()
    app._cache = None
    mp.undo()


@pytest.fixture(scope="module")
def browser():
    # Fail, not skip: without a browser these tests would prove nothing.
    assert CHROMIUM.is_file(), f"Debian's Chromium is missing at {CHROMIUM} (apt-get install chromium)"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_chromium_is_installed():
    assert CHROMIUM.is_file(), f"Debian's Chromium is missing at {CHROMIUM} (apt-get install chromium)"


def open_app(browser, url: str, width: int, height: int) -> Page:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    expect(page.locator("#banner")).to_contain_text("No image analysed yet")
    return page


def text_of(page: Page, selector: str) -> str:
    return page.locator(selector).inner_text()


def wait_for_text(page: Page, selector: str, text: str) -> None:
    expect(page.locator(selector)).to_contain_text(text, timeout=TIMEOUT_MS)


def picture_src(page: Page, selector: str) -> str:
    return page.locator(f"{selector} img").first.get_attribute("src") or ""


def wait_for_pictures(page: Page) -> None:
    """Every view drawn and decoded (images below the fold load lazily: scroll them into view)."""
    for selector in PICTURES:
        img = page.locator(f"{selector} img").first
        img.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    page.evaluate("window.scrollTo(0, 0)")


def save_screenshot(page: Page, path: Path) -> None:
    """A full-page screenshot for the README, in 256 colours (a third of the bytes; text stays sharp)."""
    shot = Image.open(io.BytesIO(page.screenshot(full_page=True))).convert("RGB")
    path.parent.mkdir(exist_ok=True)
    shot.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(path, optimize=True)


def upload(page: Page, path: Path) -> None:
    page.locator("#input-image input[type=file]").set_input_files(str(path))


def test_a_student_explores_an_image(browser, url):
    page = open_app(browser, url, 1280, 720)
    for source in ("Upload file", "Capture from camera", "Paste from clipboard"):
        expect(page.locator(f'#input-image button[aria-label="{source}"]')).to_be_visible()

    # Upload: the analysis starts by itself.
    upload(page, CAT)
    wait_for_text(page, "#stages", "(1, 768, 14, 14)")
    stages = text_of(page, "#stages")
    for shape in ("(1, 3, 224, 224)", "(1, 196, 768)", "(1, 197, 768)", "(1, 12, 197, 197)", "(1, 1000)"):
        assert shape in stages
    wait_for_text(page, "#banner", "UNTRAINED")
    wait_for_text(page, "#grid-caption", "14×14 grid")
    assert len(text_of(page, "#predictions").strip().splitlines()) >= 5
    wait_for_pictures(page)
    runs = app.RUNS["model"]

    # Click a patch (row 5, col 4 of 14 x 14: a cat's eye): the query view follows it.
    before = picture_src(page, "#query")
    grid = page.locator("#patch-grid img").first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    grid.click(position={"x": box["width"] * 4.5 / 14, "y": box["height"] * 5.5 / 14})
    wait_for_text(page, "#query-caption", "row 5, col 4")
    wait_for_text(page, "#query-caption", "token 75")
    expect(page.locator("#query img").first).not_to_have_attribute("src", before)

    # Another layer: redrawn from the kept analysis, the model does not run.
    before = picture_src(page, "#rollout")
    page.locator("#layer input[type=number]").fill("4")
    wait_for_text(page, "#rollout-caption", "layers 1–4")
    expect(page.locator("#rollout img").first).not_to_have_attribute("src", before)
    assert "layer 4" in text_of(page, "#query-caption")
    assert app.RUNS["model"] == runs

    wait_for_pictures(page)
    save_screenshot(page, DOCS / "screenshot.png")

    # Another patch size: the model runs again on a 9 x 9 grid.
    page.locator("#patch-size input[type=number]").fill("24")
    page.locator("#patch-size input[type=number]").press("Tab")
    wait_for_text(page, "#stages", "(1, 82, 768)")
    wait_for_text(page, "#grid-caption", "9×9 grid")
    wait_for_text(page, "#banner", "PI-resized 16→24")
    assert app.RUNS["model"] == runs + 1

    # Another model: its own patch size and depth, analysed at once.
    page.locator("#model input").click()
    page.get_by_role("option", name="ViT-B/32").click()
    wait_for_text(page, "#stages", "(1, 768, 7, 7)")
    expect(page.locator("#patch-size input[type=number]")).to_have_value("32")
    wait_for_text(page, "#grid-caption", "7×7 grid")
    page.close()


def test_a_file_that_is_not_an_image_gets_a_clear_message(browser, url, tmp_path):
    page = open_app(browser, url, 1280, 720)
    fake = tmp_path / "photo.jpg"
    fake.write_text("a text file renamed to .jpg\n")
    upload(page, fake)
    expect(page.get_by_text("could not read 'photo.jpg' as an image (not a JPEG/PNG").first).to_be_visible(
        timeout=TIMEOUT_MS)
    page.locator("#input-image button[aria-label='Remove Image']").first.click()
    upload(page, CAT)
    wait_for_text(page, "#stages", "(1, 1000)")
    page.close()


def test_phone_layout(browser, url):
    page = open_app(browser, url, 390, 844)
    upload(page, CAT)
    wait_for_text(page, "#stages", "(1, 768, 14, 14)")
    wait_for_pictures(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone: {width} px wide"
    save_screenshot(page, DOCS / "screenshot-phone.png")
    page.close()


def test_an_example_click_is_analysed(browser, url):
    """The examples are the app's own files (assets/): the upload gate lets them through."""
    page = open_app(browser, url, 1280, 720)
    page.locator("button.gallery-item").first.click()
    wait_for_text(page, "#stages", "(1, 1000)")
    wait_for_text(page, "#banner", "UNTRAINED")
    assert "please upload the image again" not in page.locator("body").inner_text()
    page.close()


def test_offline_the_banner_offers_the_model_trained_here(browser, url):
    """No ImageNet weights: the red banner offers ViT-Tiny shapes; one click runs it, with real predictions."""
    page = open_app(browser, url, 1280, 720)
    upload(page, ROOT / "assets" / "shapes-star.png")
    wait_for_text(page, "#banner", "UNTRAINED")
    wait_for_text(page, "#banner", "runs with no download")
    offer = page.locator("#offer-trained")
    expect(offer).to_be_visible(timeout=TIMEOUT_MS)
    offer.click()
    wait_for_text(page, "#banner", "TRAINED HERE")
    wait_for_text(page, "#banner", "trained here on drawn shapes; not ImageNet")
    wait_for_text(page, "#stages", "(1, 65, 96)")
    assert "(1, 8)" in text_of(page, "#stages")
    expect(page.locator("#patch-size input[type=number]")).to_have_value("8")
    wait_for_text(page, "#grid-caption", "8×8 grid")
    lines = [line.strip() for line in text_of(page, "#predictions").splitlines() if line.strip()]
    assert lines[0].startswith("Top-k predictions") and lines[1] in shapes.CLASSES  # the top class, a shape
    expect(offer).to_be_hidden(timeout=TIMEOUT_MS)
    wait_for_pictures(page)
    save_screenshot(page, DOCS / "screenshot-shapes.png")
    page.close()
