"""The shapes model's classes in the page's language (issue 53, item 1; review 2026-12-04, defect 14): "心形 heart" on
the Chinese page wherever the class sees a class (the top-k, the pictures' titles, captions and text alternatives,
the lesson, the PDF); the model's class_names, the API and the CLI keep English, ImageNet's names stay as they are.
Head fusion's choices in the page's language."""

from __future__ import annotations

import pytest
from conftest import ROOT

from vit.i18n.names import SHAPES_ZH, class_name
from vit.shapes import CLASSES

HEART = ROOT / "assets" / "shapes-heart.png"


@pytest.fixture(scope="module")
def a():
    import vit
    from vit.images import load_image

    return vit.analyze(vit.load_model("vit_tiny_shapes"), load_image(HEART))


def test_every_shape_has_its_chinese_name_and_nothing_else_does():
    assert set(SHAPES_ZH) == set(CLASSES)
    assert class_name("heart", "zh") == "心形 heart"
    assert class_name("cross", "zh-CN") == "十字 cross"
    assert class_name("heart", "en") == "heart"
    assert class_name("tabby, tabby cat", "zh") == "tabby, tabby cat"  # ImageNet's stay English
    assert class_name(class_name("ring", "zh"), "zh") == "圆环 ring"  # named once, however often it passes


def test_the_top_k_reads_in_chinese_on_the_chinese_page_and_english_elsewhere(a):
    from vit.views import patches

    zh, en = patches.top_k(a, 3, "zh"), patches.top_k(a, 3)
    assert next(iter(zh)) == "心形 heart"
    assert all(label.split(" ")[-1] in CLASSES and label.split(" ")[0] == SHAPES_ZH[label.split(" ")[-1]]
               for label in zh)
    assert next(iter(en)) == "heart" and list(en.values()) == list(zh.values())
    assert patches.top_k(a, 8, "zh").keys() == {f"{SHAPES_ZH[c]} {c}" for c in CLASSES}  # past the kept top-k too


def test_the_model_and_its_analysis_keep_english(a):
    from vit.model.families import class_names

    assert class_names(a.model) == list(CLASSES)
    assert a.topk[0].label == "heart"


def test_the_pictures_name_the_class_in_chinese(a):
    from vit.views import registry
    from vit.views.registry import Display

    for name in ("depth-plot", "lens-view"):
        view = registry.draw(a, name, Display(lang="zh"))
        assert "心形 heart" in view.caption, (name, view.caption)
        assert "心形 heart" in view.alt, (name, view.alt)  # the text alternative a screen reader reads
        english = registry.draw(a, name, Display())
        assert "heart" in english.caption and "心形" not in english.caption


def test_the_lesson_names_the_class_in_chinese(a):
    from vit.lesson import LESSON, lesson_text

    for step in LESSON:
        if step.view in ("depth-plot", "lens-view", "rollout-view"):
            assert "**心形 heart**" in lesson_text(step, a, "zh"), step.view
            assert "**heart**" in lesson_text(step, a, "en"), step.view


def test_what_if_names_the_class_in_chinese(a):
    import vit
    from vit.images import load_image
    from vit.ui.tabs.whatif import result_html
    from vit.views.whatif import intervention_view

    w = vit.intervene(vit.load_model("vit_tiny_shapes"), load_image(HEART), remove=[0, 1])
    assert "心形 heart" in intervention_view(w, 0.5, "cividis", lang="zh").title
    assert "p(心形 heart)" in result_html(w, "zh")
    assert "p(heart)" in result_html(w, "en")


def test_head_fusion_s_choices_read_in_the_page_s_language():
    from vit.ui import lang
    from vit.ui.tabs.controls import fusion_choices
    from vit.validate import HEAD_FUSIONS

    choices = fusion_choices()
    assert [value for _, value in choices] == list(HEAD_FUSIONS)  # the API's values
    words = lang.translations()
    shown = {value: (words["en"][label.key], words["zh"][label.key]) for label, value in choices}
    assert shown["mean"] == ("mean", "平均 mean")
    assert all(zh != en and en in zh for en, zh in shown.values())
