"""bfloat16 beside float32, the reference (issue 39): the option, and how far bfloat16's numbers are from float32's
on the same weights. float32 stays the reference: every parity test elsewhere runs in float32."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest
import torch

import vit
from vit import shapes, validate
from vit.errors import InputError
from vit.model import precision

ROOT = Path(__file__).resolve().parents[1]
DRAWING = ROOT / "assets" / "shapes-heart_and_circle.png"


def off(reference: torch.Tensor, other: torch.Tensor, dims=None) -> float:
    """The largest difference from the reference, as a share of the reference's largest value (per map: ``dims``)."""
    reference, other = reference.float(), other.float()
    if dims is None:
        return float((reference - other).abs().max() / reference.abs().max())
    return float(((reference - other).abs().amax(dim=dims) / reference.abs().amax(dim=dims)).max())


@pytest.fixture(scope="module")
def shapes_pair():
    return vit.load_model("vit_tiny_shapes"), vit.load_model("vit_tiny_shapes", dtype="bfloat16")


def test_the_precision_is_asked_by_name_or_as_a_torch_dtype():
    assert validate.dtype(" BFloat16") == "bfloat16" and validate.dtype(torch.float32) == "float32"
    for bad in ("fp16", torch.float16, None, 32):
        with pytest.raises(InputError, match="dtype must be one of 'auto', 'float32', 'bfloat16'"):
            validate.dtype(bad)
    assert precision.resolve(torch.bfloat16) is torch.bfloat16
    assert precision.resolve("auto") is precision.auto("cpu") in (torch.float32, torch.bfloat16)
    with pytest.raises(InputError, match="dtype"):  # refused before any weights are read or fetched
        vit.load_model("vit_b_16", weights="imagenet", dtype="half")


@pytest.mark.parametrize(("flags", "machine", "expected"), [
    ({"avx512f", "avx512_bf16"}, "x86_64", torch.bfloat16),  # AMD Zen 4, Intel Cooper Lake
    ({"AVX512F", "AMX_BF16", "AMX_TILE"}, "AMD64", torch.bfloat16),  # Sapphire Rapids; any case
    ({"avx512f", "avx512_vnni", "avx2"}, "x86_64", torch.float32),  # AVX-512 without bfloat16: emulated
    (set(), "x86_64", torch.float32),  # no /proc/cpuinfo (macOS on Intel, Windows)
    (set(), "arm64", torch.float32),  # Apple silicon: torch does not use its bfloat16 instructions
    ({"fp", "asimd", "bf16", "i8mm"}, "aarch64", torch.float32),  # Graviton3: bf16 there, yet slower in torch
    ({"avx512_bf16"}, "aarch64", torch.float32),  # the flag counts on x86 only
])
def test_auto_on_a_cpu_is_decided_by_its_bfloat16_instructions(flags, machine, expected):
    """Issue 56: "auto" from the processor's flags, the same on every start of the same machine; no timing."""
    assert precision.cpu_dtype(frozenset(flags), machine) is expected


def test_the_cpu_flags_are_read_from_proc_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16\nbugs\t\t: spectre_v1\n\n"
                    "processor\t: 1\nflags\t\t: fpu sse2 avx512f avx512_bf16\n")
    assert precision.cpu_flags(info) == {"fpu", "sse2", "avx512f", "avx512_bf16"}
    (tmp_path / "arm").write_text("processor\t: 0\nFeatures\t: fp asimd bf16\nCPU part\t: 0xd40\n")
    assert precision.cpu_flags(tmp_path / "arm") == {"fp", "asimd", "bf16"}
    assert precision.cpu_flags(tmp_path / "absent") == frozenset()


def test_auto_here_is_this_processors_answer_and_never_a_timing(monkeypatch):
    """On this machine the flags decide (AVX512_BF16 here: bfloat16, as the timing gave before); a matmul in
    either precision while deciding would be a timing, so any raises."""
    expected = precision.cpu_dtype(precision.cpu_flags(), platform.machine())

    def no_matmul(*args, **kwargs):
        raise AssertionError("auto ran a matmul")

    monkeypatch.setattr(torch.Tensor, "__matmul__", no_matmul)
    monkeypatch.setattr(torch, "matmul", no_matmul)
    assert precision.auto.__wrapped__("cpu") is expected
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset({"avx2"}))
    assert precision.auto.__wrapped__("cpu") is torch.float32
    monkeypatch.setattr(precision, "cpu_flags", lambda: frozenset({"amx_bf16"}))
    monkeypatch.setattr(precision.platform, "machine", lambda: "x86_64")
    assert precision.auto.__wrapped__("cpu") is torch.bfloat16


def test_the_shapes_model_in_bfloat16_predicts_as_in_float32(shapes_pair):
    """2,000 of its own drawings: top-1 the same on at least 99.9 %, probabilities within 1 point (the issue's;
    measured: 100 % and 0.81 points; with the whole model in bfloat16 before, 1.70 points)."""
    f, b = shapes_pair
    assert (f.dtype, b.dtype) == (torch.float32, torch.bfloat16)
    images, _, _ = shapes.sample(2000, seed=2026)
    x = torch.cat([f.preprocess(image) for image in images])
    with torch.no_grad():
        pf, pb = f(x).float().softmax(-1), b(x).float().softmax(-1)
    assert float((pf.argmax(-1) == pb.argmax(-1)).float().mean()) >= 0.999
    assert float((pf - pb).abs().max()) <= 0.01


def test_bfloat16_is_the_linear_layers_after_the_first_two_blocks_and_the_rest_stays_float32(shapes_pair):
    """vit.model.precision: the matmuls of the linear layers in bfloat16 but the first two encoder blocks'; the patch
    embedding, the norms and the residual stream between the blocks in float32."""
    _, b = shapes_pair
    m = b.module

    def dtypes(modules):
        return {p.dtype for layer in modules if isinstance(layer, torch.nn.Linear) for p in layer.parameters()}

    assert dtypes(m.encoder.layers[:2].modules()) == {torch.float32}
    assert dtypes(m.encoder.layers[2:].modules()) == dtypes(m.head.modules()) == {torch.bfloat16}
    assert m.embedding.patch_embed.proj.weight.dtype == m.encoder.norm.weight.dtype == torch.float32
    seen = []
    handle = m.encoder.layers[2].register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    try:
        with torch.no_grad():
            b(b.input(DRAWING).x)
    finally:
        handle.remove()
    assert seen == [torch.float32]


def test_an_analysis_in_bfloat16_keeps_its_numbers_in_float32_near_the_reference(shapes_pair):
    """Every number an analysis holds is float32 whatever the model ran in; rollout, the three fusions and every head's
    class-token row within 2 % of their maximum (the issue's; measured over 300 drawings: 0.25, 1.19 mean, 1.15 max,
    1.98 min, 1.14 %; with every block's linear layers in bfloat16: 0.4, 1.7, 2.0, 2.9, 1.8 %)."""
    f, b = shapes_pair
    images, _, _ = shapes.sample(12, seed=7, two=True)
    for image in images:
        af, ab = vit.analyze(f, image), vit.analyze(b, image)
        assert (af.dtype, ab.dtype) == ("float32", "bfloat16")
        assert ab.probs.dtype == ab.cls_attention.dtype == ab.queries[0].dtype == torch.float32
        assert ab.fusions["mean"].dtype == af.fusions["mean"].dtype
        assert off(af.rollout(), ab.rollout()) <= 0.02
        for fusion in af.fusions:
            assert off(af.fusions[fusion], ab.fusions[fusion], dims=(-1, -2)) <= 0.02, fusion
        assert off(af.cls_attention, ab.cls_attention, dims=-1) <= 0.02
        assert off(af.residual_means, ab.residual_means) <= 0.02


def test_vit_b16_in_bfloat16_keeps_every_attention_map_and_rollout_within_2_percent():
    f = vit.load_model("vit_b_16", weights="random")
    b = vit.load_model("vit_b_16", weights="random", dtype="bfloat16")
    af, ab = vit.analyze(f, ROOT / "assets" / "cat.jpg"), vit.analyze(b, ROOT / "assets" / "cat.jpg")
    for fusion in af.fusions:
        assert off(af.fusions[fusion], ab.fusions[fusion], dims=(-1, -2)) <= 0.02, fusion
    assert off(af.cls_attention, ab.cls_attention, dims=-1) <= 0.02
    assert off(af.rollout(), ab.rollout()) <= 0.02


@pytest.mark.parametrize("method", ["attnlrp", "occlusion", "rollout", "attention", "grad_rollout", "gradcam"])
def test_explanations_in_bfloat16_point_where_float32_points(shapes_pair, method):
    """Gradients in bfloat16, relevance accumulated in float32: for the same class, each map within 10 % of its
    maximum (measured over 60 two-shape drawings: rollout 0.2 %, attention 0.7 %, gradient-weighted rollout 3.4 %,
    Grad-CAM 3.3 %, AttnLRP 1.8 %, occlusion 7.5 %), its brightest patch float32's brightest, or a near-tie of it
    (the same patch on 60, 58, 60, 59, 60 and 57 of them; the others within 0.2 % of float32's maximum: bfloat16 keeps
    8 bits, 0.4 %)."""
    f, b = shapes_pair
    images, _, _ = shapes.sample(4, seed=11, two=True)
    for image in images:
        ef = vit.explain(f, image, method=method)  # the same class for both: two shapes' top two can swap
        eb = vit.explain(b, image, method=method, target=ef.target, versus=ef.versus)  # and the same rival
        assert eb.map.dtype == torch.float32
        assert off(ef.map, eb.map) <= 0.10
        assert ef.map.flatten()[eb.map.argmax()] >= 0.99 * ef.map.max()


def test_what_if_runs_in_bfloat16(shapes_pair):
    f, b = shapes_pair
    wf, wb = vit.intervene(f, DRAWING, remove=list(range(20))), vit.intervene(b, DRAWING, remove=list(range(20)))
    assert float((wf.probs - wb.probs).abs().max()) <= 0.02
    drops_f, drops_b = vit.head_importance(f, DRAWING), vit.head_importance(b, DRAWING)
    assert str(drops_b.dtype) == "float32" and float(abs(drops_f - drops_b).max()) <= 0.02


def test_the_app_runs_its_models_in_the_precision_asked_and_says_so(monkeypatch):
    from vit.serve.cache import ModelCache
    from vit.ui import meter, runs, state

    assert state.dtype_setting({}) == "auto"  # the app's default; the Python API's and the CLI's stay float32
    assert state.dtype_setting({"VIT_DTYPE": "BFLOAT16"}) == "bfloat16"
    with pytest.raises(ValueError, match="VIT_DTYPE"):
        state.dtype_setting({"VIT_DTYPE": "fp8"})
    loaded = ModelCache(dtype="bfloat16").get(validate.setting("vit_tiny_shapes"), "trained")
    a = vit.analyze(loaded, DRAWING)
    assert "P = 8, L = 4, bfloat16" in meter.banner_html(a)
    assert runs.timing(a, 0.05, 0.0, 0.0).startswith("Time (bfloat16): model run 50 ms")
    assert "bfloat16" in runs.timing(a, 0.05, 0.0, 0.0, lang="zh")


@pytest.mark.server  # a subprocess: the entry point itself
def test_the_cli_takes_a_dtype_and_refuses_a_bad_one_in_one_line():
    import json
    import subprocess
    import sys

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "vit", "analyze", "assets/shapes-star.png", "--model",
                               "vit_tiny_shapes", *args], capture_output=True, text=True, timeout=120, cwd=ROOT)

    ran = cli("--dtype", "bfloat16", "--json")
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert json.loads(ran.stdout)["dtype"] == "bfloat16"
    bad = cli("--dtype", "half")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: dtype must be one of 'auto', 'float32', 'bfloat16', got 'half'"]
