"""Chinese line breaking (issue 53, item 1; review 2026-12-04, defect 7): the pictures' wrap and the PDF's never start
a line with closing punctuation ("。" alone on a line, "：x 以 ...") nor end one with opening punctuation."""

from __future__ import annotations

import pytest

from vit.i18n import linebreak
from vit.views import draw

SENTENCE = "并在内部投影回维度。然后输出"  # the review's page 2: "…投影回 D" and then "。" alone


def _starts_or_ends_wrong(lines: list[str]) -> list[str]:
    return [line for line in lines if line[:1] in linebreak.CLOSING or line[-1:] in linebreak.OPENING]


@pytest.fixture()
def zh_font():
    token = draw.LANGUAGE.set("zh")
    yield draw.font(18, bold=False)
    draw.LANGUAGE.reset(token)


def test_the_pictures_wrap_never_starts_a_line_with_a_full_stop(zh_font):
    width = zh_font.getlength(SENTENCE[: SENTENCE.index("。")])  # exactly up to the full stop: it would go alone
    lines = draw.wrap_text(SENTENCE, zh_font, width)
    assert "".join(lines) == SENTENCE  # nothing lost, nothing added
    assert len(lines) > 1
    assert not _starts_or_ends_wrong(lines), lines
    assert lines[1].startswith("度。")  # the character before it goes down with it


def test_the_pictures_wrap_keeps_a_colon_and_a_closing_bracket_with_what_they_close(zh_font):
    text = "第 4 层（共 4 层）：x 以 (1, 65, 96) 进入"
    for cut in range(6, len(text)):  # a line of at least a few characters (a narrower one breaks inside words)
        lines = draw.wrap_text(text, zh_font, zh_font.getlength(text[:cut]) + 0.5)
        assert not _starts_or_ends_wrong(lines), (cut, lines)


def test_the_pictures_wrap_never_ends_a_line_with_an_opening_bracket(zh_font):
    text = "这是一个很长的句子（括号里的话）"
    width = zh_font.getlength(text[: text.index("（") + 1])  # room for the bracket and nothing after it
    lines = draw.wrap_text(text, zh_font, width)
    assert "".join(lines) == text
    assert not _starts_or_ends_wrong(lines), lines


def test_english_wraps_as_before(zh_font):
    text = "The encoder changes neither the number of tokens nor their dimension."
    lines = draw.wrap_text(text, zh_font, zh_font.getlength("The encoder changes neither"))
    assert " ".join(lines) == text
    assert lines[0] == "The encoder changes neither"


def test_the_pdf_wrap_never_starts_a_line_with_a_full_stop():
    from matplotlib.figure import Figure

    from vit.lesson import export

    ink = export._Ink(Figure())
    size = 19.0
    run = export.Run(SENTENCE)
    width = ink.width(SENTENCE[: SENTENCE.index("。")], size) + 1e-6  # the full stop would be alone below
    lines = ["".join(t for word in line for t, _ in word) for line in ink.lines([run], width, size)]
    assert "".join(lines) == SENTENCE
    assert len(lines) > 1
    assert not _starts_or_ends_wrong(lines), lines


def test_the_pdf_wrap_keeps_the_reviews_colon_with_the_word_before_it():
    from matplotlib.figure import Figure

    from vit.lesson import export

    ink = export._Ink(Figure())
    text = "同样的四行代码在每一个里运行。第 4 层（共 4 层，“层 Layer”控件所选）：x 以 (1, 65, 96) 进入"
    runs = export.paragraphs(text)[0].runs
    for cut in range(4, len(text), 2):
        width = ink.width(text[:cut], 19.0) + 1e-6
        lines = ["".join(t for word in line for t, _ in word) for line in ink.lines(runs, width, 19.0)]
        assert not _starts_or_ends_wrong(lines), (cut, lines)


@pytest.mark.parametrize(("before", "after", "kept"), [
    ("度", "。", True), ("选", "）：", True), ("（", "共", True), ("“", "层", True), ("度", "然", False),
    ("。", "然", False), ("", "。", False)])
def test_glued_is_the_rule(before, after, kept):
    assert linebreak.glued(before, after) is kept
