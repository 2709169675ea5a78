"""The app's "Why this class?" tab, its functions called as gradio calls them (the browser test drives the page)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import gradio as gr
import pytest
import torch
from conftest import ROOT

import vit
from vit.explanations.methods import GRADCAM_LAYERS
from vit.model.families import class_names
from vit.ui import events, inputs, state
from vit.ui.tabs import why
from vit.validate import Setting

STAR = ROOT / "assets" / "shapes-star.png"


class Request:
    def __init__(self, session):
        self.session_hash = session


class Progress:
    def __call__(self, *args, **kwargs):
        pass


@pytest.fixture
def shown():
    """A tab showing the star analysed on the model trained here: (key, image as the page sends it, request)."""
    state.reset()
    image = {"path": str(STAR), "orig_name": "star.png"}
    a = vit.analyze(vit.load_model("vit_tiny_shapes", dtype=state.dtype_setting()), STAR)  # as the app's
    key = state.analysis_store().put(a)
    request = Request("why-tab-test")
    session = state.SESSIONS.get("session:why-tab-test")
    session.key, session.shown = key, state.Shown(inputs.image_id(image), Setting(a.model, a.patch_size, a.depth))
    yield key, image, request, a
    state.reset()
    why._kept.clear()


def test_a_new_analysis_offers_its_top_classes_top_1_chosen(shown):
    key, _, _, a = shown
    out = why.targets(key)
    choices, value = out["why-target"]["choices"], out["why-target"]["value"]
    assert value == a.topk[0].index and choices[0][1] == a.topk[0].index
    assert [c[1] for c in choices] == a.probs.argsort(descending=True, stable=True)[:8].tolist()
    assert choices[0][0] == f"star ({a.topk[0].prob:.1%})"
    assert out["why-table"] == "" and out["why-curves"] is None


def test_a_click_on_a_prediction_opens_the_tab_with_that_class(shown):
    key, _, _, a = shown
    out = why.pick(key, SimpleNamespace(value="cross", index=1))
    assert out["why-target"]["value"] == 4 and out["tab-on-screen"] == why.TAB
    assert out["tabs"].selected == why.TAB
    assert why.pick(key, SimpleNamespace(value="not a class", index=0)) == {}


def test_imagenet_names_shown_twice_are_told_apart_by_their_index(monkeypatch):
    names = ["crane"] * 2 + ["cat"]
    a = SimpleNamespace(model="x", probs=torch.tensor([0.2, 0.5, 0.3]))
    monkeypatch.setattr(why, "_class_names", lambda _a: names)
    monkeypatch.setattr(why, "kept", lambda _k: a)
    assert why.pick("k", SimpleNamespace(value="crane (1)", index=1))["why-target"]["value"] == 1
    assert why.pick("k", SimpleNamespace(value="crane", index=0))["why-target"]["value"] == 0


def test_the_map_is_computed_once_and_redrawn_from_what_is_kept(shown):
    key, image, request, _ = shown
    explain = events.named(why.explain_page, why.MAP_OUTPUTS)
    before = state.RUNS["explain"]
    first = explain(image, key, 4, "grad_rollout", 0.6, "cividis", False, why.TAB, 0, "auto", Progress(), request)
    assert state.RUNS["explain"] == before + 1
    caption = first[why.MAP_OUTPUTS.index("why-map-caption")]
    assert caption.startswith("**Gradient-weighted rollout: why “cross” rather than “")
    again = explain(image, key, 4, "grad_rollout", 0.2, "magma", True, why.TAB, 0, "auto", Progress(),
                    request)  # display only
    assert state.RUNS["explain"] == before + 1
    assert again[0] != first[0]  # another picture (a new file)
    hidden = explain(image, key, 5, "gradcam", 0.6, "cividis", False, "patches", 0, "auto", Progress(), request)
    assert hidden == tuple(gr.skip() for _ in why.MAP_OUTPUTS)  # nothing sent
    assert state.RUNS["explain"] == before + 1  # another tab on screen: nothing runs


def test_gradcam_reads_the_block_chosen_and_says_which(shown):
    key, image, request, a = shown
    out = why.targets(key)
    block = GRADCAM_LAYERS["vit_tiny_shapes"]  # the best block on the faithfulness table (README)
    assert out["why-layer"]["choices"] == [(f"default (block {block})", 0), ("block 1", 1), ("block 2", 2),
                                           ("block 3", 3), ("block 4", 4)]
    assert out["why-layer"]["value"] == why.DEFAULT_LAYER
    explain = events.named(why.explain_page, why.MAP_OUTPUTS)
    before = state.RUNS["explain"]
    default = explain(image, key, 3, "gradcam", 0.6, "cividis", False, why.TAB, 0, "auto", Progress(), request)[1]
    assert default.startswith(f"**Grad-CAM, read at block {block}'s `norm1`: why “star” rather than “")
    second = explain(image, key, 3, "gradcam", 0.6, "cividis", False, why.TAB, 2, "auto", Progress(), request)[1]
    assert second.startswith("**Grad-CAM, read at block 2's `norm1`: why “star” rather than “")
    assert state.RUNS["explain"] == before + 2  # another block is another run ...
    explain(image, key, 3, "gradcam", 0.6, "cividis", False, why.TAB, 2, "auto", Progress(), request)
    rollout = explain(image, key, 3, "grad_rollout", 0.6, "cividis", False, why.TAB, 2, "auto", Progress(), request)[1]
    assert "block" not in rollout.split("**")[1]  # ... kept once; the other methods take no block
    assert state.RUNS["explain"] == before + 3
    e = vit.explain(vit.load_model("vit_tiny_shapes", dtype=state.dtype_setting()), STAR, method="gradcam", target=3,
                    layer=2)
    kept = why._recall(why.Asked(key, "gradcam", 3, None, 2, "auto"))[0]
    torch.testing.assert_close(kept.map, e.map)  # the tab's map is the API's at that block


def test_test_it_and_compare(shown):
    key, image, request, _ = shown
    test = events.named(why.test_page, why.CURVE_OUTPUTS)
    picture, caption = test(image, key, 3, "grad_rollout", "mean", "", 0, "auto", Progress(), request)
    assert "deletion AUC" in caption and "insertion AUC" in caption and "for random" in caption
    table = events.named(why.compare_page, ("why-table",))(image, key, 3, "blur", 0, "auto", Progress(), request)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table)
    assert len(rows) == 1 + 7  # header, six methods, random
    assert "AttnLRP" in table and "Occlusion (2×2 tokens)" in table
    assert "blur of the image" in table and "random order (chance)" in table
    deletion = [float(re.findall(r"<td>(?:<b>)?([^<]*)", r)[2]) for r in rows[1:-1]]
    bold = re.findall(r"<td><b>([^<]*)</b></td>", table)
    assert f"{min(deletion):.3g}" in bold  # the best deletion area in bold


def test_a_changed_image_is_not_explained_with_the_old_analysis(shown):
    key, _, request, _ = shown
    other = {"path": str(ROOT / "assets" / "shapes-cross.png"), "orig_name": "cross.png"}
    explain = events.named(why.explain_page, why.MAP_OUTPUTS)
    with pytest.raises(gr.Error, match="press Analyze first"):
        explain(other, key, 3, "grad_rollout", 0.6, "cividis", False, why.TAB, 0, "auto", Progress(), request)
    with pytest.raises(gr.Error, match="method must be one of"):
        explain(shown[1], key, 3, "lime", 0.6, "cividis", False, why.TAB, 0, "auto", Progress(), request)
    with pytest.raises(gr.Error, match="target must be an integer from 0 to 7"):
        explain(shown[1], key, 8, "gradcam", 0.6, "cividis", False, why.TAB, 0, "auto", Progress(), request)
    with pytest.raises(gr.Error, match="Grad-CAM's layer must be an integer from 0 to 4"):
        explain(shown[1], key, 3, "gradcam", 0.6, "cividis", False, why.TAB, 5, "auto", Progress(), request)


def test_the_default_is_attnlrp_asking_why_a_rather_than_b_and_the_rival_can_be_chosen(shown):
    key, image, request, a = shown
    out = why.targets(key)
    order = a.probs.argsort(descending=True, stable=True).tolist()
    assert [v for _, v in out["why-versus"]["choices"][:3]] == ["auto", "none", str(order[0])]
    assert out["why-versus"]["value"] == "auto"
    assert re.fullmatch(r"Cost: 3.5 forward passes' worth, (under 0.1 s|about \d+\.\d s) here\.", out["why-cost"])
    names = class_names(a.model)
    explain = events.named(why.explain_page, why.MAP_OUTPUTS)
    caption = explain(image, key, 3, why.DEFAULT_METHOD, 0.6, "cividis", False, why.TAB, 0, "auto", Progress(),
                      request)[1]
    rival = names[order[1] if order[0] == 3 else order[0]]
    assert caption.startswith(f"**AttnLRP: why “star” rather than “{rival}”?**"), caption
    plain = explain(image, key, 3, "attnlrp", 0.6, "cividis", False, why.TAB, 0, "none", Progress(), request)[1]
    assert plain.startswith("**AttnLRP: why “star”?**")
    chosen = explain(image, key, 3, "attnlrp", 0.6, "cividis", False, why.TAB, 0, "4", Progress(), request)[1]
    assert chosen.startswith("**AttnLRP: why “star” rather than “cross”?**")
    with pytest.raises(gr.Error, match="Pick another class to compare with"):
        explain(image, key, 3, "attnlrp", 0.6, "cividis", False, why.TAB, 0, "3", Progress(), request)
    weak = explain(image, key, 3, "grad_rollout", 0.6, "cividis", False, why.TAB, 0, "auto", Progress(), request)[1]
    assert "On two objects this map often lights the other one" in weak and "lights the other" not in chosen
    occlusion = why.cost_page(key, "occlusion")
    assert occlusion.startswith(f"Cost: {(a.grid[0] - 1) * (a.grid[1] - 1) + 1} forward passes' worth")


def test_occlusion_over_the_run_limit_is_refused_with_its_estimate(shown, monkeypatch):
    key, image, request, _ = shown
    monkeypatch.setenv("VIT_MAX_RUN_S", "0.001")
    explain = events.named(why.explain_page, why.MAP_OUTPUTS)
    with pytest.raises(gr.Error, match=r"VIT_MAX_RUN_S"):
        explain(image, key, 3, "occlusion", 0.6, "cividis", False, why.TAB, 0, "auto", Progress(), request)
