"""Ground-truth scores of explanation maps on drawn shapes (the faithfulness table: benchmarks/faithfulness.py)."""

from __future__ import annotations

import importlib.util
import re
import sys

import numpy as np
import pytest
import torch
from conftest import ROOT

import vit
from vit.explanations import perturb
from vit.explanations.methods import GRADCAM_LAYERS, METHODS


@pytest.fixture(scope="module")
def table():
    """benchmarks/faithfulness.py, the module that scores the maps and builds the table."""
    spec = importlib.util.spec_from_file_location("faithfulness_table", ROOT / "benchmarks" / "faithfulness.py")
    module = sys.modules["faithfulness_table"] = importlib.util.module_from_spec(spec)  # its dataclass looks it up
    spec.loader.exec_module(module)
    return module


def test_patch_coverage_pointing_and_share_on_a_hand_made_mask(table):
    mask = np.zeros((4, 4), bool)
    mask[0:2, 2:4] = True  # the top-right 2x2 patch, wholly
    mask[2, 0] = True  # a quarter of the bottom-left patch
    cov = table.patch_coverage(mask, 2)
    assert cov.tolist() == [[0.0, 1.0], [0.25, 0.0]]
    assert table.pointing_hit(torch.tensor([[0.0, 5.0], [1.0, 1.0]]), cov)
    assert table.pointing_hit(torch.tensor([[0.0, 1.0], [5.0, 1.0]]), cov)  # a quarter is on the mask
    assert not table.pointing_hit(torch.tensor([[0.0, 1.0], [1.0, 5.0]]), cov)
    assert not table.pointing_hit(torch.ones(2, 2), cov)  # a tie: the first patch (0, 0), off the mask
    assert table.mask_share(torch.tensor([[1.0, 2.0], [4.0, 1.0]]), cov) == pytest.approx((2 + 1) / 8)
    assert table.mask_share(torch.zeros(2, 2), cov) == 0.0


def test_the_table_has_every_method_and_the_chance_row(table):
    loaded = vit.load_model("vit_tiny_shapes")
    scores = table.evaluate_shapes(loaded, single=3, two=2, steps=4)
    names = [*METHODS, table.RANDOM]
    assert [(s.method, s.images) for s in scores] == [(m, k) for k in ("one shape", "two shapes") for m in names]
    for s in scores:
        assert s.explained == (3 if s.images == "one shape" else 4)  # two classes explained per two-shape drawing
        assert 0 <= s.pointing <= 1 and 0 <= s.share <= 1 and 0 <= s.deletion <= 1 and 0 <= s.insertion <= 1
    table = table.markdown(scores)
    assert table.count("\n") == len(scores) + 1 and "Gradient-weighted rollout (`grad_rollout`)" in table
    default = vit.explanations.maps.gradcam_layer(loaded)
    assert f"| Grad-CAM, block {default} (its default) (`gradcam`, `layer={default}`) | one shape | 3 |" in table


def test_grad_cam_at_every_block_has_rows_of_its_own(table):
    loaded = vit.load_model("vit_tiny_shapes")
    scores = table.evaluate_shapes(loaded, single=2, two=1, steps=2, methods=("gradcam",), gradcam_layers=(1, 4))
    assert [(s.method, s.layer) for s in scores if s.images == "one shape"] == [
        ("gradcam", vit.explanations.maps.gradcam_layer(loaded)), ("gradcam@1", 1), ("gradcam@4", 4), ("random", None)]
    first = next(s for s in scores if s.method == "gradcam@1" and s.images == "one shape")
    images, labels, masks = vit.shapes.sample(2, table.EVAL_SEED, 64)
    hits = [table.pointing_hit(vit.explain(loaded, im, method="gradcam", target=y, layer=1).map,
                                      table.patch_coverage(m, 8)) for im, y, m in zip(images, labels, masks)]
    assert first.pointing == pytest.approx(sum(hits) / 2)  # the row is Grad-CAM at that block
    assert "| Grad-CAM, block 1 (`gradcam`, `layer=1`) | one shape | 2 |" in table.markdown(scores)


def test_one_drawing_scored_by_hand(table):
    """The first one-shape drawing: every number of its row recomputed from the definitions."""
    loaded = vit.load_model("vit_tiny_shapes")
    images, labels, masks = vit.shapes.sample(1, table.EVAL_SEED, 64)
    row = next(s for s in table.evaluate_shapes(loaded, single=1, two=0, steps=5) if s.method == "grad_rollout")
    e = vit.explain(loaded, images[0], method="grad_rollout", target=labels[0])
    cov = table.patch_coverage(masks[0], 8)
    top = int(e.map.flatten().argmax())
    assert row.pointing == float(cov.flatten()[top] > 0)
    assert row.share == pytest.approx(float((e.map * cov).sum() / e.map.sum()))
    curves = vit.perturbation_curves(loaded, images[0], e.map, labels[0], steps=5, orders=("saliency",))
    assert row.deletion == pytest.approx(curves["deletion", "saliency"].auc)
    assert row.insertion == pytest.approx(curves["insertion", "saliency"].auc)


def test_the_docs_show_the_table():
    readme = (ROOT / "docs" / "explanations.md").read_text()
    header = "| method | images | explained | pointing game ↑ | mask share ↑ | deletion AUC ↓ | insertion AUC ↑ |"
    assert header in readme
    for m in METHODS.values():
        code = f"`{m.name}`" + (f", `layer={GRADCAM_LAYERS['vit_tiny_shapes']}`" if m.name == "gradcam" else "")
        assert re.search(rf"\| {re.escape(m.title)}(, block \d \(its default\))? \({re.escape(code)}\) \| one shape "
                         rf"\| 200 \|", readme), m.name
        assert re.search(rf"\| {re.escape(m.title)}(, block \d \(its default\))? \({re.escape(code)}\) \| two shapes "
                         rf"\| 400 \|", readme), m.name


def test_class_logits_equal_the_model():
    for name, weights in (("vit_tiny_shapes", "trained"), ("vit_b_32", "random")):
        loaded = vit.load_model(name, weights=weights, depth=2 if name == "vit_b_32" else None)
        size = loaded.config.image_size
        x = torch.randn(3, 3, size, size, generator=torch.Generator().manual_seed(0))
        with torch.no_grad():
            torch.testing.assert_close(perturb.class_logits(loaded.module, x), loaded.module(x), atol=1e-5, rtol=1e-5)


@pytest.mark.server  # a subprocess: the entry point itself
def test_the_script_prints_both_tables(torch_home, tmp_path):
    """benchmarks/faithfulness.py: the shapes table, and the photos' curves where ImageNet weights are cached."""
    import subprocess
    import sys

    out = tmp_path / "tables.md"
    proc = subprocess.run([sys.executable, "benchmarks/faithfulness.py", "--single", "2", "--two", "1", "--steps", "4",
                           "--photos", "--photo-model", "vit_b_32", "--photo", "assets/cat.jpg", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    assert text.strip() == proc.stdout.strip()
    assert "| Gradient-weighted rollout (`grad_rollout`) | two shapes | 2 |" in text
    rows = [line for line in text.splitlines() if line.startswith("| cat.jpg |")]
    assert [r.split(" | ")[2] for r in rows] == [f"`{m}`" for m in METHODS]  # the photo's top-1, every method
