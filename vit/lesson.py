"""A guided walk through chapter 11.4 (sections 11.4.1 to 11.4.7), one picture per step.

Each :class:`LessonStep` quotes or paraphrases the chapter briefly and names the
picture to show (an element id of the app); :func:`lesson_text` fills in this
image's numbers: the shapes, N, D, h, L, the residual norms, the answer.
Pure and Gradio-free: an :class:`vit.Analysis` in, markdown out.
"""

from __future__ import annotations

from dataclasses import dataclass

from vit import i18n

LANGUAGES = i18n.LANGUAGES  # the lesson's text, from the one catalogue (vit.i18n.lesson)
LESSON_VIEWS = ("patch-grid", "stage-table", "block-view", "block-code", "matrix-view", "rollout-view",
                "head-views", "layer-views", "depth-plot", "lens-view")  # the app's elem ids a step may show
STEP_VIEWS = ("patch-grid", "stage-table", "matrix-view", "block-view", "head-views", "block-code", "layer-views",
              "lens-view", "depth-plot", "rollout-view")  # the walk's order: 11.4.1 to 11.4.7


@dataclass(frozen=True)
class LessonStep:
    section: str  # "11.4.1"
    title: str
    chapter: str  # the chapter's sentence or equation, briefly
    view: str  # which picture to show: one of LESSON_VIEWS

    def words(self, lang: str = "en") -> tuple[str, str, str]:
        """(section, title, chapter) in ``lang``: each edition of the book quotes its own (vit.i18n.lesson)."""
        return tuple(i18n.text(f"step-{self.view}-{part}", lang) for part in ("section", "title", "chapter"))


LESSON: list[LessonStep] = [LessonStep(*LessonStep("", "", "", view).words("en"), view) for view in STEP_VIEWS]


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


def _detail(step: LessonStep, a, n: dict, lang: str = "en") -> str:
    top = a.topk[0] if a.topk else None
    view = step.view
    if view not in LESSON_VIEWS:
        raise ValueError(f"expected a view among {', '.join(LESSON_VIEWS)}, got {view!r}")
    if top is None and view in ("lens-view", "depth-plot"):
        return i18n.text("detail-no-classifier", lang)
    fields = {**n, "shape": f"(1, {n['T']}, {n['D']})", "four_d": 4 * n["D"],
              "prefix": prefix_words(a.prefix_token_names, lang)}
    if view in ("block-view", "block-code"):
        r = a.residual()[-1]
        fields.update(layer=r.layer, stream=r.stream, attention=r.attention, mlp=r.mlp, output=r.output)
    if top is not None:
        fields.update(label=top.label, prob=top.prob)
    if view == "lens-view":
        fields["agree"] = int((a.lens_index[-1] == top.index).sum()) if a.lens_index is not None else 0
    if view == "rollout-view" and top is None:
        view = "rollout-backbone"
    return i18n.text(f"detail-{view}", lang, **fields)


def language(lang: str) -> str:
    """The lesson's language, checked: one of :data:`LANGUAGES` (:func:`vit.i18n.checked`)."""
    return i18n.checked(lang)


def lesson_text(step: LessonStep, a, lang: str = "en") -> str:
    """Markdown for one step in ``lang``: the section, the chapter's words, and this image's numbers."""
    lang = language(lang)
    section, title, chapter = step.words(lang)
    return f"**{section} {title}**\n\n> {chapter}\n\n{_detail(step, a, _numbers(a), lang)}"
