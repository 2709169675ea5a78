"""The shapes model's class names on the Chinese page, "心形 heart", as the book's Chinese edition sets its terms:
every place that shows a class passes it through :func:`class_name`. The model, the API and the CLI, ImageNet's and
a Hub model's names stay English. Pure: no torch, no gradio."""

from __future__ import annotations

# vit.shapes.CLASSES, in Chinese (tests/test_names.py checks the two lists agree).
SHAPES_ZH: dict[str, str] = {
    "circle": "圆形",
    "square": "正方形",
    "triangle": "三角形",
    "star": "星形",
    "cross": "十字",
    "ring": "圆环",
    "diamond": "菱形",
    "heart": "心形",
}


def class_name(name: str, lang: str = "en") -> str:
    """A class's name as the page in ``lang`` shows it: "心形 heart" for the shapes model's "heart" in Chinese;
    any other name, and every name in English, unchanged."""
    from vit.i18n import language  # noqa: PLC0415 - vit.i18n imports this module

    zh = SHAPES_ZH.get(name) if language(lang) == "zh" else None
    return f"{zh} {name}" if zh else name
