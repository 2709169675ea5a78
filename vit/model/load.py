"""The Python API: ``load_model`` and ``analyze``.

    >>> import vit
    >>> loaded = vit.load_model("vit_b_16", weights="imagenet", patch_size=24, depth=6)
    >>> loaded.status
    'ViT-B/16 ImageNet weights (torchvision); patch embedding PI-resized 16->24; position embedding 14x14->9x9; first 6 of 12 layers'
    >>> result = vit.analyze(loaded, "assets/cat.jpg")
    >>> result.topk[0].label, result.rollout().shape

``loaded`` is a :class:`~vit.model.loaded.LoadedModel`: the plain module (``loaded.module``) and,
beside it, its config, preprocessing, class names and status.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import torch

from vit import validate
from vit.config import DISPLAY_NAMES, PRESETS, TRAINED_HERE
from vit.errors import InputError, WeightsError
from vit.model import families
from vit.model.checkpoints import (
    CHECKPOINTS,
    DownloadError,
    cached_path,
    check_shapes,
    convert_torchvision,
    download,
    read_state_dict,
)
from vit.model.loaded import LoadedModel
from vit.model.modules import ViTForImageClassification
from vit.model.preprocess import preprocess_for
from vit.model.resample import pi_resize_patch_embed, resample_pos_embed

Progress = Callable[[int, int], None]

# A failed download is not retried for this long, so a class without a network
# does not wait for a timeout on every request.
RETRY_DOWNLOAD_AFTER_S = 60.0
_failed_downloads: dict[str, tuple[float, str, str]] = {}  # name -> (when, public reason, full reason)


def default_device() -> torch.device:
    """CUDA when there is a GPU, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _random_state(name: str) -> dict[str, torch.Tensor]:
    """A seeded random init of the full native model, in our key names."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return ViTForImageClassification(PRESETS[name]).state_dict()


def _native_shapes(name: str) -> dict[str, torch.Size]:
    """Every parameter's shape in a family's native model (built on the meta device: no memory)."""
    with torch.device("meta"):
        return {k: v.shape for k, v in ViTForImageClassification(PRESETS[name]).state_dict().items()}


def fetch_checkpoint(name: str, progress: Progress | None = None) -> tuple[Path | None, str, str]:
    """A family's checkpoint in the cache, downloaded if it is not there yet; or None and why not.

    Apart from loading so that a server can fetch on one process and load on another: on a
    ZeroGPU Space the model loads in a GPU worker whose seconds count against the visitor's
    quota, and the download happens before, on the CPU. A file in the cache is always tried
    first: a download that failed a moment ago says nothing about a checkpoint that has been
    put there since. A failed download is not tried again for ``RETRY_DOWNLOAD_AFTER_S``.

    Returns:
        (the cached file, "", "") or (None, why not for a web page, why not in full).
    """
    path = cached_path(name)
    if not path.is_file():
        failed = _failed_downloads.get(name)
        if failed and time.monotonic() - failed[0] < RETRY_DOWNLOAD_AFTER_S:
            return None, failed[1], failed[2]
        try:
            path = download(name, progress=progress)
        except DownloadError as exc:
            public = (f"UNTRAINED: weights could not be downloaded — predictions are random; "
                      f"run `python -m vit download {name}`")
            _failed_downloads[name] = (time.monotonic(), public, f"{public} ({exc})")
            return None, public, _failed_downloads[name][2]
    _failed_downloads.pop(name, None)
    return path, "", ""


def _pretrained_state(name: str, progress: Progress | None) -> tuple[dict | None, str, str]:
    """The native checkpoint in our key names, or None and why not (for a web page, and in full)."""
    path, public, detail = fetch_checkpoint(name, progress)
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
    """The weights of a family trained here: (state in our key names, what was loaded, a sentence, the same
    with the file's path and the reader's error where it failed).

    ``"trained"`` (and ``"imagenet"``, the default of every family) is the file shipped in
    ``assets/``; a path is a state dict as ``python -m vit train-shapes`` writes it. Nothing is
    ever downloaded; a missing or broken shipped file falls back to random weights, and says so.
    """
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
        path = Path(os.path.expanduser(str(weights)))
        state, loaded, what = read_state_dict(path), str(path), f"{display} weights from {path.name}"
    if "conv_proj.weight" in state:  # a torchvision-format file of the same architecture
        state = convert_torchvision(state)
    return state, loaded, what, ""


def load_model(
    name: str = "vit_b_16",
    weights: str = "imagenet",
    patch_size: int | None = None,
    depth: int | None = None,
    device: str | torch.device | None = None,
    progress: Progress | None = None,
) -> LoadedModel:
    """Build one of the six ViT families (five torchvision checkpoints, one trained here) under the chapter's names.

    Args:
        name: "vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32" or "vit_h_14" (or "ViT-B/16"), or
            "vit_tiny_shapes", the small ViT trained here on ``vit.shapes``' drawings.
        weights: "imagenet" (torchvision's checkpoint, downloaded once into the torch hub cache;
            offline, the model falls back to random weights and ``status`` says so), "random",
            or the path of a ``.pth`` state dict in torchvision's format. For "vit_tiny_shapes",
            "trained" (or the default "imagenet") loads the weights shipped in ``assets/``, never
            downloading anything, and a path is a state dict as ``python -m vit train-shapes`` writes it.
        patch_size: P from 4 to 64 (to 32 for "vit_tiny_shapes"); None keeps the checkpoint's. Another P PI-resizes the
            patch embedding (FlexiViT) and resamples the position embedding to the new grid,
            grid = round(native resolution / P); the input size becomes grid x P.
        depth: keep the first ``depth`` encoder layers (1..L), then the final norm and head.
        device: where to run; default CUDA if available, else CPU.
        progress: ``progress(bytes_done, bytes_total)`` while downloading.

    Returns:
        A :class:`~vit.model.loaded.LoadedModel`: the module in eval mode (``.module``) and beside it
        ``config``, ``preprocess``, ``class_names``, ``status`` (a sentence saying what was loaded
        and done, without server paths or raw exception text), ``status_detail`` (the same with
        them, for the CLI and logs), ``weights`` (what was actually loaded: "imagenet", "trained",
        "random" or the path) and ``name``.
    """
    setting = validate.setting(name, patch_size, depth)
    name, patch_size, depth = setting.name, setting.patch_size, setting.depth
    native, display = setting.native, setting.display_name

    notes = []
    detail = ""
    if families.is_trained_here(name) and weights != "random":
        state, weights_used, what, detail = _trained_state(name, weights)
    elif weights == "trained":
        raise InputError(f"weights='trained' is for the families trained here ({', '.join(TRAINED_HERE)}); "
                         f"{display} takes 'imagenet', 'random' or a .pth path, got 'trained'")
    elif weights == "random":
        state, weights_used, what = _random_state(name), "random", f"UNTRAINED {display} (random weights, as asked)"
    elif weights == "imagenet":
        state, what, detail = _pretrained_state(name, progress)
        if state is None:
            state, weights_used = _random_state(name), "random"
        else:
            weights_used, what = "imagenet", f"{display} {CHECKPOINTS[name].source} weights (torchvision)"
    else:
        path = Path(os.path.expanduser(str(weights)))
        state = convert_torchvision(read_state_dict(path))
        weights_used, what = str(path), f"{display} weights from {path.name}"

    grid, native_grid = setting.grid, native.grid_size
    config = setting.config

    # Drop the layers past ``depth`` (early exit), resample what the patch size changes.
    def kept(key: str) -> bool:
        return not key.startswith("encoder.layers.") or int(key.split(".")[2]) < depth

    state = {k: v for k, v in state.items() if kept(k)}
    # Before anything is resampled: a B/32 file given for B/16 is named as such, not as a resampling error.
    native_shapes = {k: shape for k, shape in _native_shapes(name).items() if kept(k)}
    check_shapes(native_shapes, state, f"weights for {display} ({Path(weights_used).name})")
    key = "embedding.patch_embed.proj.weight"
    if patch_size != native.patch_size:
        state[key] = pi_resize_patch_embed(state[key], (patch_size, patch_size))
        notes.append(f"patch embedding PI-resized {native.patch_size}->{patch_size}")
    key = "embedding.pos_embed.weight"
    if grid != native_grid:
        state[key] = resample_pos_embed(state[key], (native_grid, native_grid), (grid, grid))
        notes.append(f"position embedding {native_grid}x{native_grid}->{grid}x{grid}")
    if depth != native.num_layers:
        notes.append(f"first {depth} of {native.num_layers} layers")

    with torch.device("meta"):
        model = ViTForImageClassification(config)
    expected = {k: v.shape for k, v in model.state_dict().items()}
    check_shapes(expected, state, f"weights for {display} ({weights_used})")
    model.load_state_dict(state, strict=True, assign=True)
    model.eval().requires_grad_(False)
    model.to(default_device() if device is None else torch.device(device))
    return LoadedModel(
        module=model,
        config=config,
        name=name,
        weights=weights_used,
        status="; ".join([what, *notes]),  # for anyone: no server paths, no raw exception text
        status_detail="; ".join([detail or what, *notes]),  # for the CLI and the server's log
        preprocess=preprocess_for(name, config.image_size),
        class_names=families.class_names(name),
    )
