"""``load_model``: one of the ViT families under the chapter's names, as a :class:`~vit.model.loaded.LoadedModel`.

    >>> import vit
    >>> loaded = vit.load_model("vit_b_16", weights="imagenet", patch_size=24, depth=6)
    >>> loaded.status  # doctest: +NORMALIZE_WHITESPACE
    'ViT-B/16 ImageNet weights (torchvision); patch embedding PI-resized 16->24;
     position embedding 14x14->9x9; first 6 of 12 layers'

As torchvision's builder: choose the state, cut it to the depth, resample it to the patch size, build.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import torch

from vit import validate
from vit.config import DISPLAY_NAMES, HUB_MODELS, PRESETS, TRAINED_HERE, ViTConfig, native_config
from vit.errors import InputError, WeightsError
from vit.model import families, hubconfig, precision
from vit.model.checkpoints import CHECKPOINTS, check_shapes, convert_torchvision, read_state_dict
from vit.model.loaded import LoadedModel
from vit.model.modules import ViTForImageClassification
from vit.model.preprocess import preprocess_for
from vit.model.resample import pi_resize_patch_embed, resample_pos_embed
from vit.model.weights import ensure
from vit.validate import Setting

Progress = Callable[[int, int], None]
State = dict[str, torch.Tensor]  # a state dict in our key names


def default_device() -> torch.device:
    """CUDA when there is a GPU, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _weights_file(weights: str | os.PathLike) -> Path:
    return Path(os.path.expanduser(str(weights)))


def _random_state(name: str) -> dict[str, torch.Tensor]:
    """A seeded random init of the full native model, in our key names."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return ViTForImageClassification(native_config(name)).state_dict()


def _native_shapes(name: str) -> dict[str, torch.Size]:
    """Every parameter's shape in a family's native model (built on the meta device: no memory)."""
    with torch.device("meta"):
        return {k: v.shape for k, v in ViTForImageClassification(native_config(name)).state_dict().items()}


def _pretrained_state(name: str, progress: Progress | None) -> tuple[dict | None, str, str]:
    """The native checkpoint in our key names, or None and why not (for a web page, and in full)."""
    path, public, detail = ensure(name, progress)
    if path is None:
        return None, public, detail
    try:
        state = convert_torchvision(read_state_dict(path))
        check_shapes(_native_shapes(name), state, f"the cached checkpoint {path.name}")
    except WeightsError as exc:  # a file in the cache we fetch into: the fix is to fetch it again
        why = f"UNTRAINED: predictions are random because {{}}; delete it and run `python -m vit download {name}`"
        return None, why.format(exc.public), why.format(exc)
    return state, "", ""


def _trained_state(name: str, weights: str) -> tuple[dict[str, torch.Tensor], str, str, str]:
    """A family trained here: "trained" (or "imagenet") is the file shipped in ``assets/``, never downloaded; a
    path a state dict as ``python -m vit train-shapes`` writes it."""
    display = DISPLAY_NAMES[name]
    if weights in ("trained", "imagenet"):
        path = families.weights_path(name)
        try:
            state = read_state_dict(path)
        except WeightsError as exc:
            reason = ("UNTRAINED: the shipped weights could not be read — predictions are random; "
                      "retrain them with `python -m vit train-shapes`")
            return _random_state(name), "random", f"{reason} ({exc.public})", f"{reason} ({exc})"
        loaded = "trained"
        classes = families.class_names(name)
        what = (f"{display.split(',')[0]} weights trained here on drawn shapes; not ImageNet "
                f"({len(classes)} classes: {', '.join(classes)})")
    else:
        path = _weights_file(weights)
        state, loaded, what = read_state_dict(path), str(path), f"{display} weights from {path.name}"
    if "conv_proj.weight" in state:  # a torchvision-format file of the same architecture
        state = convert_torchvision(state)
    return state, loaded, what, ""


def load_model(
    name: str | Setting = "vit_b_16",
    weights: str = "imagenet",
    patch_size: int | None = None,
    depth: int | None = None,
    device: str | torch.device | None = None,
    progress: Progress | None = None,
    dtype: str | torch.dtype = "float32",
) -> LoadedModel:
    """One of the ViT families under the chapter's names (a preset, a Hub id or folder, or a ``Setting``), as a
    :class:`LoadedModel`. ``weights``: "imagenet" (offline: random, and ``status`` says so), "random" or a
    ``.pth`` path. Another ``patch_size`` PI-resizes the patch embedding (FlexiViT); ``depth`` keeps the first
    layers. ``progress(bytes_done, bytes_total)`` while downloading.
    """
    validate.dtype(dtype)  # before anything is read or downloaded
    if isinstance(name, Setting):
        if patch_size is not None or depth is not None:
            raise TypeError("load_model takes a Setting or a name with patch_size and depth, not both "
                            f"(got patch_size={patch_size!r}, depth={depth!r} beside {name})")
        return load_setting(name, weights, device, progress, dtype)
    hub_name = _hub_name(name, progress)  # a Hub model's config is read (once) and registered before validation
    if hub_name is None:
        return load_setting(validate.setting(name, patch_size, depth), weights, device, progress, dtype)
    chosen = _hub_chosen(hub_name, weights, progress)  # first: the weights' shapes may correct its config.json
    return _finished(validate.setting(hub_name, patch_size, depth), chosen, device, dtype)


def load_setting(setting: Setting, weights: str = "imagenet", device: str | torch.device | None = None,
                 progress: Progress | None = None, dtype: str | torch.dtype = "float32") -> LoadedModel:
    """:func:`load_model`'s work for a valid setting (the server's model cache calls it): nothing is checked again."""
    if setting.name in HUB_MODELS:
        chosen = _hub_chosen(setting.name, weights, progress)
    else:
        chosen = _chosen_state(setting, weights, progress)
    return _finished(setting, chosen, device, dtype)


def _finished(setting: Setting, chosen: tuple[State, str, str, str], device: str | torch.device | None,
              dtype: str | torch.dtype) -> LoadedModel:
    """The model of ``setting`` from the chosen native state: cut, checked, resampled, built, in ``dtype``."""
    state, weights_used, what, detail = chosen
    state = _cut_depth(state, setting.depth)
    # Before anything is resampled: a B/32 file given for B/16 is named as such, not as a resampling error.
    native_shapes = _cut_depth(_native_shapes(setting.name), setting.depth)
    check_shapes(native_shapes, state, f"weights for {setting.display_name} ({Path(weights_used).name})")
    state, notes = _resampled(state, setting)
    model = _built(setting.config, state, f"weights for {setting.display_name} ({weights_used})", device)
    model = precision.to(model, precision.resolve(dtype, next(model.parameters()).device))
    return LoadedModel(
        module=model,
        config=setting.config,
        name=setting.name,
        weights=weights_used,
        status="; ".join([what, *notes]),  # for anyone: no server paths, no raw exception text
        status_detail="; ".join([detail or what, *notes]),  # for the CLI and the server's log
        preprocess=preprocess_for(setting.name, setting.config.image_size),
        class_names=families.class_names(setting.name),
    )


def _chosen_state(setting: Setting, weights: str, progress: Progress | None) -> tuple[State, str, str, str]:
    """The native state ``weights`` asks for: (state, what was loaded, a sentence, the sentence with paths)."""
    name, display = setting.name, setting.display_name
    if families.is_trained_here(name) and weights != "random":
        return _trained_state(name, weights)
    if weights == "trained":
        raise InputError(f"weights='trained' is for the families trained here ({', '.join(TRAINED_HERE)}); "
                         f"{display} takes 'imagenet', 'random' or a .pth path, got 'trained'")
    if weights == "random":
        return _random_state(name), "random", f"UNTRAINED {display} (random weights, as asked)", ""
    if weights == "imagenet":
        state, what, detail = _pretrained_state(name, progress)
        if state is None:
            return _random_state(name), "random", what, detail
        return state, "imagenet", f"{display} {CHECKPOINTS[name].source} weights (torchvision)", detail
    path = _weights_file(weights)
    return convert_torchvision(read_state_dict(path)), str(path), f"{display} weights from {path.name}", ""


def _hub_name(name, progress: Progress | None) -> str | None:
    """The registry key of a Hub repository id or folder, its config read (once) and registered; None otherwise."""
    if not isinstance(name, str) or name in PRESETS or not hubconfig.is_hub_name(name):
        return None
    key = hubconfig.registry_key(name)
    if key not in hubconfig.SPECS:
        hubconfig.read_spec(name, progress)
    return key


def _hub_chosen(name: str, weights: str, progress: Progress | None) -> tuple[State, str, str, str]:
    """A Hub model's native state as ``weights`` asks: "pretrained" (or "imagenet", the default) or "random"."""
    from vit.model import hub  # noqa: PLC0415 - safetensors and huggingface_hub, only for Hub models

    if weights not in ("pretrained", "imagenet", "random"):
        raise InputError(f"weights for a Hub model must be 'pretrained' or 'random', got {weights!r}")
    path, public, detail = (None, "", "") if weights == "random" else ensure(name, progress)
    spec = hubconfig.spec_of(name)
    read = "" if spec.read_from == "config.json" else f"; architecture read from {spec.read_from}"
    if weights == "random":
        return _random_state(name), "random", f"UNTRAINED {spec.display_name} (random weights, as asked){read}", ""
    if path is None:
        read = read if spec.why_not_read else ""
        return _random_state(name), "random", public + read, detail + read
    state, spec = hub.hub_state(spec, path)
    where = f"the folder {Path(name).name}" if spec.folder is not None else f"the Hub ({name})"
    licence = f"; licence: {spec.licence}" if spec.licence else ""
    return state, "pretrained", f"{spec.display_name} weights from {where}{licence}", ""


def _cut_depth(state: dict, depth: int) -> dict:
    """The entries of the first ``depth`` encoder layers and everything outside the encoder's layers (a new dict)."""
    def kept(key: str) -> bool:
        return not key.startswith("encoder.layers.") or int(key.split(".")[2]) < depth

    return {k: v for k, v in state.items() if kept(k)}


def _resampled(state: State, setting: Setting) -> tuple[State, list[str]]:
    """The state at the setting's patch size (a new dict), and a note for each change, the depth's included."""
    native, P, grid = setting.native, setting.patch_size, setting.grid
    state, notes = dict(state), []
    if P != native.patch_size:
        key = "embedding.patch_embed.proj.weight"
        state[key] = pi_resize_patch_embed(state[key], (P, P))
        notes.append(f"patch embedding PI-resized {native.patch_size}->{P}")
    if grid != native.grid_size:
        key, g = "embedding.pos_embed.weight", native.grid_size
        state[key] = resample_pos_embed(state[key], (g, g), (grid, grid), native.num_pos_prefix_tokens)
        notes.append(f"position embedding {g}x{g}->{grid}x{grid}")
    if setting.depth != native.num_layers:
        notes.append(f"first {setting.depth} of {native.num_layers} layers")
    return state, notes


def _built(config: ViTConfig, state: State, source: str, device: str | torch.device | None
           ) -> ViTForImageClassification:
    """The model of ``config`` holding ``state`` (shapes checked, strict): eval mode, no gradients, on ``device``."""
    with torch.device("meta"):
        model = ViTForImageClassification(config)
    check_shapes({k: v.shape for k, v in model.state_dict().items()}, state, source)
    model.load_state_dict(state, strict=True, assign=True)
    model.eval().requires_grad_(False)
    return model.to(default_device() if device is None else torch.device(device))
