"""A guided walk through chapter 11.4, a picture per step with this image's numbers, at the page's Layer and Head
where the picture is (:func:`shown_at`). Gradio-free: an analysis in, markdown out."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from vit import i18n
from vit.errors import InputError
from vit.i18n.names import class_name

LANGUAGES = i18n.LANGUAGES  # the lesson's text, from the one catalogue (vit.i18n.lesson)
# The page's elem ids the steps show, in the walk's order: 11.4.1 to 11.4.7.
LESSON_VIEWS = ("patch-grid", "stage-table", "matrix-view", "block-view", "head-views", "block-code", "layer-views",
                "lens-view", "depth-plot", "rollout-view")
# The steps whose picture is drawn at the Layer control's layer (vit.views.registry: ``d.layer_of(a)``), and of
# them, those also drawn at the Head control's head; the other steps' pictures show every layer, or none.
AT_LAYER = ("matrix-view", "block-view", "head-views", "block-code", "lens-view", "rollout-view")
AT_HEAD = ("matrix-view",)
# The steps whose chapter's words are code (the four lines of ViTEncoderLayer.forward): a Markdown code block, one
# line of code a line, set in a monospace font on screen and in the PDF (vit.lesson.export); the others a quote.
CODE_VIEWS = ("block-code",)


@dataclass(frozen=True)
class LessonStep:
    section: str  # "11.4.1"
    title: str
    chapter: str  # the chapter's sentence or equation, briefly
    view: str  # which picture to show: one of LESSON_VIEWS

    def words(self, lang: str = "en") -> tuple[str, str, str]:
        """(section, title, chapter) in ``lang``: each edition of the book quotes its own (vit.i18n.lesson)."""
        return tuple(i18n.text(f"step-{self.view}-{part}", lang) for part in ("section", "title", "chapter"))


LESSON: list[LessonStep] = [LessonStep(*LessonStep("", "", "", view).words("en"), view) for view in LESSON_VIEWS]


def shown_at(a, display=None) -> tuple[int, int]:
    """(layer, head), 1-based, a step's picture is drawn at: ``display``'s, else the last layer and head 1."""
    layer = a.depth if display is None else display.layer_of(a)
    head = 1 if display is None else display.head
    return min(max(int(layer), 1), a.depth), min(max(int(head), 1), a.num_heads)


def _numbers(a) -> dict:
    D = int(a.queries[0].shape[-1])
    hidden = next((s.shape for s in a.stages if s.name.endswith("MLP hidden")), None)
    return {"N": a.num_patches, "T": a.num_tokens, "D": D, "h": a.num_heads, "L": a.depth, "d": D // a.num_heads,
            "K": int(a.probs.shape[0]), "P": a.patch_size, "rows": a.grid[0], "cols": a.grid[1],
            "H": a.input_size[0], "W": a.input_size[1], "hidden": tuple(hidden) if hidden else (1, a.num_tokens, 4 * D)}


def prefix_words(names, lang: str = "en") -> str:
    """"1 class token", or "5 prefix tokens (class, register 1, ...)" for DeiT's and the registers' models."""
    if len(names) == 1:
        return i18n.text("prefix-one", lang)
    return i18n.text("prefix-many", lang, n=len(names), names=", ".join(names))


def where_words(view: str, a, layer: int, head: int, lang: str = "en") -> str:
    """"Layer 2 of 4 (the Layer control)": where a step's picture and numbers are; "" for one not at a layer."""
    if view in AT_HEAD:
        return i18n.text("at-layer-head", lang, layer=layer, L=a.depth, head=head, h=a.num_heads)
    return i18n.text("at-layer", lang, layer=layer, L=a.depth) if view in AT_LAYER else ""


def votes(a, layer: int, index: int) -> tuple[int, int, int]:
    """(patches voting for class ``index``, the most frequent vote's class, its count) in the lens at ``layer``."""
    if a.lens_index is None:
        return 0, index, 0
    counts = Counter(int(c) for c in a.lens_index[layer - 1].tolist())
    most, n = min(counts.items(), key=lambda cn: (-cn[1], cn[0]))
    return counts.get(index, 0), most, n


def _lens_fields(a, layer: int, top, lang: str = "en") -> dict:
    from vit.model.families import class_names  # noqa: PLC0415 - a Hub model's names are read on first use

    agree, most, n = votes(a, layer, top.index)
    names = class_names(a.model)
    return {"agree": agree, "most": class_name(names[most], lang) if most < len(names) else str(most), "most_n": n}


def _detail(step: LessonStep, a, n: dict, lang: str = "en") -> str:
    top = a.topk[0] if a.topk else None
    view = step.view
    if view not in LESSON_VIEWS:
        raise ValueError(f"expected a view among {', '.join(LESSON_VIEWS)}, got {view!r}")
    if top is None and view in ("lens-view", "depth-plot"):
        return i18n.text("detail-no-classifier", lang)
    fields = {**n, "shape": f"(1, {n['T']}, {n['D']})", "four_d": 4 * n["D"],
              "prefix": prefix_words(a.prefix_token_names, lang),
              "at": where_words(view, a, n["layer"], n["head"], lang)}
    if view in ("block-view", "block-code"):
        r = a.residual()[n["layer"] - 1]
        fields.update(stream=r.stream, attention=r.attention, mlp=r.mlp, output=r.output)
    if top is not None:
        fields.update(label=class_name(top.label, lang), prob=top.prob)
    if view == "lens-view":
        fields.update(_lens_fields(a, n["layer"], top, lang))
    if view == "rollout-view" and top is None:
        view = "rollout-backbone"
    return i18n.text(f"detail-{view}", lang, **fields)


def language(value: object, name: str = "lang") -> str:
    """The lesson's language by name (the CLI's and the export's ``lang``), checked: en or zh (zh-CN... too)."""
    if isinstance(value, str) and value.strip().replace("_", "-").lower().split("-")[0] in i18n.LANGUAGES:
        return i18n.language(value)
    allowed = ", ".join(repr(c) for c in i18n.LANGUAGES)
    raise InputError(f"{name} must be one of {allowed}, got {value!r}")


def lesson_text(step: LessonStep, a, lang: str = "en", display=None) -> str:
    """Markdown for one step: the section, the chapter's words, this image's numbers at :func:`shown_at`."""
    lang = language(lang)
    section, title, chapter = step.words(lang)
    layer, head = shown_at(a, display)
    numbers = {**_numbers(a), "layer": layer, "head": head}
    quoted = f"```python\n{chapter}\n```" if step.view in CODE_VIEWS else f"> {chapter}"
    return f"**{section} {title}**\n\n{quoted}\n\n{_detail(step, a, numbers, lang)}"
