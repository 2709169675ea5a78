"""Predict, then verify (issue 25, part 1): the lesson's questions, each answered from the analysis on screen.

A class commits to a guess before the reveal (White & Gunstone's predict-observe-explain; the peers' lesson
sites ask "predict where the heads attend" before the demo confirms it). Nothing here is a fixed answer key:
the truth of every question is read from the :class:`vit.Analysis` (or, for the last one, from the
:class:`vit.Intervention` the app runs), so a new image, patch size or model asks the same question with a new
answer. Pure and Gradio-free: an analysis and a guess in, a :class:`Verdict` and markdown out.

The questions slot into :data:`vit.lesson.LESSON` just before the step that shows their answer
(:func:`walk`), so the lesson with predictions is the same lesson with a pause before each reveal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vit.errors import InputError
from vit.explanations.methods import METHODS
from vit.lesson import LESSON, LessonStep, prefix_words

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


PREDICT: list[PredictStep] = [
    PredictStep("tokens", "11.4.1", "Predict: how many tokens?", "number", None, "patch-grid", "patch-grid"),
    PredictStep("layer", "11.4.6", "Predict: when is the answer decided?", "number", None, "depth-plot",
                "depth-plot"),
    PredictStep("patch", "11.4.7", "Predict: where does the class token look?", "click", "patch-grid",
                "rollout-view", "rollout-view"),
    PredictStep("runner_up", "11.4.7", "Predict: a map for another class?", "yes_no", "rollout-view",
                "rollout-view", ""),
    PredictStep("survive", "11.4.7", "Predict: will the answer survive?", "yes_no", "whatif-proposal",
                "whatif-map", ""),
]
NEEDS_CLASSIFIER = {"layer", "runner_up", "survive"}  # questions about class scores: a backbone has none


def walk(predict: bool = True) -> list[LessonStep | PredictStep]:
    """The lesson's steps, each question of :data:`PREDICT` just before the step that reveals its answer
    (the ones with no such step at the end); without ``predict``, :data:`LESSON` as it is."""
    if not predict:
        return list(LESSON)
    out: list[LessonStep | PredictStep] = []
    for step in LESSON:
        out += [q for q in PREDICT if q.ahead_of == step.view and q not in out]  # once, before the first reveal
        out.append(step)
    return out + [q for q in PREDICT if not q.ahead_of]


# --------------------------------------------------------------------------- what is true, from the analysis


def proposal(a) -> list[int]:
    """"Remove these patches": rollout's top 30 % (row-major patch indices), as "What if?" ranks them."""
    import torch  # noqa: PLC0415 - the lesson's first screen loads without torch

    from vit.interventions.run import ranked  # noqa: PLC0415

    return ranked(torch.as_tensor(a.rollout()), REMOVE_FRACTION)


def decided_at(a) -> int:
    """The first layer whose early exit (the class token after that layer, through the final norm and head)
    already names the final answer as its top-1."""
    final = a.topk[0].index
    return next(p.layer for p in a.layer_predictions if p.index == final)


def patch_rank(a, cell: tuple[int, int]) -> int:
    """Where patch (row, col) ranks among the N patches by rollout of the class token at the last layer: 1 = most."""
    heat = [float(v) for v in a.rollout().flatten()]
    mine = heat[cell[0] * a.grid[1] + cell[1]]
    return 1 + sum(v > mine for v in heat)


def top_patches(n: int) -> int:
    """How many of rollout's best patches count as a right click: the top 5 % of N, at least one."""
    return max(1, math.ceil(TOP_SHARE * n))


# --------------------------------------------------------------------------- the question and the verdict


def _cell_words(cell: tuple[int, int], a) -> str:
    from vit.views.draw import token_index  # noqa: PLC0415 - torch-free, PIL

    return f"row {cell[0] + 1}, column {cell[1] + 1} (token {token_index(cell, a.grid, a.num_prefix_tokens)})"


def question(q: PredictStep, a) -> str:
    """Markdown for the question, with what the class needs to answer it and nothing of the answer."""
    head = f"**{q.section} {q.title}**"
    if q.kind in NEEDS_CLASSIFIER and not a.has_classifier:
        return f"{head}\n\nThis model has no classifier (a backbone): there is no class to ask about. Next →"
    if q.kind == "tokens":
        body = (f"The image is {a.input_size[0]}×{a.input_size[1]} px, cut into patches of P = {a.patch_size} px. "
                f"**How many tokens does the encoder see at P = {a.patch_size}?** Type a number, then check.")
    elif q.kind == "layer":
        body = (f"The model runs L = {a.depth} blocks and finally says **{a.topk[0].label}**. Reading the class "
                f"token after every block (an early exit): **at which layer does “{a.topk[0].label}” first become "
                f"the top-1?** A number from 1 to {a.depth}.")
    elif q.kind == "patch":
        body = (f"The grid has N = {a.num_patches} patches. **Click the patch the class token draws most from at "
                f"the last layer** (attention rollout through all {a.depth} layers).")
    elif q.kind == "runner_up":
        second = a.topk[1].label if len(a.topk) > 1 else "another class"
        body = (f"This is attention rollout for **{a.topk[0].label}**. **Will this map change if we ask about the "
                f"runner-up class, {second}?** Yes or no.")
    elif q.kind == "survive":
        n = len(proposal(a))
        body = (f"Hatched: rollout's top {REMOVE_FRACTION:.0%} of the patches ({n} of {a.num_patches}). **Remove "
                f"these patches: will the prediction survive?** Yes: the model still says “{a.topk[0].label}” "
                f"on the {a.num_patches - n} patch tokens left.")
    else:
        raise ValueError(f"expected a question among {', '.join(p.kind for p in PREDICT)}, got {q.kind!r}")
    return f"{head}\n\n{body}"


@dataclass(frozen=True)
class Verdict:
    """A guess beside the answer."""

    kind: str
    right: bool
    guess: str  # the guess, in words
    answer: str  # the answer, in words
    why: str  # how the analysis shows it (markdown)


def _whole(guess, lo: int, hi: int) -> int:
    try:
        value = float(guess)
    except (TypeError, ValueError):
        raise InputError(f"expected a whole number from {lo} to {hi}, got {guess!r}") from None
    if not math.isfinite(value) or value != int(value) or not lo <= value <= hi:
        raise InputError(f"expected a whole number from {lo} to {hi}, got {guess!r}")
    return int(value)


def _yes_no(guess) -> bool:
    if guess not in ("yes", "no"):
        raise InputError(f"expected “yes” or “no”, got {guess!r}")
    return guess == "yes"


def check(q: PredictStep, a, guess, w=None) -> Verdict:
    """The class's ``guess`` against what the analysis ``a`` shows.

    ``guess``: a number for "tokens" and "layer", a (row, col) patch for "patch", "yes" or "no" for
    "runner_up" and "survive". "survive" also takes ``w``, the :class:`vit.Intervention` that removed
    :func:`proposal`'s patches. Raises InputError for a guess that is no answer, or a question a model without
    a classifier cannot answer.
    """
    if q.kind in NEEDS_CLASSIFIER and not a.has_classifier:
        raise InputError("This model has no classifier (a backbone): there is no class to ask about.")
    if q.kind == "tokens":
        n = _whole(guess, 1, 10**6)
        rows, cols = a.grid
        why = (f"{rows}×{cols} patches of {a.patch_size} px: N = {a.num_patches} patch tokens + "
               f"{prefix_words(a.prefix_token_names)} = **{a.num_tokens}** tokens, each of D = "
               f"{int(a.queries[0].shape[-1])} numbers.")
        return Verdict(q.kind, n == a.num_tokens, str(n), str(a.num_tokens), why)
    if q.kind == "layer":
        n = _whole(guess, 1, a.depth)
        first = decided_at(a)
        at = {p.layer: p for p in a.layer_predictions}
        said = at[n]
        why = (f"The early exits: after layer {first} the class token first reads as **{a.topk[0].label}** "
               f"({at[first].prob:.1%}); after layer {n} it read as {said.label} ({said.prob:.1%}). The plot shows "
               f"the final class's probability after every layer.")
        return Verdict(q.kind, n == first, f"layer {n}", f"layer {first}", why)
    if q.kind == "patch":
        row, col = guess
        rank, n = patch_rank(a, (row, col)), a.num_patches
        best = divmod(int(a.rollout().flatten().argmax()), a.grid[1])
        top = top_patches(n)
        why = (f"Your patch ranks **{rank} of {n}** by rollout (1 = the class token draws most from it; right: "
               f"among the top {top}). The most: {_cell_words(best, a)}.")
        return Verdict(q.kind, rank <= top, _cell_words((row, col), a), _cell_words(best, a), why)
    if q.kind == "runner_up":
        yes = _yes_no(guess)
        changes = METHODS["rollout"].class_specific
        others = [m.title for m in METHODS.values() if m.class_specific]
        why = (f"Rollout multiplies the attention maps only; no class enters it, so the runner-up's map is this "
               f"very map. {' and '.join(others)} weigh by the gradient of the class's score: their maps "
               f"{'do' if len(others) > 1 else 'does'} change with the class (in “Why this class?”).")
        return Verdict(q.kind, yes == changes, "yes" if yes else "no", "yes" if changes else "no", why)
    if q.kind == "survive":
        yes = _yes_no(guess)
        if w is None:
            raise ValueError("expected the intervention that removed the proposed patches, got None")
        survived = w.topk[0].index == w.target
        why = (f"On the {len(w.kept)} patch tokens left, p({w.label}): {w.prob_before:.1%} → "
               f"**{w.prob_after:.1%}**; the model now says “{w.topk[0].label}” ({w.topk[0].prob:.1%}).")
        return Verdict(q.kind, yes == survived, "yes" if yes else "no", "yes" if survived else "no", why)
    raise ValueError(f"expected a question among {', '.join(p.kind for p in PREDICT)}, got {q.kind!r}")


def reveal_text(q: PredictStep, v: Verdict) -> str:
    """Markdown: the guess beside the answer, then how the analysis shows it."""
    mark = "✓ right" if v.right else "✗ not this time"
    return f"**{q.title.removeprefix('Predict: ')}** · your guess: **{v.guess}** · the answer: **{v.answer}** " \
           f"· {mark}\n\n{v.why}"


def tally_text(score: dict) -> str:
    """"Right so far: 2 of 3" from ``{question: right}`` (the session's first answer to each question)."""
    if not score:
        return "Right so far: none asked yet."
    return f"Right so far: **{sum(bool(v) for v in score.values())} of {len(score)}**."
