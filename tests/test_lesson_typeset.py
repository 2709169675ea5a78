"""The lesson's code and formulas set as such (issue 53, item 5; review 2026-12-04, defect 10), and the Chinese PDF's
footer (defect 7): the chapter's four lines of ``forward`` a line each in a monospace font, on screen (a Markdown
code block) and in the PDF (DejaVu Sans Mono); superscripts and subscripts raised and lowered, never a caret."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

from vit.lesson import LESSON, lesson_text
from vit.lesson import export as lesson_export

STAR = ROOT / "assets" / "shapes-star.png"
FORWARD = ["attn_input = self.norm1(x)", "attn_output, _ = self.attn(attn_input, attn_input, attn_input)",
           "x = x + self.dropout1(attn_output)", "x = x + self.mlp(self.norm2(x))"]


@pytest.fixture(scope="module")
def a():
    import vit
    from vit.images import load_image

    return vit.analyze(vit.load_model("vit_tiny_shapes"), load_image(STAR))


def _step(view: str):
    return next(s for s in LESSON if s.view == view)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_four_lines_of_forward_are_a_code_block_on_screen(a, lang):
    text = lesson_text(_step("block-code"), a, lang)
    block = re.search(r"```python\n(.*?)\n```", text, re.S)
    assert block is not None, text
    assert block.group(1).split("\n") == FORWARD  # one line each, as the chapter writes them
    assert ";" not in block.group(1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_formulas_have_real_superscripts_and_subscripts_on_screen(a, lang):
    for step in LESSON:
        text = lesson_text(step, a, lang)
        assert "^" not in text and "_ℓ" not in text and "z_cls" not in text and "Z_L" not in text, (step.view, text)
    assert "ℝ<sup>B×(N+1)×D</sup>" in lesson_text(_step("patch-grid"), a, lang)
    assert "Z<sub>ℓ−1</sub>" in lesson_text(_step("layer-views"), a, lang)
    assert "z<sub>cls</sub>" in lesson_text(_step("depth-plot"), a, lang)


def test_the_pdf_sets_the_code_a_line_each_in_a_monospace_font(a):
    page = next(p for p in lesson_export.pages(a) if p.step.view == "block-code")
    code = [p for p in page.text if p.kind == "code"]
    assert len(code) == 1 and [r.text for r in code[0].runs] == FORWARD
    fig = lesson_export.figure(page)
    texts = {t.get_text(): t for t in fig.texts}
    for line in FORWARD:
        assert line in texts, line  # a text of its own: a line each, not joined or wrapped
        assert texts[line].get_fontfamily()[0] == "DejaVu Sans Mono"
    ys = [texts[line].get_position()[1] for line in FORWARD]
    assert ys == sorted(ys, reverse=True) and len(set(ys)) == 4  # one under the other
    body = [t for t in fig.texts if t.get_text().startswith("The same four lines")]
    assert body and body[0].get_fontfamily()[0] == "DejaVu Sans"  # the prose is not monospace


def test_the_pdf_raises_superscripts_and_lowers_subscripts(a):
    page = next(p for p in lesson_export.pages(a, lang="zh") if p.step.view == "patch-grid")
    fig = lesson_export.figure(page)
    texts = {t.get_text(): t for t in fig.texts}
    assert "B×(N+1)×D" in texts and not any("^" in t for t in texts)
    base = next(t for s, t in texts.items() if s.endswith("ℝ"))
    sup = texts["B×(N+1)×D"]
    assert sup.get_position()[1] > base.get_position()[1]  # raised
    assert sup.get_fontsize() < base.get_fontsize()  # and smaller
    page = next(p for p in lesson_export.pages(a) if p.step.view == "layer-views")
    texts = {t.get_text(): t for t in lesson_export.figure(page).texts}
    before = next(t for s, t in texts.items() if s.endswith("(Z"))  # Z<sub>ℓ−1</sub>: the Z on the baseline
    assert texts["ℓ−1"].get_position()[1] < before.get_position()[1]  # lowered
    assert texts["ℓ−1"].get_fontsize() < before.get_fontsize()


def test_the_chinese_pdf_s_footer_is_chinese(a):
    zh = lesson_export.pages(a, lang="zh")[0].footer
    en = lesson_export.pages(a)[0].footer
    assert en == "ViT Anatomy · ViT-Tiny shapes, trained here (trained) · 64×64 px, P = 8, N = 64, L = 4"
    assert "像素" in zh and "（已训练）" in zh and "px" not in zh and "(trained)" not in zh
    assert "P = 8，N = 64，L = 4" in zh
