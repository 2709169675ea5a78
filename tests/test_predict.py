"""Predict, then verify (issue 25, part 1): every answer comes from the analysis, none from a key."""

from __future__ import annotations

import pytest
import torch

import vit
from vit.errors import InputError
from vit.interventions.run import ranked
from vit.lesson import LESSON, predict
from vit.lesson.predict import PREDICT, PredictStep

IMAGE = "assets/shapes-star.png"
Q = {q.kind: q for q in PREDICT}


@pytest.fixture(scope="module")
def loaded():
    return vit.load_model("vit_tiny_shapes")


@pytest.fixture(scope="module")
def a(loaded):
    return vit.analyze(loaded, IMAGE)


@pytest.fixture(scope="module")
def coarse():
    """The same model at P = 16: a different grid, so a different answer to the same question."""
    return vit.analyze(vit.load_model("vit_tiny_shapes", patch_size=16), IMAGE)


def test_the_walk_asks_each_question_just_before_its_reveal():
    steps = predict.walk()
    assert [s for s in steps if not isinstance(s, PredictStep)] == LESSON
    assert [s for s in steps if isinstance(s, PredictStep)] == PREDICT
    for i, s in enumerate(steps):
        if isinstance(s, PredictStep) and s.ahead_of:
            assert steps[i + 1].view == s.ahead_of  # the very next step shows the answer
    assert predict.walk(False) == LESSON  # without predictions: the lesson as it was


def test_tokens_are_n_plus_the_prefix_from_the_analysis(a, coarse):
    assert a.num_tokens == 65 and coarse.num_tokens == 17  # 8×8 + 1 at its own P = 8, 4×4 + 1
    for x in (a, coarse):
        v = predict.check(Q["tokens"], x, x.num_tokens)
        assert v.right and v.answer == str(x.num_patches + x.num_prefix_tokens)
        assert f"{x.grid[0]}×{x.grid[1]}" in v.why and f"N = {x.num_patches}" in v.why
        assert not predict.check(Q["tokens"], x, x.num_patches).right  # the class token forgotten
    assert str(a.num_tokens) not in predict.question(Q["tokens"], a)  # no answer given away


def test_a_guess_that_is_no_number_is_refused_in_words(a):
    """Issue 53 (2): what a class shouts (an empty box, 2.5, -1, 65, a word) is refused in a student's words in the
    page's language: "a whole number from 1 to 4", never "got None" nor "from 1 to 1000000"."""
    wanted = {"en": f"Type a whole number from 1 to {a.depth} in the box.",
              "zh": f"请在框里输入 1 到 {a.depth} 之间的整数。"}
    for bad in (None, "", "seventeen", 2.5, "2.5", -1, 0, 65, float("nan"), float("inf")):
        with pytest.raises(InputError) as refused:
            predict.check(Q["layer"], a, bad)
        assert {lang: refused.value.words(lang) for lang in wanted} == wanted, bad
        if bad == 65:  # 65 tokens: an answer (here, the right one)
            continue
        with pytest.raises(InputError) as refused:
            predict.check(Q["tokens"], a, bad)
        for lang in wanted:
            words = refused.value.words(lang)
            assert "1" in words and not any(w in words for w in ("None", "got", "1000000", "expected")), words
    assert predict.check(Q["tokens"], a, 2_000_000).guess == "2000000"  # a wrong answer, not a refused one
    assert predict.check(Q["layer"], a, "2").guess == "layer 2"
    with pytest.raises(InputError) as refused:
        predict.check(Q["runner_up"], a, "maybe")
    assert refused.value.words("en") == "Answer with Yes or No." and "是" in refused.value.words("zh")


def test_the_patch_rank_is_rollouts_order(a, coarse):
    for x in (a, coarse):
        heat = x.rollout().flatten()
        order = torch.argsort(torch.as_tensor(heat), descending=True, stable=True).tolist()
        best, worst = divmod(order[0], x.grid[1]), divmod(order[-1], x.grid[1])
        assert predict.patch_rank(x, best) == 1
        assert predict.check(Q["patch"], x, best).right
        v = predict.check(Q["patch"], x, worst)
        assert not v.right and f"of {x.num_patches}" in v.why
        assert predict.patch_rank(x, worst) == 1 + sum(float(h) > float(heat[order[-1]]) for h in heat)


def test_the_layer_is_the_first_early_exit_that_names_the_answer(a):
    first = predict.decided_at(a)
    preds = {p.layer: p for p in a.layer_predictions}
    assert preds[first].index == a.topk[0].index
    assert all(preds[n].index != a.topk[0].index for n in range(1, first))
    assert predict.check(Q["layer"], a, first).right
    wrong = first % a.depth + 1
    assert not predict.check(Q["layer"], a, wrong).right


def test_the_runner_up_question_follows_the_methods_registry(a):
    assert predict.check(Q["runner_up"], a, "no").right  # rollout: no class enters it
    v = predict.check(Q["runner_up"], a, "yes")
    assert not v.right and "Gradient-weighted rollout" in v.why and "Grad-CAM" in v.why
    assert a.topk[1].label in predict.question(Q["runner_up"], a)


def test_survive_reads_the_intervention_on_the_proposed_patches(loaded, a):
    chosen = predict.proposal(a)
    assert chosen == ranked(torch.as_tensor(a.rollout()), 0.3) and len(chosen) == round(0.3 * a.num_patches)
    w = vit.intervene(loaded, IMAGE, remove=chosen)
    survived = w.topk[0].index == w.target
    assert predict.check(Q["survive"], a, "yes" if survived else "no", w).right
    v = predict.check(Q["survive"], a, "no" if survived else "yes", w)
    assert not v.right and f"{w.prob_before:.1%} → " in v.why and f"{w.prob_after:.1%}" in v.why
    with pytest.raises(ValueError):
        predict.check(Q["survive"], a, "yes")  # no intervention: a bug of the caller, not the student's


def test_every_question_reads_and_the_reveal_puts_the_guess_beside_the_answer(a):
    for q in PREDICT:
        assert q.section in predict.question(q, a) and "?" in predict.question(q, a)
    text = predict.reveal_text(Q["tokens"], predict.check(Q["tokens"], a, 5))
    assert "your guess: **5**" in text and f"the answer: **{a.num_tokens}**" in text and "✗" in text
    assert predict.tally_text({}).startswith("Right so far: none")
    assert "2 of 3" in predict.tally_text({"a": True, "b": False, "c": True})
