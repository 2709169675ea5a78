"""A Hugging Face Hub repository's weights -> a state dict under the chapter's names, fitted to its config: refused
before the download when too large, renamed through ``vit.model.hubkeys``, their shapes correcting an older
config.json, a position embedding on another grid resampled (DINOv2: trained at 518 px, run at 224).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import torch
from torch import Tensor

from vit.config import ViTConfig
from vit.errors import InputError, WeightsError
from vit.model import hubconfig
from vit.model.hubconfig import FileUnavailable, HubSpec, Progress
from vit.model.hubkeys import convert_timm, convert_transformers
from vit.model.resample import resample_pos_embed

RETRY_DOWNLOAD_AFTER_S = 60.0  # as vit.model.checkpoints: a failed download is not retried for this long
_failed: dict[str, tuple[float, str, str]] = {}  # name -> (when, public reason, full reason)
State = dict[str, Tensor]


def untrained_because_offline(spec: HubSpec, detail: str) -> tuple[str, str]:
    """The UNTRAINED sentence of a model whose weights could not be had: (for anyone, in full)."""
    public = (f"UNTRAINED: weights could not be downloaded — predictions are random; "
              f"run `python -m vit download {spec.name}`")
    return public, f"{public} ({detail})"


def weights_file(spec: HubSpec, progress: Progress | None = None, max_bytes: int | None = None) -> Path:
    """The repository's weights on disk; FileUnavailable offline and not cached, InputError over ``max_bytes``
    (said before the download) or none."""
    limit = hubconfig.MAX_WEIGHTS_BYTES if max_bytes is None else max_bytes
    for filename in hubconfig.WEIGHTS_FILES:
        if spec.folder is None and not _cached(spec.name, filename):
            size = hubconfig.file_size(spec.name, filename)
            if size is not None and size > limit:
                raise InputError(f"{spec.display_name}'s {filename} is {size / 1e9:.1f} GB, over this server's "
                                 f"limit of {limit / 1e9:g} GB for weights (VIT_MAX_WEIGHTS_GB); it was not downloaded")
        path = hubconfig.fetch(spec.name, filename, spec.folder, progress)
        if path is not None:
            if path.stat().st_size > limit:
                raise InputError(f"{spec.display_name}'s {filename} is {path.stat().st_size / 1e9:.1f} GB, over "
                                 f"this server's limit of {limit / 1e9:g} GB for weights (VIT_MAX_WEIGHTS_GB)")
            return path
    raise InputError(f"{spec.name} has neither {' nor '.join(hubconfig.WEIGHTS_FILES)}")


def is_cached(name: str) -> bool:
    """Whether a Hub model's weights are on disk now (its folder's, or the Hub cache's)."""
    spec = hubconfig.SPECS.get(name)
    if spec is not None and spec.folder is not None:
        return any((spec.folder / f).is_file() for f in hubconfig.WEIGHTS_FILES)
    return any(_cached(name, f) for f in hubconfig.WEIGHTS_FILES)


def _cached(name: str, filename: str) -> bool:
    from huggingface_hub import try_to_load_from_cache  # noqa: PLC0415

    return isinstance(try_to_load_from_cache(name, filename), str)


def read_weights(path: Path) -> State:
    """A safetensors file, or a pickled state dict read with ``weights_only=True`` (tensors only, no code)."""
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file  # noqa: PLC0415

            return load_file(str(path), device="cpu")
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any reader error means "unreadable file"
        raise WeightsError(f"could not read {path} ({type(exc).__name__}: {exc})",
                           public=f"{path.name} is corrupt or truncated") from None
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict) or not all(isinstance(v, Tensor) for v in state.values()):
        raise WeightsError(f"{path} is not a state dict of tensors", public=f"{path.name} is not a state dict")
    return state


def to_ours(spec: HubSpec, state: State) -> State:
    """The repository's state dict under our names, through its format's key map."""
    return convert_timm(state) if spec.format == "timm" else convert_transformers(state)


def config_from_state(config: ViTConfig, state: State) -> ViTConfig:
    """The config with what the weights' shapes say (all but h and the image size), which an older config.json
    may leave out."""
    patch = state["embedding.patch_embed.proj.weight"]  # (D, C, P, P)
    D = patch.shape[0]
    layers = {int(k.split(".")[2]) for k in state if k.startswith("encoder.layers.")}
    registers = state.get("embedding.add_cls_token.register_tokens")
    changes = dict(
        embed_dim=D, in_channels=patch.shape[1], patch_size=patch.shape[-1], num_layers=len(layers),
        num_register_tokens=0 if registers is None else registers.shape[1],
        distilled="embedding.add_cls_token.dist_token" in state,
        layer_scale="encoder.layers.0.scale1.gamma" in state, pre_norm="embedding.norm_pre.weight" in state,
        patch_bias="embedding.patch_embed.proj.bias" in state, qkv_bias="encoder.layers.0.attn.q_proj.bias" in state,
    )
    if "encoder.layers.0.mlp.net.0.weight" in state:
        hidden = state["encoder.layers.0.mlp.net.0.weight"].shape[0]
        changes["hidden_dim"] = None if hidden == 4 * D else hidden
    if D != config.embed_dim:  # the name's size was wrong: h from timm's sizes for this D, else one head per 64
        from vit.model.hubnames import SIZES  # noqa: PLC0415

        changes["num_heads"] = next((h for d, _, h in SIZES.values() if d == D), max(1, D // 64))
    config = config.with_(**changes)
    pos = state["embedding.pos_embed.weight"].shape[1]  # (1, covered + N', D)
    covered = next((c for c in _coverings(config) if _is_square(pos - c)), config.num_pos_prefix_tokens)
    return config.with_(pos_embed_prefix={config.num_prefix_tokens: "all", 1: "class", 0: "none"}.get(
        covered, config.pos_embed_prefix))


def _coverings(config: ViTConfig) -> list[int]:
    """The prefix counts a position embedding may cover, the config's own first."""
    options = [config.num_pos_prefix_tokens, config.num_prefix_tokens, 1, 0]
    return list(dict.fromkeys(options))


def _is_square(n: int) -> bool:
    return n > 0 and round(n**0.5) ** 2 == n


def fit_state(config: ViTConfig, state: State, antialias: bool = True) -> State:
    """The state with a position embedding resampled to the config's grid (a new dict), ``antialias`` as the
    library does it at every forward."""
    key = "embedding.pos_embed.weight"
    pos, covered = state[key], config.num_pos_prefix_tokens
    side = round((pos.shape[1] - covered) ** 0.5)
    if side * side + covered != pos.shape[1]:
        raise WeightsError(f"the position embedding has {pos.shape[1]} rows: not {covered} prefix rows and a "
                           "square grid")
    if side == config.grid_size:
        return state
    state = dict(state)
    state[key] = resample_pos_embed(pos, (side, side), (config.grid_size,) * 2, covered, antialias)
    return state


def fetched(name: str, progress: Progress | None = None) -> tuple[Path | None, str, str]:
    """A Hub model's weights on disk (its config.json read first where only its name was): (the file, "", "") or
    (None, why not for anyone, in full); a failed download is not tried again for ``RETRY_DOWNLOAD_AFTER_S``."""
    spec = hubconfig.reread(name, progress)
    if spec.why_not_read:
        return None, *untrained_because_offline(spec, spec.why_not_read)
    failed = _failed.get(name)
    if failed and time.monotonic() - failed[0] < RETRY_DOWNLOAD_AFTER_S:
        return None, failed[1], failed[2]
    try:
        path = weights_file(spec, progress)
    except FileUnavailable as exc:
        public, detail = untrained_because_offline(spec, str(exc))
        _failed[name] = (time.monotonic(), public, detail)
        return None, public, detail
    _failed.pop(name, None)
    return path, "", ""


def hub_state(spec: HubSpec, path: Path) -> tuple[State, HubSpec]:
    """The weights file's state in our names, fitted, and the spec with the config its shapes say (registered)."""
    state = to_ours(spec, read_weights(path))
    config = config_from_state(spec.config, state)
    if config != spec.config:
        spec = hubconfig.remember(replace(spec, config=config))
    antialias = not (spec.format == "transformers" and spec.architecture == "dinov2")
    return fit_state(config, state, antialias), spec
