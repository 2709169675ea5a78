"""python -m vit: the JSON it prints, the files it writes, and clean errors.

The commands run in this process (:func:`run`, ``vit.__main__.main``): a new interpreter costs seconds of imports
per call. Two tests run ``python -m vit`` itself, so the entry point stays honest.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from corpus import make_corpus
from PIL import Image

import vit.__main__ as cli

QUIET_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def run(*args) -> subprocess.CompletedProcess:
    """``python -m vit ARGS`` in this process: its exit status and what it printed.

    What a new interpreter would print on stderr besides is printed there too: a warning (those Python shows by
    default) and a log record of WARNING or above (Python's last-resort handler), so "one line" means one line.
    """
    out, err = io.StringIO(), io.StringIO()
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    logging.getLogger().addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            warnings.simplefilter("always")
            code = cli.main(list(args))
    finally:
        logging.getLogger().removeHandler(handler)
    for w in caught:
        if not issubclass(w.category, QUIET_BY_DEFAULT):
            err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno))
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def run_module(*args, timeout=300) -> subprocess.CompletedProcess:
    """``python -m vit ARGS`` as its own process."""
    return subprocess.run([sys.executable, "-m", "vit", *args], cwd=ROOT, env=dict(os.environ), capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def analyzed(torch_home, cat_image, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    proc = run("analyze", str(cat_image), "--model", "vit_b_32", "--weights", "random", "--patch-size", "24",
               "--depth", "4", "--top-k", "3", "--json", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), out


def test_json_keys_and_values(analyzed):
    data, _ = analyzed
    assert data["model"] == "vit_b_32" and data["weights"] == "random"
    assert data["status"].startswith("UNTRAINED ViT-B/32 (random weights, as asked); patch embedding PI-resized 32->24")
    assert (data["patch_size"], data["depth"], data["input_size"], data["grid"]) == (24, 4, [216, 216], [9, 9])
    assert data["num_tokens"] == 82
    shapes = {s["name"]: s["shape"] for s in data["stages"]}
    assert shapes["image"] == [1, 3, 216, 216] and shapes["patch conv"] == [1, 768, 9, 9]
    assert shapes["patch tokens"] == [1, 81, 768] and shapes["with class token"] == [1, 82, 768]
    assert shapes["layer 4 attention weights"] == [1, 12, 82, 82] and shapes["logits"] == [1, 1000]
    assert "layer 5 output" not in shapes
    assert len(data["topk"]) == 3 and {"index", "label", "prob"} <= set(data["topk"][0])
    probs = [p["prob"] for p in data["topk"]]
    assert probs == sorted(probs, reverse=True)
    assert [p["layer"] for p in data["layer_predictions"]] == [1, 2, 3, 4]
    rollout = np.array(data["rollout"])
    assert rollout.shape == (9, 9) and (rollout > 0).all() and rollout.sum() < 1
    assert set(data["timings_ms"]) >= {"forward_traced", "total"}
    assert [r["layer"] for r in data["residual"]] == [1, 2, 3, 4]
    assert all(r["stream"] > 0 and r["output"] > 0 for r in data["residual"])
    distance = np.array(data["mean_attention_distance"])  # depth x h, pixels
    assert distance.shape == (4, 12) and (distance > 0).all() and (distance < 24 * 9 * 2**0.5).all()


OUT_FILES = ("patch_grid.png", "rollout.png", "query.png", "heads.png", "layers.png", "depth.png")


def test_pngs_written(analyzed):
    """Every view, captioned: wider than the picture's 640 px only where the picture is, taller by the words."""
    _, out = analyzed
    assert sorted(p.name for p in out.iterdir()) == sorted(OUT_FILES)
    for name in OUT_FILES:
        img = Image.open(out / name)
        assert img.width >= 640 and img.height > 400, name
    grid = Image.open(out / "patch_grid.png")  # 9 x 9 patches of 24 px: numbers in the cells, no margins
    assert grid.width == 640


def test_text_output_says_what_was_written(tmp_path, monkeypatch, capsys):
    from vit.model import load as api

    model = api.load_model("vit_b_32", weights="random", depth=1, device="cpu")
    monkeypatch.setattr(api, "load_setting", lambda *args, **kwargs: model)  # what the CLI calls
    assert cli.main(["analyze", str(ROOT / "assets" / "cat.jpg"), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for name in OUT_FILES:
        assert f"wrote {tmp_path / name}" in out
        assert (tmp_path / name).is_file()


@pytest.mark.server  # a subprocess: the entry point itself
def test_imagenet_from_cache_and_text_output(torch_home, cat_image):
    proc = run_module("analyze", str(cat_image), "--model", "ViT-B/32")  # the entry point itself
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ViT-B/32 ImageNet weights (torchvision)")
    assert "(1, 50, 768)" in proc.stdout and "Traceback" not in proc.stderr


def test_the_entry_point_exits_2_with_one_line():
    proc = run_module("frobnicate")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "invalid choice" in lines[0], proc.stderr


@pytest.mark.parametrize(
    "args,words",
    [
        (["analyze", "missing.jpg"], "not found"),
        (["analyze", "{text}"], "could not read"),
        (["analyze", "{cat}", "--patch-size", "3"], "patch_size must be an integer from 4 to 64, got"),
        (["analyze", "{cat}", "--depth", "13", "--model", "vit_b_32"], "depth"),
        (["analyze", "{cat}", "--model", "resnet50"], "model"),
        (["analyze", "{cat}", "--top-k", "nan"], "top_k"),
        (["analyze", "{cat}", "--weights", "/nope.pth"], "--weights"),
        (["analyze", "{cat}", "--discard-ratio", "1.5"], "discard_ratio"),
        (["analyze"], "required"),
        (["frobnicate"], "invalid choice"),
        (["analyze", "{cat}", "--model", "vit_tiny_shapes", "--patch-size", "40"],
         "patch_size must be an integer from 4 to 32 for ViT-Tiny shapes, got '40'"),
        (["analyze", "{cat}", "--model", "vit_tiny_shapes", "--top-k", "9"], "top_k must be an integer from 1 to 8"),
        (["train-shapes", "--epochs", "0"], "epochs must be an integer from 1 to 1000, got '0'"),
        (["train-shapes", "--seed", "-1"], "seed must be an integer from 0 to"),
        (["train-shapes", "--out", "weights.bin"], "--out must be a .pth path"),
    ],
)
def test_clean_error_exit(tmp_path, cat_image, args, words):
    text = tmp_path / "notes.jpg"
    text.write_text("hello, not an image")
    args = [a.format(text=text, cat=cat_image) for a in args]
    if args[0] == "analyze" and len(args) > 1 and "--weights" not in args:
        args.extend(["--weights", "random"])
    proc = run(*args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], proc.stderr


def test_corpus_through_the_cli(tmp_path, monkeypatch, capsys):
    """Every odd file gives a result or one clean error line (in-process, one model kept for speed)."""
    from vit.model import load as api

    model = api.load_model("vit_b_32", weights="random", depth=1, device="cpu")
    monkeypatch.setattr(api, "load_setting", lambda *args, **kwargs: model)  # what the CLI calls
    corpus = make_corpus(tmp_path)
    assert len(corpus) >= 25
    for path, should_load in corpus:
        capsys.readouterr()
        code = cli.main(["analyze", str(path), "--json"])
        out, err = capsys.readouterr()
        if should_load:
            assert code == 0, (path, err)
            assert json.loads(out)["grid"] == [7, 7]
        else:
            assert code == 2, path
            assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("error: "), (path, err)


def test_bad_out_is_refused_before_the_analysis(tmp_path, monkeypatch):
    """--out naming a file or an impossible folder: one line, exit 2, and the model never ran."""
    existing = tmp_path / "results.png"
    existing.write_bytes(b"not a folder")
    refused = ((existing, "is a file"), (existing / "sub", "cannot create"), ("/proc/no/such", "cannot create"))
    for out, words in refused:
        proc = run("analyze", str(ROOT / "assets" / "cat.jpg"), "--model", "vit_b_32", "--weights", "random",
                   "--out", str(out), "--json")
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and words in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stdout == ""  # no analysis was printed: it never ran


def test_another_familys_weights_file_is_one_line(tmp_path):
    """B/32's state dict given for B/16 at a patch size that resamples: named as such, not a traceback."""
    import torch
    from conftest import random_torchvision_vit

    path = tmp_path / "b32.pth"
    torch.save(random_torchvision_vit("vit_b_32").state_dict(), path)
    proc = run("analyze", str(ROOT / "assets" / "cat.jpg"), "--model", "vit_b_16", "--weights", str(path),
               "--patch-size", "20")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "embedding.patch_embed.proj.weight has shape (768, 3, 32, 32)" in proc.stderr
    assert proc.stderr.count("\n") == 1


STAR = ROOT / "assets" / "shapes-star.png"


def test_explain_json_with_curves_and_pictures(tmp_path):
    proc = run("explain", str(STAR), "--model", "vit_tiny_shapes", "--method", "grad_rollout", "--target", "cross",
               "--curves", "--steps", "5", "--json", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert {"method", "target", "label", "prob", "map", "deletion", "insertion"} <= d.keys()
    assert (d["method"], d["target"], d["label"], d["grid"]) == ("grad_rollout", 4, "cross", [8, 8])
    assert np.asarray(d["map"]).shape == (8, 8) and 0 < d["prob"] < 1
    for mode in ("deletion", "insertion"):
        c = d[mode]
        assert c["fractions"] == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0] and len(c["probs"]) == 6
        assert c["auc"] == pytest.approx(np.trapezoid(c["probs"], c["fractions"]))
        assert len(c["random"]["probs"]) == 6
    assert d["deletion"]["probs"][0] == pytest.approx(d["prob"], abs=1e-5)  # nothing deleted yet
    assert d["deletion"]["probs"][-1] == pytest.approx(d["insertion"]["probs"][0], abs=1e-6)  # all baseline
    for name in ("explanation.png", "curves.png"):
        with Image.open(tmp_path / name) as img:
            assert img.width >= 640
    assert "wrote" in proc.stderr


def test_explain_text_names_the_class_and_its_patches():
    proc = run("explain", str(STAR), "--model", "vit_tiny_shapes", "--method", "gradcam")
    assert proc.returncode == 0, proc.stderr
    assert "Grad-CAM for 'star' (class 3" in proc.stdout and "patch (row" in proc.stdout
    assert "deletion" not in proc.stdout  # no curves unless asked


def test_explain_by_default_asks_attnlrp_why_the_top_1_rather_than_the_runner_up():
    two = str(ROOT / "assets" / "shapes-heart_and_circle.png")
    proc = run("explain", two, "--model", "vit_tiny_shapes", "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert (d["method"], d["label"], d["versus_label"]) == ("attnlrp", "heart", "circle")
    proc = run("explain", two, "--model", "vit_tiny_shapes", "--target", "circle", "--versus", "none", "--json")
    d = json.loads(proc.stdout)
    assert (d["label"], d["versus"], d["versus_label"]) == ("circle", None, None)
    text = run("explain", two, "--model", "vit_tiny_shapes", "--target", "circle", "--versus", "star").stdout
    assert "AttnLRP for 'circle' (class 0, p = " in text and "rather than 'star' (class 3)" in text


@pytest.mark.parametrize("args,words", [
    (["--versus", "star", "--target", "star"], "versus must be another class than the one explained (star)"),
    (["--versus", "tiger"], "versus must be a class index from 0 to 7 or one of the model's class names"),
    (["--method", "lime"], "method must be one of"),
    (["--target", "tiger"], "target must be a class index from 0 to 7 or one of the model's class names"),
    (["--target", "8"], "target must be an integer from 0 to 7"),
    (["--steps", "0"], "steps must be an integer from 1 to 100"),
    (["--baseline", "black"], "baseline must be one of"),
])
def test_explain_refuses_bad_options_in_one_line(args, words):
    proc = run("explain", str(STAR), "--model", "vit_tiny_shapes", *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and words in proc.stderr and "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- the CLI's edges (issue 26)


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def no_model(monkeypatch):
    """The model must never be loaded: the refusal comes before any work."""
    from vit.model import load as api

    for name in ("load_model", "load_setting"):
        monkeypatch.setattr(api, name, lambda *a, **k: pytest.fail("the model was loaded"))


@pytest.mark.parametrize(("make_out", "words"), [
    (lambda tmp: "", "--out must name a folder, got an empty name"),
    (lambda tmp: str(tmp / ("a" * 300)), "a name in the path is too long: at most 255 bytes per name"),
    (lambda tmp: str(tmp / ("b" * 256) / "sub"), "a name in the path is too long"),
    (lambda tmp: str(tmp.joinpath(*["d" * 200] * 25)), "the path is too long"),  # 5,000 bytes, over PATH_MAX
])
def test_out_edges_are_one_sentence_before_any_work(tmp_path, capsys, no_model, make_out, words):
    out = make_out(tmp_path)
    assert cli.main(["analyze", str(ROOT / "assets" / "cat.jpg"), "--weights", "random", "--out", out]) == 2
    captured = capsys.readouterr()
    line = one_error_line(captured.err)
    assert words in line and captured.out == ""
    assert len(line) < 300  # a 300-character name is not printed whole
    assert list(tmp_path.iterdir()) == [] and not list(Path.cwd().glob("*.png"))


@pytest.mark.parametrize(("make_out", "words"), [
    (lambda tmp: "/proc/self/x.pth", "--out: cannot write '/proc/self/x.pth'"),
    (lambda tmp: str(tmp / ("c" * 252 + ".pth")), "too long"),  # the .json beside it would be 256 bytes
    (lambda tmp: str(tmp / "folder.pth"), "is a folder"),
    (lambda tmp: "", "--out must be a .pth path, got ''"),
])
def test_train_shapes_out_is_checked_before_training(tmp_path, monkeypatch, capsys, make_out, words):
    from vit.model import train

    (tmp_path / "folder.pth").mkdir()
    monkeypatch.setattr(train, "train_shapes", lambda *a, **k: pytest.fail("training started"))
    assert cli.main(["train-shapes", "--out", make_out(tmp_path), "--device", "cpu"]) == 2
    assert words in one_error_line(capsys.readouterr().err)


def test_train_shapes_out_that_can_be_written_reaches_training(tmp_path, monkeypatch):
    """The check above is not a refusal of everything: a writable place goes on to train."""
    from vit.model import train

    asked = []
    monkeypatch.setattr(train, "train_shapes", lambda out, *a, **k: asked.append(out) or (_ for _ in ()).throw(
        KeyboardInterrupt()))
    assert cli.main(["train-shapes", "--out", str(tmp_path / "new" / "w.pth"), "--device", "cpu"]) == 130
    assert asked == [tmp_path / "new" / "w.pth"] and list((tmp_path / "new").iterdir()) == []


def test_train_shapes_help_states_each_recipes_epochs(capsys):
    """The help's default epochs are the recipes' own (it said 30 for a recipe of 28)."""
    from vit.model.train import RECIPES

    with pytest.raises(SystemExit):
        cli.main(["train-shapes", "--help"])
    epochs = re.search(r"--epochs EPOCHS (.*?)--seed", " ".join(capsys.readouterr().out.split())).group(1)
    stated = {name: int(n) for n, name in re.findall(r"(\d+) (\w+)[,)]", epochs)}
    assert stated == {name: recipe.epochs for name, recipe in RECIPES.items()}, stated


@pytest.mark.parametrize("command", ["explain", "intervene"])
def test_the_help_names_every_explanation_method(capsys, command):
    """The methods the help lists are the registry's (they were written out by hand)."""
    from vit.explanations.methods import DEFAULT_METHOD, METHODS

    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    method = re.search(r"--method METHOD (.*?) --", " ".join(capsys.readouterr().out.split())).group(1)
    assert re.findall(r"(\w+)(?: \(default\))?(?:,|$)", method) == list(METHODS), method
    assert f"{DEFAULT_METHOD} (default)" in method


ESCAPES = "esc\x1b[31mRED\x1b]0;pwned-title\x07.png"


def test_terminal_escapes_in_file_names_are_shown_escaped(tmp_path, capsys, monkeypatch):
    from vit.model import load as api

    broken = tmp_path / ESCAPES
    broken.write_bytes(b"not an image at all")
    assert cli.main(["analyze", str(broken), "--weights", "random"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "\x1b" not in line and "\x07" not in line
    assert "esc\\x1b[31mRED\\x1b]0;pwned-title\\x07.png" in line

    model = api.load_model("vit_b_32", weights="random", depth=1, device="cpu")
    monkeypatch.setattr(api, "load_setting", lambda *args, **kwargs: model)  # what the CLI calls
    out = tmp_path / ("views" + "\x1b[2J")
    assert cli.main(["analyze", str(ROOT / "assets" / "cat.jpg"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "views\\x1b[2J" in printed and "wrote " in printed


def test_printable_escapes_every_control_character():
    from vit.__main__ import _printable

    assert _printable("a\x00b\x7fc\x9bd\u202ee\tf\ng") == "a\\x00b\\x7fc\\x9bd\\u202ee\\tf\\ng"
    assert _printable("café ✓ 猫.png") == "café ✓ 猫.png"


@pytest.fixture(scope="module")
def nan_checkpoint(tmp_path_factory) -> Path:
    import torch

    state = torch.load(ROOT / "assets" / "vit_tiny_shapes.pth", weights_only=True)
    path = tmp_path_factory.mktemp("nan") / "all_nan.pth"
    torch.save({k: torch.full_like(v, float("nan")) if v.is_floating_point() else v for k, v in state.items()}, path)
    return path


def test_an_all_nan_checkpoint_is_refused_in_one_sentence(nan_checkpoint):
    proc = run("analyze", str(STAR), "--model", "vit_tiny_shapes", "--weights", str(nan_checkpoint), "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    line = one_error_line(proc.stderr)
    assert "expected finite numbers, got" in line and "NaN or infinite values" in line and "broken" in line


def strict(text: str):
    """json.loads that refuses NaN and Infinity, as RFC 8259 does."""
    def refuse(token):
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_json_is_strict_even_when_the_numbers_are_not_finite(tmp_path, capsys, monkeypatch):
    """Past the weights check (patched out here), a NaN model still prints JSON, its NaNs as null."""
    import torch

    from vit.model import load as api

    model = api.load_model("vit_tiny_shapes", weights="trained", device="cpu")
    with torch.no_grad():
        for p in model.module.parameters():
            p.fill_(float("nan"))
    monkeypatch.setattr(api, "load_setting", lambda *args, **kwargs: model)  # what the CLI calls
    monkeypatch.setattr(cli, "_check_finite_weights", lambda *a: None)
    assert cli.main(["analyze", str(STAR), "--model", "vit_tiny_shapes", "--json"]) == 0
    doc = strict(capsys.readouterr().out)
    assert doc["topk"][0]["prob"] is None
    assert cli.main(["explain", str(STAR), "--model", "vit_tiny_shapes", "--method", "rollout", "--json"]) == 0
    strict(capsys.readouterr().out)


def test_strict_json_writes_non_finite_numbers_as_null():
    from vit.__main__ import _strict_json

    text = _strict_json({"a": [float("nan"), float("inf"), -float("inf"), 1.5], "b": {"c": (2.0, float("nan"))}})
    assert text == '{"a": [null, null, null, 1.5], "b": {"c": [2.0, null]}}'
    assert strict(text)["a"][3] == 1.5


def test_a_symlink_loop_is_named_as_such(tmp_path, capsys):
    loop = tmp_path / "loop.jpg"
    loop.symlink_to(loop)
    assert cli.main(["analyze", str(loop), "--weights", "random"]) == 2
    assert "a link that leads nowhere" in one_error_line(capsys.readouterr().err)


def test_a_too_long_weights_name_is_one_sentence(capsys):
    assert cli.main(["analyze", str(STAR), "--model", "vit_tiny_shapes", "--weights", "w" * 300 + ".pth"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "--weights must be" in line and len(line) < 300


def test_explain_refuses_an_all_nan_checkpoint_in_one_sentence(nan_checkpoint):
    """The review: `explain --curves` on an all-NaN checkpoint failed deep inside ("saliency must be a finite
    map ... got (7, 7)"); it is refused as analyze refuses it, with nothing on stdout for --json."""
    proc = run("explain", str(STAR), "--model", "vit_tiny_shapes", "--weights", str(nan_checkpoint), "--curves",
               "--steps", "3", "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    line = one_error_line(proc.stderr)
    assert "expected finite numbers, got" in line and "saliency" not in line


@pytest.mark.parametrize(("command", "make_out", "words"), [
    ("analyze", lambda tmp: "", "--out must name a folder, got an empty name"),
    ("explain", lambda tmp: "", "--out must name a folder, got an empty name"),
    ("explain", lambda tmp: str(tmp / ("a" * 300)), "a name in the path is too long: at most 255 bytes per name"),
    ("analyze", lambda tmp: "/dev/null/views", "a part of the path is a file, not a folder"),
])
def test_every_commands_out_is_one_sentence_before_any_work(tmp_path, capsys, no_model, command, make_out, words):
    image = ["--weights", "random"] if command == "analyze" else ["--model", "vit_tiny_shapes", "--weights", "random"]
    assert cli.main([command, str(ROOT / "assets" / "cat.jpg"), *image, "--out", make_out(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert words in one_error_line(captured.err) and captured.out == ""
    assert list(tmp_path.iterdir()) == [] and not list(Path.cwd().glob("*.png"))


@pytest.mark.parametrize(("out", "words"), [
    ("/dev/null/x.pth", "a part of the path is a file, not a folder"),
    ("/sys/x.pth", "--out: cannot write '/sys/x.pth'"),  # read-only, even for root
    ("/proc/self/" + "p" * 300 + ".pth", "too long"),
])
def test_train_shapes_out_where_nothing_can_be_written(monkeypatch, capsys, out, words):
    from vit.model import train

    monkeypatch.setattr(train, "train_shapes", lambda *a, **k: pytest.fail("training started"))
    assert cli.main(["train-shapes", "--out", out, "--device", "cpu"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert words in line and len(line) < 300


def test_train_shapes_prints_its_file_name_escaped(tmp_path, monkeypatch, capsys):
    from vit.model import train

    out = tmp_path / ("w" + "\x1b]0;pwned\x07.pth")
    meta = {"accuracy": {"patch_size": {"8": 0.9}, "depth": {"1": 0.5}}, "config": {"patch_size": 8},
            "display_name": "ViT-Tiny shapes", "training_time_s": 1.0, "device": "cpu", "steps": 1,
            "steps_planned": 1, "eval": {"images": 8}, "weights": {"file": str(out), "sha256": "0" * 64}}
    monkeypatch.setattr(train, "train_shapes", lambda *a, **k: meta)
    assert cli.main(["train-shapes", "--out", str(out), "--device", "cpu"]) == 0
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "\x07" not in printed and "w\\x1b]0;pwned\\x07.pth" in printed
