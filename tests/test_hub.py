"""Hub models (issue 21): repositories written by timm's and transformers' own save functions into a
temporary Hub cache, read offline through ``vit.load_model``, equal the libraries' own forward.

For each family: the logits and every layer's attention equal the library's (1e-4), the preprocessing
equals the library's (timm's ``create_transform``, transformers' image processors) within resampling
noise, the class names are the repository's, and a patch-size change keeps the prefix tokens.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

timm = pytest.importorskip("timm")
transformers = pytest.importorskip("transformers")
huggingface_hub = pytest.importorskip("huggingface_hub")

from timm.models._hub import save_for_hf  # noqa: E402

import vit  # noqa: E402
import vit.cost  # noqa: E402
import vit.validate  # noqa: E402
from vit import config as vit_config  # noqa: E402
from vit.analysis.trace import attention_kept  # noqa: E402
from vit.errors import InputError  # noqa: E402
from vit.model import hub, hubconfig  # noqa: E402
from vit.model.train import embed_at_patch_size  # noqa: E402

COMMIT = "0123456789abcdef0123456789abcdef01234567"
TINY = dict(embed_dim=48, depth=2, num_heads=2)

# timm families: (repo id, architecture, create_model kwargs)
TIMM = {
    "vit": ("timm/vit_tiny_patch16_224.test", "vit_tiny_patch16_224", dict(img_size=32, patch_size=8, num_classes=7)),
    "deit_distilled": ("timm/deit_tiny_distilled_patch16_224.test", "deit_tiny_distilled_patch16_224",
                       dict(img_size=32, patch_size=8, num_classes=5)),
    "deit3": ("timm/deit3_small_patch16_224.test", "deit3_small_patch16_224",
              dict(img_size=32, patch_size=8, num_classes=6)),
    "clip": ("timm/vit_base_patch16_clip_quickgelu_224.test", "vit_base_patch16_clip_quickgelu_224",
             dict(img_size=32, patch_size=8, num_classes=4)),
    "dinov2_reg_head": ("timm/vit_small_patch14_reg4_dinov2.head", "vit_small_patch14_reg4_dinov2",
                        dict(img_size=28, patch_size=7, num_classes=10)),
    "dinov2_reg_backbone": ("timm/vit_small_patch14_reg4_dinov2.lvd142m", "vit_small_patch14_reg4_dinov2",
                            dict(img_size=28, patch_size=7, num_classes=0)),
}
# transformers families: (repo id, model class, config class, config kwargs, image processor, its kwargs)
T_KW = dict(hidden_size=48, num_hidden_layers=2, num_attention_heads=2, intermediate_size=96, patch_size=8)
TRANSFORMERS = {
    "vit": ("google/vit-tiny-test", "ViTForImageClassification", "ViTConfig", dict(image_size=32),
            "ViTImageProcessor", dict(size={"height": 32, "width": 32})),
    "deit": ("facebook/deit-tiny-distilled-test", "DeiTForImageClassificationWithTeacher", "DeiTConfig",
             dict(image_size=32), "DeiTImageProcessor",
             dict(size={"height": 36, "width": 36}, crop_size={"height": 32, "width": 32})),
    # trained at 48 px, run at 32 px (the processor's crop): transformers resamples the position embedding
    "dinov2": ("facebook/dinov2-tiny-test", "Dinov2ForImageClassification", "Dinov2Config",
               dict(image_size=48, layerscale_value=0.5), "BitImageProcessor",
               dict(size={"shortest_edge": 36}, crop_size={"height": 32, "width": 32}, do_center_crop=True)),
    "dinov2_backbone": ("facebook/dinov2-with-registers-tiny-test", "Dinov2WithRegistersModel",
                        "Dinov2WithRegistersConfig", dict(image_size=32, num_register_tokens=4), "BitImageProcessor",
                        dict(size={"shortest_edge": 36}, crop_size={"height": 32, "width": 32}, do_center_crop=True)),
}


def _randomise(model: torch.nn.Module, seed: int) -> None:
    """Every parameter random (LayerScale, tokens and position embeddings included), so each one matters."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)


def _into_cache(cache: Path, repo_id: str, files: Path) -> None:
    """A repository laid out as the Hub cache does: models--org--name/{refs/main, snapshots/<commit>/...}."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(COMMIT)
    shutil.copytree(files, repo / "snapshots" / COMMIT, dirs_exist_ok=True)


@pytest.fixture(scope="module", autouse=True)
def _registry_emptied_after():
    """The Hub models registered before (the app's curated menu) and here are forgotten: this file reads its
    own repositories, and other tests see the presets and the app's menu only (its build registers it again)."""
    registries = (vit_config.HUB_MODELS, vit_config.HUB_DISPLAY_NAMES, hubconfig.SPECS, hub._failed)
    for registry in registries:
        registry.clear()
    yield
    for registry in registries:
        registry.clear()


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory):
    """A Hub cache holding every family's repository, read offline; the libraries' models beside it. This file's
    only: its tiny repositories under the menu's ids must not be what a later file's app loads (test_app then read
    a 2-layer DINOv2 for the menu's 12-layer one)."""
    cache = tmp_path_factory.mktemp("hub_cache")
    models = {}
    for i, (family, (repo_id, arch, kw)) in enumerate(TIMM.items()):
        model = timm.create_model(arch, pretrained=False, **TINY, **kw).eval()
        _randomise(model, i)
        files = tmp_path_factory.mktemp(family)
        save_for_hf(model, str(files), safe_serialization=True)
        config = json.loads((files / "config.json").read_text())
        if kw["num_classes"]:
            config["pretrained_cfg"]["label_names"] = [f"{family} {c}" for c in range(kw["num_classes"])]
        (files / "config.json").write_text(json.dumps(config))
        (files / "README.md").write_text("---\nlicense: cc-by-nc-4.0\ntags:\n- image-classification\n---\n# A card\n")
        _into_cache(cache, repo_id, files)
        models[("timm", family)] = model
    for i, (family, (repo_id, cls, cfg_cls, kw, proc_cls, proc_kw)) in enumerate(TRANSFORMERS.items()):
        labels = {} if cls.endswith("Model") else {"id2label": {str(c): f"{family} {c}" for c in range(3)},
                                                   "label2id": {f"{family} {c}": c for c in range(3)}}
        cfg = getattr(transformers, cfg_cls)(**T_KW, **kw, **labels)
        cfg._attn_implementation = "eager"  # so output_attentions gives the weights
        model = getattr(transformers, cls)(cfg).eval()
        _randomise(model, 100 + i)
        files = tmp_path_factory.mktemp(family)
        model.save_pretrained(str(files))
        getattr(transformers, proc_cls)(**proc_kw).save_pretrained(str(files))
        _into_cache(cache, repo_id, files)
        models[("transformers", family)] = model
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
        mp.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
        yield cache, models


def _image(width=60, height=44, seed=0) -> Image.Image:
    """A smooth, non-square RGB image (resampling differences stay small on it)."""
    y, x = np.mgrid[0:height, 0:width] / max(width, height)
    rng = np.random.default_rng(seed)
    channels = [np.sin(2 * np.pi * (x * rng.uniform(1, 3) + y * rng.uniform(1, 3)) + c) for c in range(3)]
    return Image.fromarray((127.5 * (np.stack(channels, -1) + 1)).astype(np.uint8))


def _timm_attention(model, x) -> list[torch.Tensor]:
    """Each timm block's attention weights, from its own qkv (written here, not from vit's code)."""
    inputs = []
    handles = [b.attn.register_forward_hook(lambda m, a, o: inputs.append((m, a[0]))) for b in model.blocks]
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
    out = []
    for attn, t in inputs:
        B, N, C = t.shape
        qkv = attn.qkv(t).reshape(B, N, 3, attn.num_heads, C // attn.num_heads).permute(2, 0, 3, 1, 4)
        q, k = attn.q_norm(qkv[0]), attn.k_norm(qkv[1])
        out.append(((q * attn.scale) @ k.transpose(-2, -1)).softmax(-1))
    return out


def _ours(loaded, x):
    with torch.no_grad(), attention_kept(loaded.module.encoder.layers) as kept:
        logits = loaded.module(x)
    return logits, [kept[i] for i in range(len(kept))]


@pytest.mark.parametrize("family", list(TIMM))
def test_timm_families_equal_timm(hub_cache, family):
    _, models = hub_cache
    model = models[("timm", family)]
    repo_id = TIMM[family][0]
    loaded = vit.load_model(repo_id, device="cpu")
    assert loaded.weights == "pretrained", loaded.status
    assert "licence: cc-by-nc-4.0" in loaded.status
    size = loaded.config.image_size
    x = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(1))
    ours, attention = _ours(loaded, x)
    with torch.no_grad():
        theirs, their_attention = model(x), _timm_attention(model, x)
    if TIMM[family][2]["num_classes"] == 0:
        assert ours.shape == (2, 0) and loaded.class_names == []
    else:
        torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=0)
        assert loaded.class_names == [f"{family} {c}" for c in range(TIMM[family][2]["num_classes"])]
    assert len(attention) == len(their_attention) == 2
    for a, b in zip(attention, their_attention):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=0)
    assert attention[0].shape[-1] == loaded.config.num_tokens == model.patch_embed.num_patches + model.num_prefix_tokens


@pytest.mark.parametrize("family", list(TRANSFORMERS))
def test_transformers_families_equal_transformers(hub_cache, family):
    _, models = hub_cache
    model = models[("transformers", family)]
    loaded = vit.load_model(TRANSFORMERS[family][0], device="cpu")
    assert loaded.weights == "pretrained", loaded.status
    size = loaded.config.image_size
    x = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(2))
    ours, attention = _ours(loaded, x)
    with torch.no_grad():
        out = model(pixel_values=x, output_attentions=True)
    if TRANSFORMERS[family][1].endswith("Model"):
        assert ours.shape == (2, 0) and loaded.class_names == []
        with torch.no_grad():  # the backbone's tokens: ours before the final norm's output equal theirs
            tokens = loaded.module.encoder(loaded.module.embedding(x))
        torch.testing.assert_close(tokens, out.last_hidden_state, atol=1e-4, rtol=0)
    else:
        torch.testing.assert_close(ours, out.logits, atol=1e-4, rtol=0)
        assert loaded.class_names == [f"{family} {c}" for c in range(3)]
    assert len(out.attentions) == len(attention) == 2
    for a, b in zip(attention, out.attentions):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=0)


@pytest.mark.parametrize("family", list(TIMM)[:5])
def test_timm_preprocessing_equals_create_transform(hub_cache, family):
    cache, _ = hub_cache
    repo_id = TIMM[family][0]
    loaded = vit.load_model(repo_id, device="cpu")
    folder = cache / f"models--{repo_id.replace('/', '--')}" / "snapshots" / COMMIT
    pretrained_cfg = json.loads((folder / "config.json").read_text())["pretrained_cfg"]
    transform = timm.data.create_transform(**timm.data.resolve_data_config({}, pretrained_cfg=pretrained_cfg))
    image = _image()
    ours, theirs = loaded.preprocess(image)[0], transform(image)
    assert ours.shape == theirs.shape
    assert (ours - theirs).abs().mean() < 0.02


@pytest.mark.parametrize("family", list(TRANSFORMERS))
def test_transformers_preprocessing_equals_image_processor(hub_cache, family):
    cache, _ = hub_cache
    repo_id = TRANSFORMERS[family][0]
    loaded = vit.load_model(repo_id, device="cpu")
    folder = cache / f"models--{repo_id.replace('/', '--')}" / "snapshots" / COMMIT
    processor = transformers.AutoImageProcessor.from_pretrained(str(folder))
    image = _image()
    theirs = processor(images=image, return_tensors="pt")["pixel_values"][0]
    ours = loaded.preprocess(image)[0]
    assert ours.shape == theirs.shape
    assert (ours - theirs).abs().mean() < 0.02


@pytest.mark.parametrize("repo_id", [TIMM["deit_distilled"][0], TIMM["dinov2_reg_backbone"][0],
                                     TRANSFORMERS["dinov2_backbone"][0]])
def test_a_patch_size_change_keeps_the_prefix_tokens(hub_cache, repo_id):
    native = vit.load_model(repo_id, device="cpu")
    loaded = vit.load_model(repo_id, patch_size=4, device="cpu")
    cfg = loaded.config
    assert cfg.num_prefix_tokens == native.config.num_prefix_tokens > 1
    covered = cfg.num_pos_prefix_tokens
    pos, native_pos = loaded.module.embedding.pos_embed.weight, native.module.embedding.pos_embed.weight
    assert pos.shape[1] == covered + cfg.num_patches
    torch.testing.assert_close(pos[:, :covered], native_pos[:, :covered], atol=0, rtol=0)
    x = torch.randn(1, 3, cfg.image_size, cfg.image_size, generator=torch.Generator().manual_seed(3))
    tokens = loaded.module.embedding(x)
    assert tokens.shape[1] == cfg.num_patches + cfg.num_prefix_tokens
    at_4 = embed_at_patch_size(native.module.embedding, x, 4)  # from the native weights, inside the graph
    # float32's rounding, relative to the token's size (an unseeded input once gave 1.24e-5 on a value of 13)
    torch.testing.assert_close(at_4, tokens, atol=1e-5, rtol=1e-5)


def test_validate_and_cost_know_a_registered_hub_model(hub_cache):
    repo_id = TIMM["deit_distilled"][0]
    vit.load_model(repo_id, weights="random", device="cpu")
    setting = vit.validate.setting(repo_id, patch_size=4)
    assert setting.native.distilled and setting.display_name.startswith("DeiT-")
    assert vit.validate.model_name(setting.display_name) == repo_id
    cost = vit.cost.estimate(setting)
    assert cost.tokens == (32 // 4) ** 2 + 2


def test_an_unregistered_id_is_refused_by_validation_without_a_lookup(hub_cache):
    with pytest.raises(InputError, match="model must be one of"):
        vit.validate.model_name("someone/not-registered")


def test_random_weights_read_no_weights(hub_cache, monkeypatch):
    monkeypatch.setattr(hub, "weights_file", lambda *a, **k: pytest.fail("weights were read"))
    loaded = vit.load_model(TRANSFORMERS["vit"][0], weights="random", device="cpu")
    assert loaded.weights == "random" and loaded.status.startswith("UNTRAINED")


def test_offline_with_nothing_cached_is_untrained_not_an_error(hub_cache):
    loaded = vit.load_model("timm/vit_small_patch16_224.augreg_in1k_not_cached", depth=1, device="cpu")
    assert loaded.weights == "random"
    assert loaded.status.startswith("UNTRAINED: weights could not be downloaded")
    assert loaded.config.embed_dim == 384 and loaded.config.num_heads == 6 and len(loaded.class_names) == 1000


def test_files_put_in_the_cache_after_an_offline_read_are_read_at_once(hub_cache, tmp_path):
    """Offline with nothing cached, a repository is read from its name (UNTRAINED); its files put in the cache a moment
    later (`python -m vit download` in another terminal) are read on the next load, not after RETRY_CONFIG_AFTER_S."""
    repo_id = "timm/vit_tiny_patch16_224.later"
    assert vit.load_model(repo_id, depth=1, device="cpu").weights == "random"
    assert hubconfig.SPECS[repo_id].read_from != "config.json"
    cache, _ = hub_cache
    copied = cache / f"models--{TIMM['vit'][0].replace('/', '--')}"
    _into_cache(cache, repo_id, copied / "snapshots" / COMMIT)
    loaded = vit.load_model(repo_id, depth=1, device="cpu")
    assert hubconfig.SPECS[repo_id].read_from == "config.json" and loaded.weights == "pretrained", loaded.status


def test_a_local_folder_loads(hub_cache, tmp_path):
    cache, models = hub_cache
    folder = cache / f"models--{TIMM['deit3'][0].replace('/', '--')}" / "snapshots" / COMMIT
    local = tmp_path / "my_deit3"
    shutil.copytree(folder, local)
    loaded = vit.load_model(str(local), device="cpu")
    assert loaded.weights == "pretrained" and "the folder my_deit3" in loaded.status
    assert str(tmp_path) not in loaded.status
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), models[("timm", "deit3")](x), atol=1e-4, rtol=0)


def test_an_old_timm_config_without_model_args_is_read_from_the_name_and_shapes(hub_cache, tmp_path):
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, depth=2, num_classes=3).eval()
    _randomise(model, 7)
    save_for_hf(model, str(tmp_path), safe_serialization=True)
    config = json.loads((tmp_path / "config.json").read_text())
    del config["model_args"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    loaded = vit.load_model(str(tmp_path), device="cpu")
    assert loaded.config.num_layers == 2 and loaded.config.image_size == 32
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), model(x), atol=1e-4, rtol=0)


def _repo(tmp_path: Path, config: dict) -> str:
    (tmp_path / "config.json").write_text(json.dumps(config))
    return str(tmp_path)


@pytest.mark.parametrize("config, said", [
    ({"architecture": "vit_base_patch16_siglip_224", "num_classes": 0}, "attention-pooling"),
    ({"architecture": "vit_base_patch16_224", "num_classes": 10, "global_pool": "map"}, "attention-pooling head"),
    ({"architecture": "vit_base_patch16_rope_reg1_gap_256", "num_classes": 10}, "not a plain ViT"),
    ({"architecture": "eva02_base_patch14_224", "num_classes": 10}, "EVA"),
    ({"architecture": "vit_base_patch16_224", "num_classes": 10, "model_args": {"dynamic_img_size": True}},
     "dynamic image sizes"),
    ({"model_type": "swin", "architectures": ["SwinForImageClassification"]}, "not a plain ViT"),
    ({"model_type": "dinov2", "use_swiglu_ffn": True}, "SwiGLU"),
    ({"hello": "world"}, "neither timm's"),
])
def test_what_is_not_a_plain_vit_is_refused_with_a_sentence(tmp_path, config, said):
    with pytest.raises(InputError, match=said) as err:
        vit.load_model(_repo(tmp_path, config), weights="random", device="cpu")
    assert "supported" in str(err.value) or "expected" in str(err.value)


def test_missing_files_are_named(tmp_path):
    with pytest.raises(InputError, match="has no config.json"):
        vit.load_model(str(tmp_path), device="cpu")
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, depth=1, num_classes=3)
    save_for_hf(model, str(tmp_path), safe_serialization=True)
    (tmp_path / "model.safetensors").unlink()
    with pytest.raises(InputError, match="has neither model.safetensors nor pytorch_model.bin"):
        vit.load_model(str(tmp_path), device="cpu")


def test_a_pytorch_model_bin_is_read_with_weights_only(tmp_path):
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, depth=1, num_classes=3).eval()
    save_for_hf(model, str(tmp_path), safe_serialization=False)
    assert (tmp_path / "pytorch_model.bin").is_file()
    loaded = vit.load_model(str(tmp_path), device="cpu")
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), model(x), atol=1e-4, rtol=0)


def test_a_file_over_the_limit_is_refused(hub_cache):
    spec = hubconfig.read_spec(TIMM["vit"][0])
    with pytest.raises(InputError, match="over this server's limit"):
        hub.weights_file(spec, max_bytes=10)


def test_the_prefix_tokens_are_named(hub_cache):
    cfg = vit.load_model(TIMM["deit_distilled"][0], weights="random", device="cpu").config
    assert vit_config.prefix_token_names(cfg) == ("class", "distillation")
    cfg = vit.load_model(TIMM["dinov2_reg_head"][0], weights="random", device="cpu").config
    assert cfg.prefix_token_names == ("class", "register 1", "register 2", "register 3", "register 4")


def test_an_analysis_of_a_distilled_model_knows_its_prefix_tokens(hub_cache):
    _, models = hub_cache
    loaded = vit.load_model(TIMM["deit_distilled"][0], device="cpu")
    result = vit.analyze(loaded, _image(), top_k=3)
    assert result.prefix_token_names == ("class", "distillation") and result.num_tokens == 16 + 2
    assert result.rollout().shape == result.grid == (4, 4)
    assert result.patch_lens(1)[0].shape == (4, 4)
    # the last layer's early exit is the model's own prediction: the mean of both heads
    assert result.layer_predictions[-1].index == result.topk[0].index
    assert abs(result.layer_predictions[-1].prob - result.topk[0].prob) < 1e-5
    with torch.no_grad():
        theirs = models[("timm", "deit_distilled")](loaded.input(_image()).x).softmax(-1)[0]
    assert abs(float(theirs.max()) - result.topk[0].prob) < 1e-4
    explanation = vit.explain(loaded, _image(), method="gradcam")
    assert explanation.map.shape == (4, 4)


def test_a_backbone_is_analysed_and_says_it_has_no_classifier(hub_cache):
    loaded = vit.load_model(TIMM["dinov2_reg_backbone"][0], device="cpu")
    result = vit.analyze(loaded, _image())
    assert not result.has_classifier and result.topk == [] and result.layer_predictions == []
    assert result.prefix_token_names[1:] == ("register 1", "register 2", "register 3", "register 4")
    assert result.rollout().shape == result.grid
    assert result.token_norms.shape == (2, result.num_tokens)
    with pytest.raises(InputError, match="this model has no classifier"):
        vit.explain(loaded, _image())


def test_discarding_in_rollout_keeps_every_prefix_column():
    from reference import discard_lowest  # noqa: PLC0415

    fused = torch.rand(1, 3 + 16, 3 + 16).softmax(-1)
    kept = discard_lowest(fused, 0.9, num_prefix=3)
    assert torch.equal(kept[..., :3], fused[..., :3])
    assert (kept[..., 3:] == 0).sum(-1).min() == int(0.9 * 16)


def test_the_cli_analyzes_a_hub_model_and_download_offline_says_why(hub_cache, tmp_path, capsys):
    from vit.__main__ import main  # noqa: PLC0415

    path = tmp_path / "photo.png"
    _image().save(path)
    assert main(["analyze", str(path), "--model", TIMM["deit_distilled"][0], "--json", "--device", "cpu"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["prefix_tokens"] == ["class", "distillation"] and doc["num_tokens"] == 18
    assert [p["label"] for p in doc["topk"]][0].startswith("deit_distilled ")
    assert main(["download", "timm/vit_small_patch16_224.not_cached_anywhere"]) == 1
    err = capsys.readouterr().err
    assert "could not be downloaded" in err and "Traceback" not in err
    assert main(["download", TIMM["vit"][0]]) == 0  # cached already: found offline


def test_the_defaults_never_fail_on_a_classifier_with_three_classes(hub_cache, tmp_path):
    """top_k's default is 5 or every class where there are fewer: the API and the CLI, analysis and What if?."""
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, depth=1, num_classes=3).eval()
    save_for_hf(model, str(tmp_path), safe_serialization=True)
    loaded = vit.load_model(str(tmp_path), device="cpu")
    assert len(vit.analyze(loaded, _image()).topk) == 3
    assert len(vit.intervene(loaded, _image(), remove=[0]).topk) == 3
    with pytest.raises(vit.InputError, match="top_k must be an integer from 1 to 3, got 4"):
        vit.analyze(loaded, _image(), top_k=4)  # what a caller asks for is still checked
