"""The menu's Hub models end to end in the app (issue 21): a visitor picks one, its weights come from the Hub
cache, and the banner, the stage table and the predictions are those of that repository.

The repositories are written by timm's own ``save_for_hf`` (random weights, the curated models' real
architectures) into the tests' Hub cache, read offline (tests/conftest.py sets ``HF_HUB_OFFLINE``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

timm = pytest.importorskip("timm")
huggingface_hub = pytest.importorskip("huggingface_hub")

from conftest import running_app  # noqa: E402
from gradio_client import Client, handle_file  # noqa: E402
from timm.models._hub import save_for_hf  # noqa: E402

from vit.ui import events, models  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CAT = ROOT / "assets" / "cat.jpg"
COMMIT = "89abcdef0123456789abcdef0123456789abcdef"
# (curated repository, timm architecture): the menu's two smallest
REPOS = {"timm/vit_tiny_patch16_224.augreg_in21k_ft_in1k": "vit_tiny_patch16_224",
         "timm/deit_tiny_distilled_patch16_224.fb_in1k": "deit_tiny_distilled_patch16_224"}
CARD = "---\nlicense: apache-2.0\ntags:\n- image-classification\n---\n# A model card\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory, torch_home):
    cache = Path(huggingface_hub.constants.HF_HUB_CACHE)
    written = []
    for repo, arch in REPOS.items():
        files = tmp_path_factory.mktemp(arch)
        save_for_hf(timm.create_model(arch, pretrained=False).eval(), str(files), safe_serialization=True)
        json.loads((files / "config.json").read_text())  # written as timm writes it
        (files / "README.md").write_text(CARD)
        folder = cache / f"models--{repo.replace('/', '--')}"
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / "main").write_text(COMMIT)
        shutil.copytree(files, folder / "snapshots" / COMMIT, dirs_exist_ok=True)
        written.append(folder)
    with running_app() as url:
        yield url
    for folder in written:
        shutil.rmtree(folder, ignore_errors=True)


def _analysed(url: str, model: str) -> dict:
    result = Client(url, verbose=False).predict(image=handle_file(str(CAT)), model=model, api_name="/analyze")
    return dict(zip(events.ANALYZE_OUTPUTS, result))


@pytest.mark.parametrize(("repo", "tokens", "prefix"), [
    ("timm/vit_tiny_patch16_224.augreg_in21k_ft_in1k", 197, "with class token"),
    ("timm/deit_tiny_distilled_patch16_224.fb_in1k", 198, "with prefix tokens (class, distillation)"),
])
def test_a_menu_hub_model_runs_on_its_repositorys_weights(server, repo, tokens, prefix):
    out = _analysed(server, models.menu_name(repo))
    banner = out["banner"]
    assert "PRETRAINED" in banner and "UNTRAINED" not in banner, banner
    assert "licence: apache-2.0" in banner and repo in banner  # where the weights came from, and their licence
    assert f"(1, {tokens}, 192)" in out["stage-table"] and prefix in out["stage-table"]
    labels = [c["label"] for c in out["predictions"]["confidences"]]
    assert len(labels) == 5 and all(isinstance(label, str) and label for label in labels)
    assert set(labels) <= set(models_class_names())  # ImageNet's names: the repository gives 1,000 unnamed


def models_class_names() -> list[str]:
    from vit.model.families import class_names  # noqa: PLC0415

    return class_names("vit_b_16")
