"""The shapes model's class names as the page shows them (issue 53, item 1): the Chinese beside the English.

The model, the API and the CLI name the classes in English (``vit.shapes.CLASSES``: a model's ``class_names``
never change); on the Chinese page a student reads "心形 heart", the Chinese name first and the English after it,
as the Chinese edition of the book sets its terms. Only the 8 shapes are named: ImageNet's 1,000 classes and a
Hub model's own names stay as the model names them. Every place that shows a class to the class (the top-k, the
pictures' titles, captions and text alternatives, the lesson, the PDF) passes it through :func:`class_name`.

Pure: no torch, no gradio.
"""

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
