"""The lesson to take away (issue 25, part 3): a 16:9 PDF page per step with searchable text, PNGs, the CLI's
``lesson`` command and the Lesson tab's download, on the model trained here (fast, no download)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from conftest import ROOT, chromium_or_skip
from PIL import Image, ImageDraw

from vit.lesson import LESSON, lesson_text
from vit.lesson import export as lesson_export

STAR = ROOT / "assets" / "shapes-star.png"


@pytest.fixture(scope="module")
def a():
    import vit
    from vit.images import load_image

    return vit.analyze(vit.load_model("vit_tiny_shapes"), load_image(STAR))


# --------------------------------------------------------------------------- reading a PDF, minimally


def pdf_objects(data: bytes) -> dict[int, bytes]:
    return {int(m.group(1)): m.group(2) for m in re.finditer(rb"(\d+) 0 obj\s(.*?)endobj", data, re.S)}


def stream(obj: bytes) -> bytes:
    """A stream object's data, inflated. A carriage return before the newline that ends it is kept: a compressed
    stream whose last byte is 0x0d, read as part of a CR LF end of line, lost that byte (zlib stops at the end of
    its own data and leaves anything after it)."""
    body = re.search(rb"stream\r?\n(.*?)\nendstream", obj, re.S).group(1)
    if b"/FlateDecode" in obj.split(b"stream", 1)[0]:
        return zlib.decompressobj().decompress(body)
    return body.removesuffix(b"\r")


def literal(raw: bytes) -> bytes:
    """A PDF literal string's bytes, its backslash escapes undone."""
    escapes = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}
    return re.sub(rb"\\([0-7]{1,3}|.)", lambda m: bytes([int(m.group(1), 8)]) if m.group(1).isdigit()
                  else escapes.get(m.group(1), m.group(1)), raw, flags=re.S)


def to_unicode(cmap: bytes) -> dict[int, str]:
    """A ToUnicode CMap (bfchar and bfrange) as code -> text: what a PDF reader extracts for each glyph code."""
    def text(hexes: bytes) -> str:
        return bytes.fromhex(hexes.decode()).decode("utf-16-be")

    out = {}
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", cmap, re.S):
        for lo, hi, dst in re.findall(rb"<(\w+)>\s*<(\w+)>\s*(\[[^\]]*\]|<\w+>)", block):
            codes = range(int(lo, 16), int(hi, 16) + 1)
            if dst.startswith(b"["):
                out.update(zip(codes, map(text, re.findall(rb"<(\w+)>", dst))))
            else:
                out.update((c, chr(int(dst[1:-1], 16) + c - codes[0])) for c in codes)
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", cmap, re.S):
        out.update((int(src, 16), text(dst)) for src, dst in re.findall(rb"<(\w+)>\s*<(\w+)>", block))
    return out


def shown_text(content: bytes, fonts: dict[bytes, dict[int, str]]) -> str:
    """The text a page's content stream shows, as a reader extracts it: each Tj/TJ string's 2-byte codes (Type 0
    fonts, Identity-H) through its font's ToUnicode map, one text object after another, separated by spaces."""
    texts, font = [], {}  # the font is graphics state: it holds from one text object to the next
    for block in re.findall(rb"BT(.*?)ET", content, re.S):
        shown = []
        for m in re.finditer(rb"/(\w+)\s+[\d.]+\s+Tf|\(((?:\\.|[^\\()])*)\)", block, re.S):
            if m.group(1):
                font = fonts[m.group(1)]
                continue
            raw = literal(m.group(2))
            codes = [int.from_bytes(raw[i:i + 2], "big") for i in range(0, len(raw), 2)]
            shown.append("".join(font.get(c, "\ufffd") for c in codes))
        texts.append("".join(shown))
    return re.sub(r"\s+", " ", " ".join(texts))


def pdf_pages(path: Path) -> list[dict]:
    """Each page's MediaBox (points) and text, in order."""
    data = path.read_bytes()
    objects = pdf_objects(data)
    fonts = {}
    for body in objects.values():  # the resources' font dictionaries: /F1 60 0 R ...
        if re.fullmatch(rb"<<\s*(/\w+ \d+ 0 R\s*)+>>\s*", body) and b"/F" in body:
            for name, ref in re.findall(rb"/(\w+) (\d+) 0 R", body):
                unicode = re.search(rb"/ToUnicode (\d+) 0 R", objects[int(ref)])
                if unicode:
                    fonts[name] = to_unicode(stream(objects[int(unicode.group(1))]))
    kids = re.search(rb"/Type /Pages\b.*?/Kids \[([^\]]*)\]", data, re.S).group(1)
    pages = []
    for number in map(int, re.findall(rb"(\d+) 0 R", kids)):
        page = objects[number]
        box = [float(v) for v in re.search(rb"/MediaBox \[([^\]]*)\]", page).group(1).split()]
        content = int(re.search(rb"/Contents (\d+) 0 R", page).group(1))
        pages.append({"box": box, "text": shown_text(stream(objects[content]), fonts)})
    return pages


def test_the_reader_reads_text_and_can_fail():
    """The helpers above find a string a content stream shows through its font's map, and only that."""
    fonts = {b"F1": to_unicode(b"beginbfrange <0048> <0049> [<0048> <0069>] <0000> <0001> <2080> endbfrange "
                               b"beginbfchar <0005> <00660069> endbfchar")}
    content = b"BT /F1 12 Tf [ (\\000H) 5 (\\000I) ] TJ ET BT (\x00\\(\x00\x01\x00\x05\x00\\)) Tj ET"
    assert shown_text(content, fonts) == "Hi \ufffd\u2081fi\ufffd"
    assert "Hello" not in shown_text(content, fonts)


# --------------------------------------------------------------------------- the PDF


@pytest.fixture(scope="module")
def pdf(a, tmp_path_factory) -> Path:
    return lesson_export.write_pdf(a, tmp_path_factory.mktemp("lesson") / "lesson.pdf")


def test_one_16_9_page_per_step(pdf):
    pages = pdf_pages(pdf)
    assert len(pages) == len(LESSON)
    for page in pages:
        x0, y0, x1, y1 = page["box"]
        assert (x1 - x0, y1 - y0) == pytest.approx((960, 540), abs=0.5)  # 13.333 x 7.5 in: 16:9


def test_the_text_is_real_text_in_an_embedded_truetype_font(pdf, a):
    """Searchable: each page shows its step's section, title and this image's numbers as text, not pictures of
    letters (Type 3 glyph drawings) or pixels."""
    data = pdf.read_bytes()
    assert b"/FontType 3" not in data and b"/Subtype /Type3" not in data
    assert b"/CIDFontType2" in data and b"/FontFile2" in data and b"/ToUnicode" in data  # TrueType, embedded
    for step, page in zip(LESSON, pdf_pages(pdf)):
        assert f"{step.section} {step.title}" in page["text"]
        words = re.sub(r"</?su[bp]>", "", step.chapter.split(":")[0].split(";")[0])[:30]  # raised or lowered runs
        assert re.sub(r"\s", "", words) in re.sub(r"\s", "", page["text"])
    first, second = (p["text"] for p in pdf_pages(pdf)[:2])
    assert f"N = {a.num_patches} patch tokens" in first and f"(1, {a.num_tokens}, 96)" in first
    assert "encoder.layers.0.attn" in second and "total" in second  # the stage table, as text


def test_the_lesson_text_becomes_plain_and_bold_runs():
    paras = lesson_export.paragraphs("**11.4.1 Title**\n\n> The `chapter`.\n\nHere **(1, 65, 96)** (B = 1).")
    assert [p.kind for p in paras] == ["heading", "quote", "text"]
    assert paras[0].runs == (lesson_export.Run("11.4.1 Title", bold=True),)
    assert paras[1].runs == (lesson_export.Run("The chapter."),)
    assert paras[2].runs == (lesson_export.Run("Here "), lesson_export.Run("(1, 65, 96)", bold=True),
                             lesson_export.Run(" (B = 1)."))


def test_every_page_comes_from_the_lessons_own_text(a):
    pages = lesson_export.pages(a)
    assert [p.step for p in pages] == LESSON
    for page, step in zip(pages, LESSON):
        assert page.text == lesson_export.paragraphs(lesson_text(step, a))
        assert (page.table is not None) == (step.view == "stage-table") and (page.view is None) == (
            step.view == "stage-table")
        if page.view is not None:  # print size: well over the app's 640 px
            assert max(page.view.image.size) >= 700


def test_the_patch_grid_shows_on_a_white_drawing():
    """Issue 53 (3): page 1's patch grid was white on the drawing's white canvas; measured from its pixels (drawn
    for print and enlarged, as the PDF holds it), every border differs from the canvas, at P = 8 and at P = 4."""
    from test_render import line_contrast

    import vit

    drawing = Image.new("RGB", (256, 256), "white")  # as the page's canvas sends it: black strokes on white
    ImageDraw.Draw(drawing).ellipse([60, 60, 200, 200], outline="black", width=8)
    for p in (8, 4):
        x = vit.analyze(vit.load_model("vit_tiny_shapes", patch_size=p), drawing)
        view = next(page.view for page in lesson_export.pages(x) if page.step.view == "patch-grid")
        cells = view.cells
        box = tuple(round(v) for v in (cells.x0, cells.y0, cells.w, cells.h))
        assert line_contrast(view.image, (cells.rows, cells.cols), box) > 100, x.patch_size


def test_only_a_known_language(a, tmp_path):
    with pytest.raises(ValueError, match="lang must be one of 'en', 'zh', got 'xx'"):
        lesson_export.write_pdf(a, tmp_path / "x.pdf", lang="xx")
    assert not (tmp_path / "x.pdf").exists()


# --------------------------------------------------------------------------- the command line


def run(*args, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "vit", "lesson", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.server  # a subprocess: the entry point itself
def test_cli_writes_the_pdf(tmp_path):
    out = tmp_path / "slides" / "lesson.pdf"
    proc = run(str(STAR), "--model", "vit_tiny_shapes", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"wrote {out}" in proc.stdout
    pages = pdf_pages(out)
    assert len(pages) == len(LESSON) and LESSON[-1].title in pages[-1]["text"]


@pytest.mark.server  # a subprocess: the entry point itself
def test_cli_format_png_writes_one_png_per_step(tmp_path):
    proc = run(str(STAR), "--model", "vit_tiny_shapes", "--format", "png", "--out", str(tmp_path / "pngs"))
    assert proc.returncode == 0, proc.stderr
    written = sorted((tmp_path / "pngs").glob("*.png"))
    assert [p.name for p in written] == [f"lesson-{n:02d}-{s.section}.png" for n, s in enumerate(LESSON, 1)]
    assert proc.stdout.count("wrote ") == len(LESSON)
    assert all(Image.open(p).size == (1920, 1080) for p in written)  # 16:9 at 144 dpi


@pytest.mark.parametrize("args, message", [
    (["--format", "jpg"], "format must be one of 'pdf', 'png', got 'jpg'"),
    (["--lang", "fr"], "lang must be one of 'en', 'zh', got 'fr'"),
    (["--out", "slides.txt"], "--out must be a .pdf path"),
    (["--out", "{file}/lesson.pdf"], "--out: cannot write"),  # a file where a folder must be
    (["--format", "png", "--out", "{file}"], "--out must be a folder"),
    (["--model", "vit_b_99"], "model must be one of"),
])
def test_cli_errors_are_one_sentence_and_exit_2(tmp_path, args, message):
    (tmp_path / "a-file").write_text("not a folder")
    args = [v.replace("{file}", str(tmp_path / "a-file")) for v in args]
    proc = run(str(STAR), *(["--model", "vit_tiny_shapes"] if "--model" not in args else []), *args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ") and message in proc.stderr
    assert "Traceback" not in proc.stderr and not list(tmp_path.glob("*.pdf")) and not (tmp_path / "lesson").exists()


# --------------------------------------------------------------------------- the Lesson tab's button


def test_the_button_returns_a_pdf_of_the_shown_analysis(a):
    from vit.ui import state
    from vit.ui.tabs import lesson as tab

    key = state.analysis_store().put(a)
    path = Path(tab.download_lesson(key, 2, 1, 0.5, "magma"))
    assert path.parent == state.picture_folder().path  # the server's own temp folder, which gradio serves
    assert re.fullmatch(r"lesson-vit_tiny_shapes-P8-[0-9a-f]{32}\.pdf", path.name)  # a whole uuid4: unguessable
    pages = pdf_pages(path)
    assert len(pages) == len(LESSON) and LESSON[0].title in pages[0]["text"]


def test_the_button_without_an_analysis_or_with_bad_input_says_one_sentence(a):
    import gradio as gr

    from vit.ui import state
    from vit.ui.tabs import lesson as tab

    with pytest.raises(gr.Error, match="Analyse an image first"):
        tab.download_lesson(None, 1, 1, 0.5, "cividis")
    with pytest.raises(gr.Error, match="press Analyze to run it again"):
        tab.download_lesson("a-key-long-gone", 1, 1, 0.5, "cividis")
    key = state.analysis_store().put(a)
    with pytest.raises(gr.Error, match="colormap must be one of") as caught:
        tab.download_lesson(key, 1, 1, 0.5, "<script>")
    assert "\n" not in str(caught.value)


def test_the_button_is_wired_to_the_download_file():
    import app

    demo = app.build_demo()
    config = demo.get_config_file()
    ids = {c["id"]: c.get("props", {}).get("elem_id") for c in config["components"]}
    deps = {d["api_name"]: d for d in config["dependencies"]}
    export = deps["lesson_download"]
    assert [ids[o] for o in export["outputs"]] == ["download-file"]
    assert export["api_visibility"] == "private" and ids[export["targets"][0][0]] == "lesson-download"


# --------------------------------------------------------------------------- a real PDF reader


@pytest.mark.browser
def test_a_pdf_reader_draws_the_page(pdf, tmp_path):
    """Chromium's PDF reader (pdfium) opens the file and draws a 16:9 page with text and the picture on it; the
    page is saved for the README under VIT_SCREENSHOTS=docs (docs/screenshot-lesson-pdf.png)."""
    import numpy as np

    browser = chromium_or_skip()
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=browser, args=["--no-sandbox"])
        page = b.new_page(viewport={"width": 1600, "height": 900})
        page.goto(f"{pdf.as_uri()}#page={len(LESSON)}&toolbar=0&view=Fit")
        page.wait_for_timeout(4000)  # the reader draws after the load event
        shot = Image.open(__import__("io").BytesIO(page.screenshot())).convert("RGB")
        b.close()
    pixels = np.asarray(shot)
    white = (pixels >= 250).all(axis=2)  # the page; the reader's background is grey
    rows, cols = np.nonzero(white)
    box = (cols.min(), rows.min(), cols.max() + 1, rows.max() + 1)
    sheet = shot.crop(box)
    assert sheet.width / sheet.height == pytest.approx(16 / 9, rel=0.02)
    ink = np.asarray(sheet.convert("L"))
    assert (ink < 60).mean() > 0.005  # dark text drawn on it
    assert np.asarray(sheet).std(axis=2).max() > 40  # and the coloured picture
    docs = ROOT / "docs" if os.environ.get("VIT_SCREENSHOTS") == "docs" else tmp_path
    sheet.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
        docs / "screenshot-lesson-pdf.png", optimize=True)
