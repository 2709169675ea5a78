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

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:gradio.queueing")

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
    page.locator("#lang label").filter(has_text="English").click()
    expect(page.locator("#analyze-btn")).to_have_text("Analyze")
    wait_for_text(page, "#banner", "No image analysed yet")
    wait_for_text(page, "#cost-meter", "tokens")
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
