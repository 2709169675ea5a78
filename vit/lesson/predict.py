"""Predict, then verify (White & Gunstone): each question before its step, answered from the analysis."""

from __future__ import annotations

import math
from dataclasses import dataclass

from vit import i18n
from vit.errors import InputError
from vit.explanations.methods import METHODS
from vit.i18n.names import class_name
from vit.lesson import LESSON, LessonStep, prefix_words, shown_at, where_words

REMOVE_FRACTION = 0.3  # "Remove these patches": rollout's top 30 %
TOP_SHARE = 0.05  # a clicked patch counts as right among rollout's top 5 % of the N patches (at least the top one)
ANSWERS = ("number", "click", "yes_no")  # how the class answers: a number box, a click on the picture, two buttons


@dataclass(frozen=True)
class PredictStep:
    """A question asked before a step of the lesson shows its answer."""

    kind: str  # "tokens", "patch", "layer", "runner_up", "survive"
    section: str  # the chapter's section it belongs to: "11.4.1"
    title: str  # short, for the progress line
    answer: str  # one of ANSWERS
    before: str | None  # the picture while the class guesses (an elem id of the app), or None
    reveal: str  # the picture that shows the answer
    ahead_of: str  # the LESSON step (its view) the question is asked before; "" for the end

    def words(self, lang: str = "en") -> tuple[str, str]:
        """(section, title) in ``lang`` (vit.i18n.predict)."""
        return i18n.text(f"ask-{self.kind}-section", lang), i18n.text(f"ask-{self.kind}-title", lang)


def _ask(kind: str, answer: str, before: str | None, reveal: str, ahead_of: str) -> PredictStep:
    return PredictStep(kind, i18n.text(f"ask-{kind}-section"), i18n.text(f"ask-{kind}-title"), answer, before,
                       reveal, ahead_of)


PREDICT: list[PredictStep] = [
    _ask("tokens", "number", None, "patch-grid", "patch-grid"),
    _ask("layer", "number", None, "depth-plot", "depth-plot"),
    _ask("patch", "click", "patch-grid", "rollout-view", "rollout-view"),
    _ask("runner_up", "yes_no", "rollout-view", "rollout-view", ""),
    _ask("survive", "yes_no", "whatif-proposal", "whatif-map", ""),
]
NEEDS_CLASSIFIER = {"layer", "runner_up", "survive"}  # questions about class scores: a backbone has none


def walk(predict: bool = True) -> list[LessonStep | PredictStep]:
    """The lesson's steps, each question of :data:`PREDICT` just before the step that reveals its answer (or last)."""
    if not predict:
        return list(LESSON)
    out: list[LessonStep | PredictStep] = []
    for step in LESSON:
        out += [q for q in PREDICT if q.ahead_of == step.view and q not in out]  # once, before the first reveal
        out.append(step)
    return out + [q for q in PREDICT if not q.ahead_of]


def proposal(a) -> list[int]:
    """"Remove these patches": rollout's top 30 % (row-major patch indices), as "What if?" ranks them."""
    import torch  # noqa: PLC0415 - the lesson's first screen loads without torch

    from vit.interventions.run import ranked  # noqa: PLC0415

    return ranked(torch.as_tensor(a.rollout()), REMOVE_FRACTION)


def decided_at(a) -> int:
    """The first layer whose early exit already names the final answer as its top-1."""
    final = a.topk[0].index
    return next(p.layer for p in a.layer_predictions if p.index == final)


def patch_rank(a, cell: tuple[int, int]) -> int:
    """Patch (row, col)'s rank among the N patches by the last layer's rollout: 1 = most."""
    heat = [float(v) for v in a.rollout().flatten()]
    mine = heat[cell[0] * a.grid[1] + cell[1]]
    return 1 + sum(v > mine for v in heat)


def top_patches(n: int) -> int:
    """How many of rollout's best patches count as a right click: the top 5 % of N, at least one."""
    return max(1, math.ceil(TOP_SHARE * n))


def _cell_words(cell: tuple[int, int], a, lang: str = "en") -> str:
    from vit.views.draw import token_index  # noqa: PLC0415 - torch-free, PIL

    # Rows and columns counted from 0, as the grid's caption, the hover and the query view's caption count them.
    return i18n.text("cell", lang, row=cell[0], col=cell[1], token=token_index(cell, a.grid, a.num_prefix_tokens))


def question(q: PredictStep, a, lang: str = "en", display=None) -> str:
    """Markdown for the question, with what the class needs to answer it and nothing of the answer; beside a picture
    drawn at a layer (the runner-up's rollout), it says which (:func:`vit.lesson.shown_at` of ``display``)."""
    section, title = q.words(lang)
    head = f"**{section} {title}**"
    if q.kind in NEEDS_CLASSIFIER and not a.has_classifier:
        return f"{head}\n\n{i18n.text('ask-no-classifier', lang)}"
    if q.kind not in {p.kind for p in PREDICT}:
        raise ValueError(f"expected a question among {', '.join(p.kind for p in PREDICT)}, got {q.kind!r}")
    label = class_name(a.topk[0].label, lang) if a.topk else ""  # "心形 heart" in Chinese
    fields = dict(H=a.input_size[0], W=a.input_size[1], P=a.patch_size, L=a.depth, N=a.num_patches, label=label)
    if q.kind == "runner_up":
        layer, shown_head = shown_at(a, display)
        fields.update(second=class_name(a.topk[1].label, lang) if len(a.topk) > 1 else i18n.text("another-class", lang),
                      layer=layer,
                      at=where_words(q.before, a, layer, shown_head, lang))
    elif q.kind == "survive":
        n = len(proposal(a))
        fields.update(share=REMOVE_FRACTION, n=n, left=a.num_patches - n)
    return f"{head}\n\n{i18n.text(f'ask-{q.kind}', lang, **fields)}"


@dataclass(frozen=True)
class Verdict:
    """A guess beside the answer."""

    kind: str
    right: bool
    guess: str  # the guess, in words
    answer: str  # the answer, in words
    why: str  # how the analysis shows it (markdown)


def _whole(guess, lo: int, hi: int | None = None) -> int:
    """A typed guess as a whole number from ``lo`` to ``hi`` (None: a million tokens is wrong, not refused); anything
    else is refused in a student's words (``guess-whole``), never with the raw value."""
    wanted = dict(key="guess-whole", lo=lo, hi=hi) if hi is not None else dict(key="guess-whole-from", lo=lo)
    try:
        value = float(guess)
    except (TypeError, ValueError, OverflowError):
        raise InputError(**wanted) from None
    if not math.isfinite(value) or value != int(value) or value < lo or (hi is not None and value > hi):
        raise InputError(**wanted)
    return int(value)


def _yes_no(guess) -> bool:
    if guess not in ("yes", "no"):
        raise InputError(key="guess-yes-no")
    return guess == "yes"


def check(q: PredictStep, a, guess, w=None, lang: str = "en") -> Verdict:
    """The class's ``guess`` (a number, a (row, col) patch, or "yes"/"no") against what ``a`` shows; "survive" also
    takes ``w``, the intervention that removed :func:`proposal`'s patches. InputError for a guess that is no answer."""
    if q.kind in NEEDS_CLASSIFIER and not a.has_classifier:
        raise InputError(i18n.text("ask-no-classifier-refusal", lang))

    def say(key: str, **fields) -> str:
        return i18n.text(key, lang, **fields)
    if q.kind == "tokens":
        n = _whole(guess, 1)
        rows, cols = a.grid
        why = say("why-tokens", rows=rows, cols=cols, P=a.patch_size, N=a.num_patches,
                  prefix=prefix_words(a.prefix_token_names, lang), T=a.num_tokens, D=int(a.queries[0].shape[-1]))
        return Verdict(q.kind, n == a.num_tokens, str(n), str(a.num_tokens), why)
    if q.kind == "layer":
        n = _whole(guess, 1, a.depth)
        first = decided_at(a)
        at = {p.layer: p for p in a.layer_predictions}
        said = at[n]
        why = say("why-layer", first=first, label=class_name(a.topk[0].label, lang), first_prob=at[first].prob, n=n,
                  said=class_name(said.label, lang), said_prob=said.prob)
        return Verdict(q.kind, n == first, say("layer-n", n=n), say("layer-n", n=first), why)
    if q.kind == "patch":
        row, col = guess
        rank, n = patch_rank(a, (row, col)), a.num_patches
        best = divmod(int(a.rollout().flatten().argmax()), a.grid[1])
        top = top_patches(n)
        why = say("why-patch", rank=rank, N=n, top=top, best=_cell_words(best, a, lang))
        return Verdict(q.kind, rank <= top, _cell_words((row, col), a, lang), _cell_words(best, a, lang), why)
    if q.kind == "runner_up":
        yes = _yes_no(guess)
        changes = METHODS["rollout"].class_specific
        others = [m.title for m in METHODS.values() if m.class_specific]
        why = say("why-runner_up", others=say("and").join(others))
        return Verdict(q.kind, yes == changes, say("yes" if yes else "no"), say("yes" if changes else "no"), why)
    if q.kind == "survive":
        yes = _yes_no(guess)
        if w is None:
            raise ValueError("expected the intervention that removed the proposed patches, got None")
        survived = w.topk[0].index == w.target
        why = say("why-survive", kept=len(w.kept), label=class_name(w.label, lang), before=w.prob_before,
                  after=w.prob_after, now=class_name(w.topk[0].label, lang), now_prob=w.topk[0].prob)
        return Verdict(q.kind, yes == survived, say("yes" if yes else "no"), say("yes" if survived else "no"), why)
    raise ValueError(f"expected a question among {', '.join(p.kind for p in PREDICT)}, got {q.kind!r}")


def reveal_text(q: PredictStep, v: Verdict, lang: str = "en") -> str:
    """Markdown: the guess beside the answer, then how the analysis shows it."""
    title = q.words(lang)[1]
    title = title.removeprefix("Predict: ").removeprefix("预测：")
    mark = i18n.text("right" if v.right else "not-right", lang)
    return i18n.text("reveal", lang, title=title, guess=v.guess, answer=v.answer, mark=mark, why=v.why)


def tally_text(score: dict, lang: str = "en") -> str:
    """"Right so far: 2 of 3" from ``{question: right}`` (the session's first answer to each question)."""
    if not score:
        return i18n.text("tally-none", lang)
    return i18n.text("tally", lang, right=sum(bool(v) for v in score.values()), asked=len(score))
