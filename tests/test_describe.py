"""Every picture's text alternative (issue 36): written by its view from the arrays it draws, at the display's layer
and head, in the page's language (``View.alt``).

The numbers are checked against the analysis's own arrays, read here with numpy, at layer 2 of 4 and head 2 of 3
(the defaults are the last layer and head 1): a text alternative that ignored the display would name other patches.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import vit
from vit.model.families import class_names
from vit.views import depth, describe, inside, registry
from vit.views.base import bar_number
from vit.views.registry import Display
from vit.views.whatif import HeadGrid

ROOT = Path(__file__).resolve().parents[1]
IMAGE = ROOT / "assets" / "shapes-heart_and_circle.png"
HAN = re.compile(r"[\u4e00-\u9fff]")
LAYER, HEAD = 2, 2  # off the defaults (the last layer, head 1)
QUERY = (0.3, 0.6)  # (x, y): row int(0.6 * 8) = 4, column int(0.3 * 8) = 2 of the 8x8 grid -> token 1 + 4*8 + 2
QUERY_TOKEN = 35
REMOVED = [27, 28, 35, 36]  # patch indices, row-major from 0: tokens 28, 29, 36, 37


@pytest.fixture(scope="module")
def sources():
    """An analysis of the small model, and an explanation with its curves, interventions and head grids of it."""
    loaded = vit.load_model("vit_tiny_shapes")
    a = vit.analyze(loaded, IMAGE)
    e = vit.explain(loaded, IMAGE, method="gradcam", layer=3)
    curves = vit.perturbation_curves(loaded, IMAGE, e, e.target, steps=4)
    changed = vit.intervene(loaded, IMAGE, remove=REMOVED, ablate=[(2, 1), (4, 3)])
    importance = np.linspace(-0.05, 0.4, a.depth * a.num_heads).reshape(a.depth, a.num_heads)[::-1].copy()
    grids = [HeadGrid(a.depth, a.num_heads, changed.ablated),
             HeadGrid(a.depth, a.num_heads, changed.ablated, importance, a.topk[0].label)]
    weights = {"filters": vit.patch_filters(loaded), "similarity": vit.position_similarity(loaded)}
    own = {"why-map": [e], "why-curves": [(e, curves)], "whatif-map": [changed, vit.intervene(loaded, IMAGE)],
           "whatif-heads": grids}
    return own, a, weights.__getitem__


def alt(source, name, weights=None, lang="en", **display) -> str:
    shown = Display(**{"layer": LAYER, "head": HEAD, "query": QUERY, "lang": lang, **display})
    return registry.draw(source, name, shown, weights=weights).alt


def valued(token, value) -> str:
    return f"{token} ({bar_number(float(value))})"


def half(values) -> tuple[int, float]:
    """(k, share): the fewest values holding at least half of their sum, counted one by one."""
    values = sorted((float(v) for v in np.ravel(values) if not np.isnan(v)), reverse=True)
    total, held = sum(values), 0.0
    for k, v in enumerate(values, 1):
        held += v
        if held >= total / 2:
            return k, held / total
    raise AssertionError("no half")


def numbers(text: str) -> list[str]:
    return sorted(re.findall(r"\d+(?:\.\d+)?", text))


# --------------------------------------------------------------------------- every picture, both languages


@pytest.mark.parametrize("name", list(registry.PICTURES))
def test_every_picture_describes_itself_in_both_languages(sources, name):
    """Non-empty, short, in its language, not its caption; the same numbers in English and in Chinese."""
    own, a, weights = sources
    for source in own.get(name, [a]):
        words = {}
        for lang in ("en", "zh"):
            shown = Display(layer=LAYER, head=HEAD, query=QUERY, lang=lang)
            view = registry.draw(source, name, shown, weights=weights)
            assert view.alt.strip() and len(view.alt) <= 400, (name, lang, view.alt)
            assert view.alt != view.caption
            words[lang] = view.alt
        assert HAN.search(words["zh"]), words["zh"]
        assert not HAN.search(words["en"]), words["en"]
        assert numbers(words["en"]) == numbers(words["zh"]), words


def test_the_frame_and_projector_do_not_change_the_words(sources):
    _, a, weights = sources
    assert alt(a, "rollout-view") == alt(a, "rollout-view", frame=(670, 672), projector=True)


# --------------------------------------------------------------------------- the numbers, from the record


def test_rollout_names_the_chosen_layers_brightest_patches(sources):
    _, a, _ = sources
    heat = a.rollout_matrix_row(LAYER).numpy()[1:]  # over the 64 patches, token 1 first
    order = np.argsort(-heat, kind="stable")
    words = alt(a, "rollout-view")
    top = ", ".join(valued(i + 1, heat[i]) for i in order[:3])
    k, share = half(heat)
    assert words == f"Attention rollout, layer 2 of 4: brightest patches {top}; {share:.0%} of it on {k} of 64 patches."
    assert words != alt(a, "rollout-view", layer=4)  # the default layer reads otherwise


def test_the_query_names_its_token_layer_head_and_brightest_patches(sources):
    _, a, _ = sources
    row = a.attention(LAYER, HEAD, QUERY_TOKEN).numpy()[1:]
    order = np.argsort(-row, kind="stable")
    words = alt(a, "query-view")
    assert words.startswith(f"Where token {QUERY_TOKEN} (patch row 4, col 2) looks, layer 2 of 4, head 2 of 3: ")
    assert "brightest patches " + ", ".join(valued(i + 1, row[i]) for i in order[:3]) in words
    k, share = half(row)
    assert f"{share:.0%} of it on {k} of 64 patches" in words
    assert words != alt(a, "query-view", layer=None, head=1)


def test_each_head_tile_names_its_brightest_patch(sources):
    _, a, _ = sources
    rows = a.cls_attention[LAYER - 1].numpy()[:, 1:]  # (h, 64): each head's class-token row over the patches
    words = alt(a, "head-views")
    tops = ", ".join(str(int(np.argmax(row)) + 1) for row in rows)
    best = min(range(len(rows)), key=lambda h: half(rows[h])[0])
    k, share = half(rows[best])
    assert words == (f"The class token in the 3 heads of layer 2 of 4, one tile each; brightest patch of heads 1–3: "
                     f"{tops}; the most focused, head {best + 1}: {share:.0%} of it on {k} of 64 patches.")
    assert words != alt(a, "head-views", layer=None)


def test_each_layer_tile_names_its_brightest_patch(sources):
    _, a, _ = sources
    fused = a.cls_attention.numpy().mean(axis=1)[:, 1:]  # (L, 64): heads fused by the mean, as the analysis is
    assert a.head_fusion == "mean"
    tops = ", ".join(str(int(np.argmax(row)) + 1) for row in fused)
    assert alt(a, "layer-views") == (
        f"The class token at each layer, heads fused by mean; brightest patch at layers 1–4: {tops}; half of its "
        f"attention on the patches lies on {half(fused[0])[0]} of 64 patches at layer 1, on {half(fused[-1])[0]} at "
        "layer 4.")


def test_the_depth_plot_reads_the_final_class_at_every_depth(sources):
    _, a, _ = sources
    final = a.topk[0]
    probs = [p.final_class_prob for p in a.layer_predictions]
    indices = [p.index for p in a.layer_predictions]
    since = next(n for n in range(1, a.depth + 1) if all(i == final.index for i in indices[n - 1:]))
    words = alt(a, "depth-plot")
    assert f"p(“{final.label}”) {', '.join(f'{p:.0%}' for p in probs)}" in words
    assert f"the top-1 is “{final.label}” from layer {since} on" in words


def test_the_block_gives_the_chosen_layers_norms(sources):
    _, a, _ = sources
    means = a.residual_means.numpy()  # (L, 4): stream in, attention, MLP, out
    stream, attention, mlp, out = means[LAYER - 1]
    words = alt(a, "block-view")
    assert words.startswith(f"Block 2 of 4: tokens enter with mean length {stream:.1f}, attention adds "
                            f"{attention:.1f}, the MLP adds {mlp:.1f}, they leave with {out:.1f}")
    assert words.endswith(", ".join(f"{v:.1f}" for v in means[:, 3]) + ".")
    assert words != alt(a, "block-view", layer=None)


def test_the_lens_counts_the_chosen_layers_votes(sources):
    _, a, _ = sources
    votes = a.lens_index[LAYER - 1].numpy()  # (64,)
    counts = np.bincount(votes)
    first = int(np.argmax(counts))
    final = a.topk[0]
    words = alt(a, "lens-view")
    assert words.startswith(f"Each patch's own vote at layer 2 of 4: {counts[first]} patches vote "
                            f"“{class_names(a.model)[first]}”")
    assert f"{int((votes == final.index).sum())} of 64 agree with the final answer “{final.label}”" in words


def test_token_norms_name_the_longest_patches(sources):
    _, a, _ = sources
    norms = a.token_norms[LAYER - 1].numpy()
    patches = norms[1:]
    order = np.argsort(-patches, kind="stable")[:3]
    words = alt(a, "token-norms")
    assert f"after layer 2 of 4: from {patches.min():.1f} to {patches.max():.1f} (median {np.median(patches):.1f})" \
        in words
    assert "longest " + ", ".join(f"{i + 1} ({patches[i]:.1f})" for i in order) in words
    assert words.endswith(f"the class token's is {norms[0]:.1f}.")


def test_the_matrix_names_its_largest_weight_at_the_chosen_layer_and_head(sources):
    _, a, _ = sources
    m = a.attention_matrix(LAYER, HEAD).numpy()
    i, j = np.unravel_index(np.argmax(m), m.shape)
    words = alt(a, "matrix-view")
    assert "layer 2 of 4, head 2 of 3" in words
    assert f"largest weight {bar_number(float(m[i, j]))} (token {i} on token {j})" in words
    assert f"token {int(np.argmax(m.mean(axis=0)))} draws the most" in words


def test_the_distances_name_the_farthest_head(sources):
    _, a, _ = sources
    d = a.attention_distance.numpy()
    layer, head = np.unravel_index(np.argmax(d), d.shape)
    assert f"farthest: layer {layer + 1}, head {head + 1}, {d[layer, head]:.0f} px" in alt(a, "distance-view")


def test_the_explanation_names_its_brightest_patches(sources):
    own, _, _ = sources
    e = own["why-map"][0]
    heat = e.map.numpy().ravel()
    order = np.argsort(-heat, kind="stable")[:3]
    words = alt(e, "why-map")
    rival = f" rather than “{e.versus_label}”" if e.versus_label else ""
    assert words.startswith(f"Grad-CAM at block 3, why “{e.label}”{rival}? ({e.label} {e.prob:.1%}): brightest patches "
                            + ", ".join(valued(i + 1, heat[i]) for i in order))


def test_what_if_names_the_removed_patches_the_change_and_the_kept_rollout(sources):
    own, _, _ = sources
    w, untouched = own["whatif-map"]
    heat = np.where(np.isnan(w.rollout), -np.inf, w.rollout).ravel()
    i = int(np.argmax(heat))
    words = alt(w, "whatif-map")
    assert words.startswith("What if: 4 of 64 patches removed (tokens 28, 29, 36, 37) and 2 heads off (layer 2 head 1, "
                            "layer 4 head 3).")
    assert f"p(“{w.label}”) from {w.prob_before:.1%} to {w.prob_after:.1%}" in words
    assert f"the 60 kept patches is brightest at {valued(i + 1, heat[i])}" in words
    assert alt(untouched, "whatif-map").startswith(f"Nothing taken away: “{untouched.label}”")


def test_head_importance_names_the_largest_drops(sources):
    own, _, _ = sources
    plain, measured = own["whatif-heads"]
    drops = measured.importance
    layer, head = np.unravel_index(np.argmax(drops), drops.shape)
    words = alt(measured, "whatif-heads")
    change = "falls" if drops[layer, head] >= 0 else "rises"
    points = abs(drops[layer, head]) * 100
    assert f"the largest drops are layer {layer + 1} head {head + 1} (p {change} by {points:.1f} points)" in words
    assert f"{int((np.abs(drops) < 0.01).sum())} of 12 heads" in words
    assert alt(plain, "whatif-heads") == "The 4×3 heads, layers down and heads across; 2 heads off (layer 2 head 1, " \
                                         "layer 4 head 3)."


def test_a_chinese_alternative_keeps_the_layer_and_head(sources):
    _, a, _ = sources
    assert "第 2 层（共 4 层）、head 2（共 3 个）" in alt(a, "query-view", lang="zh")
    assert alt(a, "rollout-view", lang="zh").startswith("Attention rollout，第 2 层（共 4 层）：最亮的 patch 是 ")


# --------------------------------------------------------------------------- the parts, on their own


def test_half_of_a_map_is_held_by_its_fewest_patches():
    assert describe.focus(np.array([[0.5, 0.1], [0.3, 0.1]])) == (pytest.approx(0.5), 1, 4)
    assert describe.focus(np.array([[0.2, np.nan], [0.2, 0.2]])) == (pytest.approx(2 / 3), 2, 3)  # NaN: removed
    assert describe.focus(np.zeros((2, 2))) is None
    assert describe.brightest(np.array([[0.1, np.nan], [0.3, 0.2]]), prefix=1, k=5) == [(3, 0.3), (4, 0.2), (1, 0.1)]


def test_a_deep_models_layers_are_named_a_few_at_a_time():
    """Up to 12 layers every number is listed; deeper models (24, 32 layers) list 8 of them, the first and the last
    among them, each named by its layer, so the words stay short."""
    assert describe.series([str(n) for n in range(1, 13)], "en") == ", ".join(str(n) for n in range(1, 13))
    words = describe.series([f"v{n}" for n in range(1, 33)], "en")
    assert words.startswith("at layer 1: v1, ") and words.endswith("at layer 32: v32")
    assert words.count("at layer") == describe.SPREAD
    assert describe.series([f"v{n}" for n in range(1, 25)], "zh").startswith("第 1 层 v1、")


def test_a_backbone_says_it_has_nothing_to_read():
    from types import SimpleNamespace

    backbone = SimpleNamespace(has_classifier=False)
    for lang, words in (("en", "no classifier"), ("zh", "没有分类头")):
        assert words in depth.depth_view(backbone, lang=lang).alt
        assert words in inside.lens_view(backbone, 1, lang=lang).alt
