"""The lesson agrees with itself (issue 36): a step's text, its picture and its PDF page speak of one layer and one
head, the ones the Layer and Head controls show; Previous and Next only turn to a step there is; a question does not
read like its answer; the Chinese text renders and its section numbers follow the Chinese edition, never going back.

Every number a step's text gives is computed here again from the record its picture is drawn from, at the layer and
head it is drawn at (``a.residual()[layer - 1]`` for the block, the patch lens at that layer for the token content,
...), on the model trained here (fast, no download).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT

from vit.lesson import AT_LAYER, LESSON, lesson_text, predict
from vit.lesson import export as lesson_export
from vit.lesson.predict import PREDICT, PredictStep
from vit.views import registry as pictures
from vit.views.registry import Display

IMAGE = ROOT / "assets" / "shapes-heart_and_circle.png"
NUMBER = re.compile(r"\d+(?:\.\d+)?")
Q = {q.kind: q for q in PREDICT}


@pytest.fixture(scope="module")
def a():
    import vit
    from vit.images import load_image

    return vit.analyze(vit.load_model("vit_tiny_shapes"), load_image(IMAGE))


def shown(a) -> list[tuple[int, int]]:
    """(layer, head): layer 1, a middle layer and L, each at a head other than the default 1."""
    return [(1, a.num_heads), (a.depth // 2, 2), (a.depth, 2)]


def detail(markdown: str) -> str:
    """A step's own sentence with this image's numbers: after its heading and the chapter's words."""
    heading, quote, words = markdown.split("\n\n")
    assert heading.startswith("**") and quote.startswith(("> ", "```python\n"))  # the chapter's words, or its code
    return words


def step_of(view: str):
    return next(s for s in LESSON if s.view == view)


def numbers(text: str) -> set[str]:
    return set(NUMBER.findall(text))


def lens(a, layer: int) -> tuple[int, str, int]:
    """The token-content picture's record at ``layer``: (patches voting for the final class, the legend's first class
    and its count), from the patch lens as vit.views.inside.lens_view reads it."""
    from vit.model.families import class_names
    from vit.views.inside import lens_classes

    indices = a.patch_lens(layer)[0].numpy()
    most, count = lens_classes(indices)[0]
    return int((indices == a.topk[0].index).sum()), class_names(a.model)[most], count


def expected(view: str, a, layer: int, head: int) -> tuple[set[str], set[str]]:
    """(every number the step's text may give, those it must give) for the step showing ``view``."""
    rows, cols = a.grid
    N, L, h, K = rows * cols, a.depth, a.num_heads, int(a.probs.shape[0])
    T = N + len(a.prefix_token_names)
    D = int(a.queries[layer - 1].shape[-1])
    H, W = a.input_size
    prob = f"{a.topk[0].prob * 100:.1f}"
    at = {layer, L, *((head, h) if view == "matrix-view" else ())}
    r = a.residual()[layer - 1]
    norms = {f"{v:.1f}" for v in (r.stream, r.attention, r.mlp, r.output)}
    agree, _, most = lens(a, layer)
    may = {"patch-grid": {H, W, rows, cols, a.patch_size, N, T, D}, "stage-table": {L, T, D, 4 * D, 4},
           "matrix-view": {T}, "block-view": {T}, "head-views": {h, D, D // h, T},
           "block-code": {L, T, D, 4 * D, h}, "layer-views": {L, T, D}, "lens-view": {agree, N, most},
           "depth-plot": {D, K, prob}, "rollout-view": {3, H, W, T, L, D, K, prob}}[view]
    must = {"block-view": norms, "block-code": norms, "lens-view": {agree, most, N}, "matrix-view": {head},
            "depth-plot": {prob}}.get(view, set())
    if view in AT_LAYER:
        may, must = may | at, must | {layer}
    return {str(v) for v in (*may, *must, 1)}, {str(v) for v in must}


# --------------------------------------------------------------------------- the page's text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_number_of_a_step_is_its_pictures_at_the_chosen_layer_and_head(a, lang):
    for layer, head in shown(a):
        display = Display(layer=layer, head=head)
        for step in LESSON:
            words = detail(lesson_text(step, a, lang, display))
            may, must = expected(step.view, a, layer, head)
            assert numbers(words) <= may, (step.view, layer, head, words)
            assert must <= numbers(words), (step.view, layer, head, words)


def test_a_step_drawn_at_a_layer_says_which_layer_and_head_beside_its_picture(a):
    for layer, head in shown(a):
        display = Display(layer=layer, head=head)
        for step in LESSON:
            words = detail(lesson_text(step, a, "en", display))
            if step.view == "matrix-view":
                assert words.startswith(f"Layer {layer} of {a.depth}, head {head} of {a.num_heads} (the Layer and "
                                        "Head controls)")
            elif step.view in AT_LAYER:
                assert f"Layer {layer} of {a.depth} (the Layer control)" in words, step.view
            else:  # a picture of every layer, or of none
                assert "(the Layer" not in words, step.view
            zh = detail(lesson_text(step, a, "zh", display))
            assert (f"第 {layer} 层（共 {a.depth} 层" in zh) == (step.view in AT_LAYER), step.view
            if step.view in AT_LAYER:
                title = pictures.draw(a, step.view, display).title
                if step.view != "block-view":  # its layer is drawn into the picture, not its title
                    assert re.search(rf"\b{layer}\b", title), (step.view, title)
                if step.view == "matrix-view":
                    assert f"head {head}" in title


def test_the_numbers_are_the_pictures_own(a):
    """Beside the numbers recomputed above, the pictures' own words at that layer: the token content's caption counts
    the same patches, the block's code view reads the same norms, and follows the Layer control (it stayed at L)."""
    from vit.views import inside

    for layer, head in shown(a):
        display = Display(layer=layer, head=head)
        agree, most, count = lens(a, layer)
        text = lesson_text(step_of("lens-view"), a, "en", display)
        assert f"read {agree} of the {a.num_patches} patches as **{a.topk[0].label}**" in text
        assert f"the most frequent vote is {most} ({count})" in text
        assert f"**{agree} of {a.num_patches} patches**" in pictures.draw(a, "lens-view", display).caption
        code = pictures.draw(a, "block-code", display)
        assert code.title.endswith(f"layer {layer}")
        notes = " ".join(n for _, n in inside.block_code_lines(a, layer))
        r = a.residual()[layer - 1]
        assert f"‖X‖ = {r.stream:.1f}" in notes
        assert f"with ‖X‖ {r.stream:.1f}" in lesson_text(step_of("block-code"), a, "en", display)


def test_without_controls_the_text_is_at_the_last_layer_and_head_one(a):
    """The CLI and the API have no controls: the last layer and head 1, as their pictures are drawn (Display())."""
    for step in LESSON:
        assert lesson_text(step, a) == lesson_text(step, a, "en", Display(layer=a.depth, head=1))
        assert lesson_text(step, a) == lesson_text(step, a, "en", Display())
    block = lesson_text(step_of("block-view"), a)
    assert f"Layer {a.depth} of {a.depth}" in block and f"{a.residual()[-1].output:.1f}" in block


# --------------------------------------------------------------------------- the questions


def test_every_question_gives_only_what_its_picture_shows(a):
    n = len(predict.proposal(a))
    rows, cols = a.grid
    allowed = {"tokens": {a.input_size[0], a.input_size[1], a.patch_size}, "layer": {a.depth, 1},
               "patch": {rows * cols, a.depth}, "survive": {30, a.depth, n, rows * cols, rows * cols - n}}
    for layer, head in shown(a):
        display = Display(layer=layer, head=head)
        for q in PREDICT:
            text = predict.question(q, a, "en", display)
            assert text.startswith(f"**{q.section} {q.title}**"), text
            words = text.split("\n\n")[-1]
            may = allowed.get(q.kind, {1, layer, a.depth})  # runner_up: the rollout beside it, through that layer
            assert numbers(words) <= {str(v) for v in may}, (q.kind, words)
        runner_up = predict.question(Q["runner_up"], a, "en", display)
        assert f"Layer {layer} of {a.depth} (the Layer control)" in runner_up
        assert f"layers 1 to {layer}" in runner_up
        assert pictures.draw(a, "rollout-view", display).title.endswith(f"1-{layer}")


@pytest.mark.parametrize("lang, either", [("en", "Yes or no."), ("zh", "是或否。")])
def test_a_yes_or_no_question_does_not_read_like_its_answer(a, lang, either):
    """Step 15 read "…will the prediction survive? Yes: the model still says “circle”…": an answer, before the
    student gave one. A yes/no question ends on its question and "yes or no", nothing after it."""
    for kind in ("runner_up", "survive"):
        words = predict.question(Q[kind], a, lang).split("\n\n")[-1]
        assert words.endswith(f"** {either}"), words
        assert not re.search(r"\bYes:|是：", words)
    survive = predict.question(Q["survive"], a)
    assert f"will the model still say “{a.topk[0].label}”" in survive


# --------------------------------------------------------------------------- the Chinese lesson


def all_texts(a, lang: str) -> list[str]:
    display = Display(layer=2, head=2)
    return [lesson_text(s, a, lang, display) if not isinstance(s, PredictStep) else
            predict.question(s, a, lang, display) for s in predict.walk(True)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_bold_renders_as_bold(a, lang):
    """Step 1 in Chinese showed its asterisks: "**…多少个 token？**输入…" is no emphasis for a CommonMark parser (a
    closing ** after punctuation needs a space or punctuation after it). Every step and question renders its bold."""
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark")
    for text in all_texts(a, lang):
        html = md.render(text)
        assert "**" not in html and "<strong>" in html, text


def test_the_chinese_sections_are_the_chinese_editions_and_never_go_back(a):
    """The Chinese edition numbers its sections its own way (zh/ch11-vision-transformers/ch11.4-vit-encoder.qmd of
    jshn9515/deep-learning-notes): each Chinese step names one of its sections, and along the walk (questions
    included) the numbers only go forward; the English walk keeps the English edition's."""
    edition = {"11.4.1", "11.4.2", "11.4.3", "11.4.4", "11.4.4.1", "11.4.4.2", "11.4.4.3", "11.4.5", "11.4.6",
               "11.4.7", "11.4.8"}
    for lang in ("en", "zh"):
        sections = [s.words(lang)[0] for s in predict.walk(True)]
        order = [tuple(map(int, s.split("."))) for s in sections]
        assert order == sorted(order), (lang, sections)
        if lang == "zh":
            assert set(sections) <= edition
    assert [s.section for s in LESSON] == [s.words("en")[0] for s in LESSON]
    assert step_of("block-view").words("zh")[0] == "11.4.4"  # the block: the Chinese edition's 11.4.4


# --------------------------------------------------------------------------- the PDF


def test_each_pdf_page_s_text_is_at_its_picture_s_layer_and_head(a):
    for layer, head in shown(a)[1:]:
        display = Display(layer=layer, head=head)
        for page, step in zip(lesson_export.pages(a, display), LESSON):
            assert page.text == lesson_export.paragraphs(lesson_text(step, a, "en", display))
            words = " ".join(r.text for r in page.text[-1].runs)
            may, must = expected(step.view, a, layer, head)
            assert must <= numbers(words) <= may, (step.view, words)
            if step.view in AT_LAYER and step.view != "block-view":
                assert re.search(rf"\b{layer}\b", page.view.title), (step.view, page.view.title)


# --------------------------------------------------------------------------- the Lesson tab


@pytest.fixture(scope="module")
def key(a):
    from vit.ui import state

    return state.analysis_store().put(a)


def turn(key, step: int, delta: int, predict_on: bool = False, layer=2, head=2) -> dict:
    from vit.ui.tabs import lesson as tab

    return tab.lesson(key, step, delta, layer, head, 0.6, "cividis", "", tab.TAB, predict_on)


def test_the_page_s_text_uses_the_layer_and_head_controls(a, key):
    steps = predict.walk(False)
    for i, step in enumerate(steps):
        out = turn(key, i, 0, layer=2, head=2)
        assert out["lesson-text"] == lesson_text(step, a, "en", Display(layer=2, head=2))
    block = turn(key, [s.view for s in steps].index("block-view"), 0, layer=1, head=1)["lesson-text"]
    assert f"Layer 1 of {a.depth}" in block and f"‖X‖ {a.residual()[0].stream:.1f}" in block


def test_the_stage_table_step_is_in_the_page_s_language(a, key):
    """Review 2026-12-04, defect 1: on the Chinese page step 2 ("read the table") showed the table in English, its
    headers, rows and note, while the Patches tab's and the PDF's were Chinese. Now it is the Patches tab's table in
    the page's language, after a switch back and forth too."""
    import gradio as gr

    from vit.ui import pictures as page
    from vit.ui.tabs import lesson as tab

    step = [s.view for s in predict.walk(False)].index("stage-table")
    for lang in ("zh", "en", "zh"):
        request = gr.Request(cookies={"vit_lang": lang}, headers={}, query_params={})
        out = tab.lesson(key, step, 0, 2, 2, 0.6, "cividis", "", tab.TAB, False, request)
        assert out["lesson-table"] == page.stage_table(a, lang), lang
    assert "<th>阶段</th>" in out["lesson-table"] and "<th>stage</th>" not in out["lesson-table"]


def test_no_patch_is_outlined_in_the_lessons_patch_grid(a, key):
    """The walk at 1280x720: a student clicked the corner patch 64, and the lesson's grid outlined patch 37, the
    middle one (the grid's default), as if it were the clicked one. A lesson's picture is nobody's click: none."""
    import numpy as np
    from PIL import Image

    out = turn(key, [s.view for s in predict.walk(False)].index("patch-grid"), 0)
    shown = np.asarray(Image.open(out["lesson-picture"]["value"]).convert("RGB"), dtype=float)
    drawn = {marks: np.asarray(pictures.draw(a, "patch-grid", Display(layer=2, head=2, marks=marks)).image.convert(
        "RGB"), dtype=float) for marks in (True, False)}
    assert "token 37" in pictures.draw(a, "patch-grid", Display(layer=2, head=2)).caption  # marked: the middle one
    assert shown.shape == drawn[False].shape and np.abs(shown - drawn[False]).max() <= 8  # PNG, as drawn
    assert np.abs(shown - drawn[True]).max() > 100  # the outline is not there


@pytest.mark.parametrize("predict_on", [False, True])
def test_previous_is_off_on_step_one_and_next_on_the_last(key, predict_on):
    last = len(predict.walk(predict_on)) - 1
    first = turn(key, 0, 0, predict_on)
    assert first["lesson-prev"]["interactive"] is False and first["lesson-next"]["interactive"] is True
    middle = turn(key, 0, 1, predict_on)
    assert middle["lesson-step"] == 1 and middle["lesson-prev"]["interactive"] is True
    end = turn(key, last - 1, 1, predict_on)
    assert end["lesson-step"] == last and end["lesson-next"]["interactive"] is False
    # Next on the last step (a click that came through, a key, the API), Previous on the first: nothing changes,
    # the step's text, picture, answer and reveal stay as they are.
    for step, delta in ((last, 1), (0, -1)):
        out = turn(key, step, delta, predict_on)
        assert set(out) == {"lesson-prev", "lesson-next"}, sorted(out)


class Page:
    """The request of a page in ``lang``, as vit.ui.lang reads it: its language cookie."""

    def __init__(self, lang: str):
        from vit.ui.lang import COOKIE

        self.cookies, self.query_params, self.headers = {COOKIE: lang}, {}, {}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_guess_that_is_no_answer_is_a_sentence_beside_the_box(a, key, lang):
    """Issue 53 (2): an empty box, 2.5, -1 or 65 at "when is the answer decided?" showed red Error badges and a toast,
    "expected a whole number from 1 to 4, got None", in English on the Chinese page too. Now a sentence in the page's
    language under the box, and nothing else changes (the guess stays in the box, the tally as it was); in the
    lesson and in the Across-depth tab's "Quiz me" alike."""
    from vit import i18n
    from vit.ui.tabs import lesson as tab
    from vit.ui.tabs import quiz

    steps, page = predict.walk(True), Page(lang)
    shown = (2, 2, 0.6, "cividis", "")  # layer, head, opacity, colour map, screen
    typed, answer = quiz.handlers("depth")["typed"], quiz.names("depth")["answer"]
    wanted = i18n.text("guess-whole", lang, lo=1, hi=a.depth)
    for bad in (None, 2.5, -1, 65, "sixty-five"):
        out = tab.answer(None, key, steps.index(Q["layer"]), True, {}, *shown, guess=bad, request=page)
        assert out == {"lesson-answer": wanted}, bad
        assert typed(key, {}, *shown, guess=bad, request=page) == {answer: wanted}, bad
    tokens = tab.answer(None, key, steps.index(Q["tokens"]), True, {}, *shown, guess=None, request=page)
    assert tokens == {"lesson-answer": i18n.text("guess-whole-from", lang, lo=1)}
    right = tab.answer(None, key, steps.index(Q["layer"]), True, {}, *shown, guess=predict.decided_at(a), request=page)
    assert right["lesson-score"] and right["lesson-tally"] == predict.tally_text(right["lesson-score"], lang)


def test_previous_starts_off_and_both_buttons_follow_each_turn():
    import app

    config = app.build_demo().get_config_file()
    comps = {c["id"]: c for c in config["components"]}
    ids = {i: c.get("props", {}).get("elem_id") for i, c in comps.items()}
    prev = next(c for c in comps.values() if c.get("props", {}).get("elem_id") == "lesson-prev")
    assert prev["props"]["interactive"] is False
    deps = {d["api_name"]: d for d in config["dependencies"]}
    for name in ("lesson_next", "lesson_previous", "lesson_shown", "asked_anew"):  # asked_anew: a new analysis
        assert {"lesson-prev", "lesson-next"} <= {ids[o] for o in deps[name]["outputs"]}, name


def test_the_downloaded_pdf_s_pages_say_the_controls_layer_and_head(a, key):
    from test_lesson_export import pdf_pages

    from vit.ui.tabs import lesson as tab

    layer, head = 2, 2
    pages = pdf_pages(Path(tab.download_lesson(key, layer, head, 0.6, "cividis")))
    views = [s.view for s in LESSON]
    r = a.residual()[layer - 1]
    block = pages[views.index("block-view")]["text"]
    assert f"Layer {layer} of {a.depth} (the Layer control)" in block
    assert f"‖X‖ {r.stream:.1f}" in block and f"‖Y‖ {r.output:.1f}" in block
    assert f"{a.residual()[-1].stream:.1f}" not in block  # the last layer's, as the page said before
    agree, most, count = lens(a, layer)
    assert f"read {agree} of the {a.num_patches} patches" in pages[views.index("lens-view")]["text"]
    matrix = pages[views.index("matrix-view")]["text"]
    assert f"head {head} of {a.num_heads} (the Layer and Head controls)" in matrix
