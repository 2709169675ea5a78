"""benchmarks/bench.py: it runs end to end, and what it times is what it claims to time.

No timing is asserted (the test machines are shared and noisy); the tests check
that the benchmark completes and writes its numbers, that the peer really keeps
every attention map and rolls them out as our rollout does, and that the views
it times are vit.views' own.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from reference import attention_rollout

import vit

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench.py"
METHODS = ("bare", "analyze", "app", "page", "display", "fusion", "discard", "peer")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tiny_run_prints_the_table_and_writes_json(tmp_path):
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, str(BENCH), "--tiny", "--json", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ("| config | bare ms | analyze ms (× bare) | app ms (× bare) | page ms (× bare) | display ms "
            "| fusion ms | discard ms | peer ms (× bare)") in proc.stdout
    assert "| b32 (T=50, L=1) |" in proc.stdout

    r = json.loads(out.read_text())
    assert {"device", "torch", "date", "configs", "targets", "views_from", "encoding"} <= r.keys()
    assert r["device"].startswith(("cpu: ", "cuda: "))
    assert r["torch"] == torch.__version__
    c = r["configs"]["b32"]
    assert (c["model"], c["patch_size"], c["depth"], c["tokens"], c["repeat"]) == ("vit_b_32", 32, 1, 50, 1)
    for method in METHODS:
        assert len(c["raw_ms"][method]) == 1 and c["raw_ms"][method][0] > 0
        assert c["median_ms"][method] > 0
    for method in METHODS[1:]:
        assert c["median_ratio"][method] == pytest.approx(c["median_ms"][method] / c["median_ms"]["bare"])
    assert all(v > 0 for v in c["parts_median_ms"].values())
    for mode in ("bare", "analyze", "peer"):
        assert c["rss"][mode]["rss_gb"] >= c["rss"][mode]["rss_before_gb"] > 0
    e = r["explanations"]  # issue 11's costs, at B/32 depth 1 here
    assert (e["model"], e["patch_size"], e["depth"]) == ("vit_b_32", 32, 1)
    for method in ("rollout", "attention", "grad_rollout", "gradcam", "curve"):
        assert e["median_ratio"][method] == pytest.approx(e["median_ms"][method] / e["median_ms"]["bare"])
        assert len(e["raw_ms"][method]) == 1 and e["raw_ms"][method][0] > 0
    assert set(e["targets"]) == {"grad_rollout", "gradcam", "curve"}
    assert "| vit_b_32 P=32 (T=50, L=1) |" in proc.stdout and "target curve × bare at P=32" in proc.stdout


def test_peer_keeps_every_attention_map_and_rolls_out_like_ours(bench):
    model = bench.peer_model("vit_b_32", 32, depth=3, grid=7)
    kept = bench.keep_all_attention(model)
    x = torch.randn(1, 3, 224, 224)
    with torch.inference_mode():
        logits = model(x)
    assert [tuple(a.shape) for a in kept] == [(1, 12, 50, 50)] * 3  # every layer, every head
    torch.testing.assert_close(kept[0].sum(-1), torch.ones(1, 12, 50))  # softmax rows
    with torch.inference_mode():
        reference = attention_rollout([a[0].mean(0) for a in kept])[0, 1:]
        torch.testing.assert_close(bench.peer_rollout(kept), reference)
        # The hooks do not change the model's output.
        logits2, mask = bench.run_peer(model, kept, x)
    torch.testing.assert_close(logits2, logits)
    assert kept == [] and mask.shape == (49,)


def test_views_are_drawn_by_vit_views_not_a_replica(bench):
    """The benchmark times the pictures the app, the CLI and vit.views draw: it imports no app, copies no view."""
    from vit.views import attention, base

    source = BENCH.read_text()
    assert "import app" not in source and "render." not in source and "__wrapped__" not in source
    model = vit.load_model("vit_b_32", weights="random", depth=2)
    a = vit.analyze(model, bench.IMAGE)
    drawn = bench.render_views(a)
    pictures = {name: o for name, o in drawn if isinstance(o, base.View)}
    assert len(pictures) == 6 and bench.encode_pictures(drawn) == 6
    expected = attention.rollout_view(a, a.depth, bench.OPACITY, bench.CMAP)
    assert pictures["rollout-view"].image.tobytes() == expected.image.tobytes()
    changed = bench.display_change(a, 1)
    assert [v.title for _, v in changed] == ["Attention rollout, layers 1-1", "Heads of layer 1",
                                             "Token 12 as query, layer 1, head 2"]  # (0.7, 0.2): row 1, col 4
