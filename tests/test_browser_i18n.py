"""The page in both languages (issue 25 part 2), in Chromium: a zh-CN browser sees Chinese, ``?lang=en`` and
the switch override it, and the choice persists in this browser.

The helpers and fixtures are the browser tests' own (:mod:`test_browser`: the same server, offline, random
weights; the same Chromium, found the same way).
"""

from __future__ import annotations

import re

import pytest
import test_browser
from playwright.sync_api import expect
from test_browser import ROOT, TIMEOUT_MS, WATCH_ERRORS, upload, wait_for_text

url, browser = test_browser.url, test_browser.browser  # the browser tests' fixtures: this module's own instances

pytestmark = [pytest.mark.browser, pytest.mark.filterwarnings("ignore::DeprecationWarning:gradio.queueing")]

HAN = re.compile(r"[\u4e00-\u9fff]")


def open_in(browser, address: str, locale: str):
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(WATCH_ERRORS)
    page.goto(address)
    expect(page.locator("#analyze-btn")).to_be_visible()
    return page


def test_a_chinese_browser_sees_chinese_and_the_address_or_the_switch_change_it(browser, url):
    page = open_in(browser, url, "zh-CN")
    expect(page.locator("#analyze-btn")).to_have_text("分析")
    expect(page.get_by_role("tab", name="课程")).to_be_visible()
    expect(page.locator("#lang input[value='zh']")).to_be_checked()
    wait_for_text(page, "#banner", "还没有分析图像")  # the server's text too, in the page's language
    wait_for_text(page, "#cost-meter", "个 token")
    for examples in ("#start-examples", "#examples"):  # their names too (gr.Examples' are not gr.I18n's)
        expect(page.locator(examples)).to_contain_text("画的心形和圆")
    page.locator("#lang label").filter(has_text="English").click()
    expect(page.locator("#analyze-btn")).to_have_text("Analyze")
    wait_for_text(page, "#banner", "No image analysed yet")
    wait_for_text(page, "#cost-meter", "tokens")
    expect(page.locator("#start-examples")).to_contain_text("drawn heart and circle")
    expect(page.get_by_role("tab", name="Lesson")).to_be_visible()
    page.reload()  # the switch's choice is kept in this browser
    expect(page.locator("#analyze-btn")).to_have_text("Analyze")
    page.locator("#lang label").filter(has_text="中文").click()
    expect(page.locator("#analyze-btn")).to_have_text("分析")
    page.context.close()

    page = open_in(browser, url + "?lang=en", "zh-CN")
    expect(page.locator("#analyze-btn")).to_have_text("Analyze")
    expect(page.get_by_role("tab", name="What if?")).to_be_visible()
    assert "vit_lang=en" in page.evaluate("document.cookie")
    page.context.close()

    page = open_in(browser, url + "?lang=zh", "en-US")
    expect(page.locator("#analyze-btn")).to_have_text("分析")
    wait_for_text(page, "#banner", "还没有分析图像")
    assert "vit_lang=zh" in page.evaluate("document.cookie")
    page.locator("#start-examples").get_by_text("画的星形", exact=True).click()  # renamed, it still gives its picture
    expect(page.locator("#input-image img")).to_be_visible()
    expect(page.locator("#banner")).not_to_contain_text("还没有分析图像", timeout=TIMEOUT_MS)
    page.context.close()


def test_the_address_chooses_only_the_pages_own_languages(browser, url):
    """The review (Low 10): ``?lang=constructor`` (``in`` took Object's inherited names for languages) named every tab
    "function Object() { [native code] }" and set the cookie to it. Object's names choose no language: English."""
    for name in ("constructor", "__proto__", "toString", "hasOwnProperty"):
        page = open_in(browser, f"{url}?lang={name}", "en-US")
        page.wait_for_timeout(2000)  # the page names its tabs up to 1.5 s after it chose a language
        tabs = page.get_by_role("tab").all_inner_texts()
        assert "Lesson" in tabs and not any("function" in t or "object" in t.lower() for t in tabs), (name, tabs)
        assert "vit_lang=en" in page.evaluate("document.cookie"), (name, page.evaluate("document.cookie"))
        page.context.close()


def test_the_lesson_and_its_questions_in_chinese(browser, url):
    """A zh-CN browser: the lesson's steps quote the Chinese edition with this image's numbers; a question asks
    and answers in Chinese."""
    page = open_in(browser, url, "zh-CN")
    upload(page, ROOT / "assets" / "shapes-star.png")
    expect(page.locator("#offer-trained")).to_be_visible(timeout=TIMEOUT_MS)
    page.locator("#offer-trained").click()
    wait_for_text(page, "#stage-table", "(1, 65, 96)")
    page.get_by_role("tab", name="课程").click()
    wait_for_text(page, "#lesson-progress", "第 1 步，共 10 步")
    wait_for_text(page, "#lesson-text", "ViT Encoder 的输入是上一节得到的 token 序列")
    wait_for_text(page, "#lesson-text", "N = 64 个 patch token + 1 个 class token = 65 个 token")
    page.locator("#lesson-predict-on input[type=checkbox]").check()
    wait_for_text(page, "#lesson-progress", "第 1 步，共 15 步")
    wait_for_text(page, "#lesson-text", "在 P = 8 时，encoder 看到多少个 token？")
    page.locator("#lesson-guess input[type=number]").fill("65")
    page.locator("#lesson-check").click()
    wait_for_text(page, "#lesson-answer", "你的猜测：65 · 答案：65 · ✓ 答对了")
    wait_for_text(page, "#lesson-tally", "目前答对")
    page.context.close()


# --------------------------------------------------------------------------- no English sentence on a Chinese page

# What stays English on a Chinese page, as in the book's Chinese edition: the technical terms, the names (models,
# classes, methods, papers, example pictures, modules), units and formulas. Longest first: a term inside a longer
# one (attention inside "attention rollout") is taken as the longer one.
TERMS = sorted({
    "patch tokens", "patch token", "class token", "prefix tokens", "prefix token", "position embeddings",
    "position embedding", "patch embedding", "self-attention", "multi-head self-attention", "encoder blocks",
    "encoder block", "encoder", "decoder", "LayerNorm", "residual connection", "residual stream", "residual",
    "attention rollout", "rollout", "attention", "heads", "head", "MLP", "logits", "softmax", "top-k", "top-1",
    "early exit", "query", "key", "value", "backbone", "checkpoint", "patch size", "patch", "token", "tokens",
    "registers", "register", "GFLOPs", "GB", "MB", "px", "CPU", "GPU", "Pre-LN", "norm1", "norm2", "norm",
    "causal mask", "mask", "artifact", "deletion", "insertion", "AUC", "Grad-CAM", "Gradient-weighted rollout",
    "TRAINED HERE", "PRETRAINED", "UNTRAINED", "token labelling", "Vision Transformers Need Registers",
    "Are Sixteen Heads Really Better than One?", "Abnar & Zuidema", "et al.", "ViT paper", "Fig. 7", "Figure 7",
    "ViT Anatomy", "ViT Encoder", "Transformer Encoder", "ViTEncoderLayer.forward", "ViTEncoder.norm",
    "batch size", "embedding", "stream", "block", "PI-resize", "ImageNet", "English", "Gradio",
    "Quantifying Attention Flow in Transformers", "Generic Attention-model Explainability for Interpreting "
    "Bi-Modal and Encoder-Decoder Transformers", "Grad-CAM: Visual Explanations from Deep Networks via "
    "Gradient-based Localization", "Chefer, Gur & Wolf", "Selvaraju", "ICCV", "MAE", "He", "Petsiuk",
    "Michel", "Darcet", "CNN", "stride", "kernel", "ms", "mean", "max", "min", "cividis", "viridis", "magma",
    "gray", "grey", "ViT-Tiny shapes, trained here", "drawn", "hubble deep field", "astronaut", "cameraman",
    "cat", "coffee", "row-major",
}, key=len, reverse=True)
ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]+(?:[ ,;:]+[A-Za-z][A-Za-z'’-]+){2,}")  # three English words in a row


def english_sentences(texts: list[str], names: set[str]) -> list[str]:
    """Runs of three or more English words left in ``texts`` once the terms and names are taken out."""
    found = []
    for text in texts:
        rest = text
        for term in sorted(names, key=len, reverse=True) + TERMS:
            rest = re.sub(re.escape(term), " ", rest, flags=re.IGNORECASE)
        rest = re.sub(r"`[^`]*`|\b[\w.]+\.\w+\b|[A-Za-z_]+\([^)]*\)", " ", rest)  # code, module paths, calls
        found += [m.group(0) for m in ENGLISH_RUN.finditer(rest)]
    return found


VISIBLE_TEXT = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    const el = node.parentElement;
    if (!text || !el || el.closest('script, style, .hidden-helper, [hidden]')) continue;
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (!box.width || !box.height || style.visibility === 'hidden' || style.display === 'none') continue;
    if (!el.checkVisibility || el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) out.push(text);
  }
  for (const el of document.querySelectorAll('input[placeholder], textarea[placeholder]')) {
    if (el.offsetParent && el.placeholder) out.push(el.placeholder);
  }
  for (const el of document.querySelectorAll('input[type=text], input:not([type])')) {  // a dropdown's choice
    if (el.offsetParent && el.value) out.push(el.value);
  }
  return out;
}"""


def test_a_chinese_page_shows_no_english_sentence(browser, url):
    """zh-CN: an analysis on the shapes model, every tab opened (and Inside's sub-tabs, every "What is this?"),
    and no visible text has three English words in a row outside the terms, names, numbers and formulas."""
    import vit
    from vit import shapes
    from vit.explanations.methods import METHODS

    names = {*shapes.CLASSES, *(m.title for m in METHODS.values()), *(m.paper for m in METHODS.values()
                                                                     if m.name != "attention")}
    page = open_in(browser, url, "zh-CN")
    upload(page, ROOT / "assets" / "shapes-star.png")
    expect(page.locator("#offer-trained")).to_be_visible(timeout=TIMEOUT_MS)
    page.locator("#offer-trained").click()
    wait_for_text(page, "#banner", "TRAINED HERE")
    wait_for_text(page, "#stage-table", "(1, 65, 96)")
    wait_for_text(page, "#patch-grid-caption", "模型看到的")
    seen = {}
    tabs = {"Patch 与形状": "#patch-grid-caption", "Attention": "#rollout-view-caption",
            "逐层来看": "#depth-plot-caption", "为什么是这个类别？": "#why-map-caption",
            "如果……会怎样？": "#whatif-map-caption", "内部": "#block-view-caption",
            "图 7": "#filters-view-caption", "课程": "#lesson-text"}
    for tab, caption in tabs.items():
        page.get_by_role("tab", name=tab).click()
        wait_for_text(page, caption, "")
        expect(page.locator(caption)).not_to_have_text("", timeout=TIMEOUT_MS)
        subtabs = ["一个 block 加了什么", "每个 patch 的投票；token 长度", "整个矩阵"] if tab == "内部" else [None]
        for sub in subtabs:
            if sub:
                page.get_by_role("tab", name=sub).click()
                page.wait_for_timeout(500)
            for accordion in page.locator(".what-is button").all():
                if accordion.is_visible():
                    accordion.click()
            page.wait_for_timeout(1500)  # the tab's pictures and captions drawn
            texts = page.evaluate(VISIBLE_TEXT)
            assert len(texts) > 20 and any(HAN.search(t) for t in texts)
            seen[f"{tab}/{sub}"] = english_sentences(texts, names)
    page.get_by_role("tab", name="如果……会怎样？").click()
    page.locator("#whatif-order input").click()  # the menu's choices: a method's name and Chinese
    options = page.get_by_role("option").all_inner_texts()
    assert any("Grad-CAM" in o and "需运行一次模型" in o for o in options), options
    assert any(o.startswith("最后一层的 attention") for o in options), options
    page.keyboard.press("Escape")
    seen["menu"] = english_sentences(options, names)
    if vit.fonts.families()[1:]:  # the page in Chinese, for the README (looked at before it is committed)
        page.get_by_role("tab", name="课程").click()
        page.evaluate("window.scrollTo(0, 0)")
        test_browser.save_screenshot(page, test_browser.DOCS / "screenshot-zh.png", full_page=False)
    page.context.close()
    assert not any(seen.values()), {k: v for k, v in seen.items() if v}


def test_english_sentences_are_found():
    """The check above can fail: an English sentence is found, Chinese with the terms is not."""
    assert english_sentences(["Click a patch to ask what it attends to."], set())
    assert not english_sentences(["**点击一个 patch**，看它关注哪里。class token 的 attention rollout"], set())
    assert not english_sentences(["(B, N+1, D) → (1, 65, 96) · ViT-B/16, P = 16, L = 12"], set())


def test_a_refusal_on_a_chinese_page_is_in_chinese(browser, url, tmp_path):
    page = open_in(browser, url, "zh-CN")
    fake = tmp_path / "photo.jpg"
    fake.write_text("a text file renamed to .jpg\n")
    upload(page, fake)
    expect(page.get_by_text("无法把 'photo.jpg' 作为图像读取").first).to_be_visible(timeout=TIMEOUT_MS)
    page.context.close()
