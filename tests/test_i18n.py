"""The two languages (issue 25 part 2): every message in both, with the same fields; the language of a request."""

from __future__ import annotations

import re
import string

import pytest

from vit import i18n, validate
from vit.errors import InputError

HAN = re.compile(r"[\u4e00-\u9fff]")
ORDINALS = {"every-kth-row", "every-kth-column", "position-every", "heads-off", "progress-in-line",
            "progress-in-line-soon"}  # plurals, ordinals


def fields_of(message: str) -> set[str]:
    """The names of a message's ``{fields}``."""
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(message) if name}


@pytest.mark.parametrize("catalogue", ["PAGE", "MESSAGES"])
def test_every_message_has_both_languages_and_the_same_fields(catalogue):
    messages = getattr(i18n, catalogue)
    assert messages
    for key, words in messages.items():
        assert set(words) == set(i18n.LANGUAGES), key
        assert all(isinstance(w, str) and w.strip() for w in words.values()), key
        if key in ORDINALS:  # English's "2nd" has a suffix Chinese does not need
            assert fields_of(words["zh"]) <= fields_of(words["en"]), key
        else:
            assert fields_of(words["en"]) == fields_of(words["zh"]), key
        assert "." not in key, f"{key}: gradio's translations read a dot as nesting"


def test_no_message_is_named_twice():
    """The catalogue's modules are merged into one: a name in two of them would hide one silently."""
    import itertools

    parts = i18n.PARTS
    for a, b in itertools.combinations(parts, 2):
        assert not set(a.MESSAGES) & set(b.MESSAGES), (a.__name__, b.__name__)
    assert sum(len(m.MESSAGES) for m in parts) == len(i18n.MESSAGES)


def test_the_chinese_is_chinese():
    """Each Chinese message has Chinese in it, unless it is made only of terms, names and formulas."""
    same = {k for k, w in {**i18n.PAGE, **i18n.MESSAGES}.items() if not HAN.search(w["zh"])
            and not k.endswith("-section")}  # section numbers
    terms = {"top-k", "top-k-label", "tab-attention", "tab-figure7", "head", "stage-class-token", "stage-logits",
             "stage-patch-tokens", "hw-gpu", "downloading-of", "step-block-code-chapter",
             "early-exit", "tile-head", "deletion", "insertion", "curve-name", "why-title", "token-one",
             "token-many", "head-one", "head-many", "grid-head", "matrix-encoder-short",
             "matrix-causal-short"}  # terms, names, the code
    assert same <= terms, same


def test_every_picture_has_its_chinese_title_and_text():
    from vit.views.registry import PICTURES

    for name, picture in PICTURES.items():
        assert set(picture.title) == set(picture.what_is) == set(i18n.LANGUAGES), name
        assert HAN.search(picture.title["zh"]) and HAN.search(picture.what_is["zh"]), name


def test_the_page_translations_have_every_key_in_both():
    from vit.ui import lang

    words = lang.translations()
    assert set(words) == {"en", "zh"} and set(words["en"]) == set(words["zh"])
    assert words["en"]["title-patch-grid"].startswith("Patch grid")
    with pytest.raises(KeyError):
        lang.t("no-such-message")


@pytest.mark.parametrize(("tag", "lang"), [("zh", "zh"), ("zh-CN", "zh"), ("zh_Hans", "zh"), ("ZH-hans-cn", "zh"),
                                           ("zh-CN,zh;q=0.9,en;q=0.8", "zh"), ("en-US", "en"), ("fr", "en"),
                                           ("", "en"), (None, "en"), (7, "en")])
def test_a_language_tag_reads_as_one_of_the_two(tag, lang):
    assert i18n.language(tag) == lang


def test_a_language_asked_for_by_name_is_checked():
    from vit import lesson

    assert lesson.language("zh-CN") == "zh" and lesson.language("EN") == "en"
    with pytest.raises(InputError, match="lang must be one of 'en', 'zh', got 'xx'"):
        lesson.language("xx")


def test_text_fills_in_the_fields():
    assert i18n.text("patch-size-info", "zh-CN", P=16) == "checkpoint 自己的：16"
    assert i18n.text("patch-size-info", P=16) == "checkpoint's own: 16"


class FakeRequest:
    def __init__(self, cookies=None, headers=None, query=None):
        self.cookies, self.headers, self.query_params = cookies or {}, headers or {}, query or {}


def test_a_request_says_its_language_by_cookie_then_accept_language():
    from vit.ui import lang

    assert lang.of(None) == "en"  # the API's clients
    assert lang.of(FakeRequest()) == "en"
    assert lang.of(FakeRequest(headers={"accept-language": "zh-CN,zh;q=0.9"})) == "zh"
    assert lang.of(FakeRequest({"vit_lang": "en"}, {"accept-language": "zh-CN"})) == "en"  # the switch wins
    assert lang.of(FakeRequest({"vit_lang": "zh"})) == "zh"
    assert lang.of(FakeRequest(headers={"accept-language": "en"}, query={"lang": "zh"})) == "zh"  # ?lang=zh


# --------------------------------------------------------------------------- the lesson in Chinese


@pytest.fixture(scope="module")
def shapes_analysis():
    from conftest import ROOT

    import vit
    from vit.images import load_image

    return vit.analyze(vit.load_model("vit_tiny_shapes"), load_image(ROOT / "assets" / "shapes-star.png"))


def test_the_lesson_in_chinese_quotes_the_chinese_chapter_with_this_image_s_numbers(shapes_analysis):
    from vit.lesson import LESSON, lesson_text

    a = shapes_analysis
    texts = [lesson_text(step, a, "zh") for step in LESSON]
    assert all(HAN.search(t) for t in texts)
    first = texts[0]
    assert "ViT Encoder 的输入是上一节得到的 token 序列" in first  # the zh edition's own sentence
    assert f"N = {a.num_patches} 个 patch token + 1 个 class token = {a.num_tokens} 个 token" in first
    assert f"(1, {a.num_tokens}, " in first  # the shape notation as it is
    assert "**4.4 " not in texts[3] and texts[3].startswith("**11.4.4 ")  # the zh edition's numbering
    assert lesson_text(LESSON[0], a, "en") == lesson_text(LESSON[0], a)  # English by default


def test_the_model_trained_here_is_named_in_chinese_on_the_chinese_page(shapes_analysis):
    """Review 2026-12-04, defect 14: "ViT-Tiny shapes, trained here" stayed English on the Chinese page. Now the menu,
    the banner, the out-of-date notice and the cost meter name it in the page's language; the menu's value stays the
    English name the API takes."""
    import app
    from vit.config import DISPLAY_NAMES
    from vit.ui import lang, meter
    from vit.validate import setting

    english, zh = DISPLAY_NAMES["vit_tiny_shapes"], i18n.PAGE["model-vit_tiny_shapes"]["zh"]
    assert i18n.PAGE["model-vit_tiny_shapes"]["en"] == english and HAN.search(zh) and "ViT-Tiny" in zh
    for words, other in ((zh, english), (english, zh)):
        page = "zh" if words == zh else "en"
        banner = meter.banner_html(shapes_analysis, page)
        notice = meter.out_of_date(setting("vit_tiny_shapes", 8, 4), setting("vit_tiny_shapes", 4, 4), lang=page)
        cost = meter.cost_meter(validate.setting("vit_tiny_shapes", 8, 4), lang=page)
        for text in (banner, notice, cost):
            assert words in text and other not in text, text
    assert meter.setting_words(setting("vit_b_16", 16, 12), "zh") == "ViT-B/16, P = 16, L = 12"  # a name as it is

    config = app.build_demo().get_config_file()
    (menu,) = [c for c in config["components"] if c.get("props", {}).get("elem_id") == "model"]
    shown = {value: label for label, value in menu["props"]["choices"]}
    assert english in shown and "model-vit_tiny_shapes" in str(shown[english])  # shown through gr.I18n
    assert lang.translations()["zh"]["model-vit_tiny_shapes"] == zh
    assert shown["ViT-B/16"] == "ViT-B/16"


def test_the_lesson_pdf_in_chinese_has_searchable_chinese_text(shapes_analysis, tmp_path):
    from test_lesson_export import pdf_pages

    from vit import fonts
    from vit.lesson import export as lesson_export

    if len(fonts.families()) < 2:
        pytest.skip("no CJK font installed (Debian: apt-get install fonts-noto-cjk)")
    path = lesson_export.write_pdf(shapes_analysis, tmp_path / "lesson-zh.pdf", lang="zh")
    pages = pdf_pages(path)
    assert len(pages) == 10
    text = pages[0]["text"]
    assert "第 11.4 节" in text and "输入" in text and "class token" in text, text[:400]
    squeezed = re.sub(r"\s+", "", " ".join(p["text"] for p in pages))
    assert "ViTEncoder的输入是上一节得到的token序列" in squeezed  # one sentence, wrapped, read back whole
    assert "\ufffd" not in text


# --------------------------------------------------------------------------- refusals


def _refusals() -> list:
    """Each refusal a page can meet, as its raiser makes it (so a change there shows here)."""
    import dataclasses

    from vit import cost, images, validate
    from vit.errors import InputError
    from vit.serve import files, queue

    made = [InputError(key="refusal-no-image"), InputError(key=files.UPLOAD_AGAIN), queue.Busy(key=queue.BUSY),
            queue.Replaced(key=queue.REPLACED),
            images._not_an_image("'photo.jpg'", b"a text file"), images._not_an_image("'x.pdf'", b"%PDF-1.4"),
            images._unopened("'x.psd'", b"8BPS" + bytes(60)),
            images._corrupt("'x.png'", ValueError("broken data stream")),
            images._bomb_from_pillow("Image size (300000000 pixels) exceeds limit")]
    for raise_it in (lambda: images._check_pixel_count(9000, 8000),
                     lambda: images._check_decoded_pixels(dataclasses.replace(
                         images.decode_cost(_png(64, 48)), decoded_size=(8000, 8000)), "'big.png'"),
                     lambda: images._check_decode_bytes(dataclasses.replace(
                         images.decode_cost(_png(64, 48)), peak_bytes=int(5e9)), "'big.png'"),
                     lambda: cost.check_budget(cost.estimate(validate.setting("ViT-H/14", 4, 32)), 1.0)):
        with pytest.raises(InputError) as caught:
            raise_it()
        made.append(caught.value)
    return made


def test_every_refusal_a_page_can_meet_carries_its_key_and_is_written_in_both_languages(monkeypatch):
    """A refusal is made with a message key and its fields, and written in the page's language at the edge: its
    English is ``str()``, its Chinese has every number and name of the English (no sentence read back)."""
    from vit import images
    from vit.errors import InputError

    made = _refusals()
    monkeypatch.setattr(images, "count_jpeg_scans", lambda data, limit: limit + 1)
    for size in ((64, 48), (8000, 6000)):  # a normal size; a large one, whose allowance is smaller
        with pytest.raises(InputError) as caught:
            images._check_scan_count(b"", size, "'scans.jpg'")
        made.append(caught.value)
    for error in made:
        assert error.key in i18n.MESSAGES, error
        assert error.words("en") == str(error) == i18n.text(error.key, "en", **error.fields)
        zh = error.words("zh")
        assert HAN.search(zh) and zh != str(error), str(error)
        assert all(number in zh for number in re.findall(r"\d[\d,.]*", str(error))), (str(error), zh)
    assert "'photo.jpg'" in made[4].words("zh")
    assert InputError("an unkeyed refusal").words("zh") == "an unkeyed refusal"


def test_the_servers_own_refusals_answer_in_the_language_of_the_page_that_asked():
    """The middleware's refusals (too big, one file, foreign host, too many jobs, upload space full) in the
    language of the sender's cookie, else its Accept-Language, else English."""
    from vit.serve import limits

    def scope(*headers):
        return {"headers": [(k.encode(), v.encode()) for k, v in headers]}

    assert limits._language(scope(("cookie", "a=1; vit_lang=zh"), ("accept-language", "en-US"))) == "zh"
    assert limits._language(scope(("cookie", "vit_lang=en"), ("accept-language", "zh-CN,zh;q=0.9"))) == "en"
    assert limits._language(scope(("accept-language", "zh-CN,zh;q=0.9"))) == "zh"
    assert limits._language(scope()) == "en"
    for key in (limits.TOO_BIG, limits.ONE_FILE, limits.FOREIGN, limits.TOO_MANY_JOBS, limits.FULL,
                limits.SHARE):
        assert HAN.search(i18n.text(key, "zh")) and not HAN.search(i18n.text(key, "en")), key


def _png(width: int, height: int) -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), (10, 20, 30)).save(buf, format="PNG")
    return buf.getvalue()


def test_a_refusal_becomes_a_toast_in_the_page_s_language():
    import gradio as gr

    from vit.errors import InputError
    from vit.ui import events

    class Request(gr.Request):
        def __init__(self, lang):
            super().__init__()
            self.__dict__["_lang"] = lang

        @property
        def cookies(self):
            return {"vit_lang": self._lang}

    @events.handler
    def refuses(request: gr.Request = None):
        raise InputError(key="refusal-no-image")

    for lang, words, title in (("zh", "还没有图像", "请检查"), ("en", "No image yet", "Please check")):
        with pytest.raises(gr.Error) as caught:
            refuses(request=Request(lang))
        assert words in caught.value.message and caught.value.title == title


# --------------------------------------------------------------------------- fonts


def test_without_a_cjk_font_chinese_pictures_fall_back_and_never_fail(monkeypatch):
    """No CJK font installed: PIL draws in DejaVu Sans (boxes for Chinese), matplotlib keeps its own family."""
    from vit import fonts
    from vit.views import draw

    monkeypatch.setattr(fonts, "FONT_DIRS", ())
    fonts.cjk_file.cache_clear()
    draw.typeface.cache_clear()
    try:
        assert fonts.cjk_file() is None
        with draw.language("zh"):
            f = draw.font(18)
            assert "DejaVu" in f.getname()[0]
            assert draw.wrap_text("这是一个 patch token 的测试", f, 100)
    finally:
        fonts.cjk_file.cache_clear()
        draw.typeface.cache_clear()
    assert fonts.families()[0] == "DejaVu Sans"


def test_english_pictures_are_drawn_in_dejavu_as_before():
    from vit.views import draw

    assert "DejaVu" in draw.font(18).getname()[0]
    with draw.language("en"):
        assert "DejaVu" in draw.font(18, bold=False).getname()[0]


def test_the_progress_bar_reads_in_the_page_s_language():
    """A run names its progress message and fields; the bar shows it in the page's language."""
    from vit.ui import lang, meter

    assert meter.waiting_words(2, 12.0) == "waiting: 2nd in line, about 12 s"
    assert meter.waiting_words(2, 12.0, "zh") == "排队中：第 2 位，约 12 秒"
    assert meter.waiting_words(11, 0.3, "zh") == "排队中：第 11 位，不到一秒"
    shown = []
    bar = lang.progress_in(lambda value, desc=None, **kw: shown.append(desc), "zh")
    bar(0.5, "progress-layer", model="ViT-B/16", n=3, total=12)
    bar(0.1, "progress-waiting")
    assert shown == ["运行 ViT-B/16：第 3 层，共 12 层", i18n.text("progress-waiting", "zh")]
    assert lang.progress_in(bar, "en") is bar
    lang.progress_in(None, "zh")(0.5, "progress-drawing")  # no bar (a script's call): nothing shown, no error
