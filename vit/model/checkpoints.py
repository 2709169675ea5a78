"""torchvision's checkpoints (``torchvision.models.ViT_*_Weights``): the registry, the download cache (and its memory
of failed downloads), the key map. Files live in torch's hub cache, ``$TORCH_HOME/hub/checkpoints/``, under
torchvision's own names, so a file fetched by torchvision is found here and the other way round.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor
from torchvision import models as tv_models

from vit.config import PRESETS, TRAINED_HERE
from vit.errors import WeightsError
from vit.process import pid_alive


@dataclass(frozen=True)
class Checkpoint:
    """Where a family's pretrained weights come from."""

    name: str  # "vit_b_16"
    enum_name: str  # torchvision weights class
    member: str  # which weights of that class

    @property
    def weights(self) -> tv_models.WeightsEnum:
        return getattr(getattr(tv_models, self.enum_name), self.member)

    @property
    def url(self) -> str:
        return self.weights.url

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]

    @property
    def source(self) -> str:
        return "ImageNet" if self.member == "IMAGENET1K_V1" else "SWAG-linear ImageNet"

    @property
    def file_size_mb(self) -> float:
        return float(self.weights.meta.get("_file_size", 0.0))


CHECKPOINTS: dict[str, Checkpoint] = {
    "vit_b_16": Checkpoint("vit_b_16", "ViT_B_16_Weights", "IMAGENET1K_V1"),
    "vit_b_32": Checkpoint("vit_b_32", "ViT_B_32_Weights", "IMAGENET1K_V1"),
    "vit_l_16": Checkpoint("vit_l_16", "ViT_L_16_Weights", "IMAGENET1K_V1"),
    "vit_l_32": Checkpoint("vit_l_32", "ViT_L_32_Weights", "IMAGENET1K_V1"),
    # The 224-px linear-probe SWAG weights; the end-to-end ones need 518 px.
    "vit_h_14": Checkpoint("vit_h_14", "ViT_H_14_Weights", "IMAGENET1K_SWAG_LINEAR_V1"),
}
assert CHECKPOINTS.keys() == PRESETS.keys() - set(TRAINED_HERE)  # those ship in assets/ (vit.families)

DOWNLOAD_TIMEOUT_S = float(os.environ.get("VIT_DOWNLOAD_TIMEOUT", "10"))
_HASH_IN_NAME = re.compile(r"-([a-f0-9]+)\.")  # torch.hub's convention: name-<sha256 prefix>.pth


class DownloadError(RuntimeError):
    """The checkpoint could not be fetched (offline, blocked, interrupted, bad hash)."""


def cache_dir() -> Path:
    """``$TORCH_HOME/hub/checkpoints``, read at call time so tests can redirect it."""
    return Path(torch.hub.get_dir()) / "checkpoints"


def cached_path(name: str) -> Path:
    return cache_dir() / CHECKPOINTS[name].filename


def download(
    name: str,
    progress: Callable[[int, int], None] | None = None,
    timeout: float | None = None,
) -> Path:
    """A family's checkpoint in the hub cache, downloaded unless it is there (``timeout``: seconds per read); checked
    against the hash prefix in its name before the rename, so a partial download is never seen as a checkpoint."""
    ckpt = CHECKPOINTS[name]
    dest = cached_path(name)
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(dest.parent)
    timeout = DOWNLOAD_TIMEOUT_S if timeout is None else timeout
    # The writer's pid is in the name, so a later process can tell a live download from a dead one's.
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.{os.getpid()}.", suffix=".partial", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(ckpt.url, timeout=timeout) as response:
            total = int(response.headers.get("Content-Length") or 0)
            sha, done = hashlib.sha256(), 0
            while chunk := response.read(1 << 20):
                out.write(chunk)
                sha.update(chunk)
                done += len(chunk)
                if progress:
                    progress(done, total)
        if total and done != total:
            raise DownloadError(f"download of {ckpt.url} was interrupted after {done} of {total} bytes")
        match = _HASH_IN_NAME.search(dest.name)
        if match and not sha.hexdigest().startswith(match.group(1)):
            raise DownloadError(f"downloaded file for {name} has the wrong SHA-256 (expected {match.group(1)}...)")
        os.replace(tmp, dest)
        return dest
    except DownloadError:
        raise
    except Exception as exc:  # URLError, timeouts, resets, disk full: all mean "no checkpoint"
        raise DownloadError(f"could not download {ckpt.url}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


# A failed download is not retried for this long: a class without a network does not wait on every request.
RETRY_DOWNLOAD_AFTER_S = 60.0
_failed_downloads: dict[str, tuple[float, str, str]] = {}  # name -> (when, public reason, full reason)


def fetch_checkpoint(name: str, progress: Callable[[int, int], None] | None = None) -> tuple[Path | None, str, str]:
    """A family's checkpoint, downloaded if need be: (the file, "", "") or (None, why not for a web page, in full).
    The cache is tried first even after a failed download (a file may have been put there since)."""
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


_PARTIAL = re.compile(r"^\.(?P<file>.+?\.pth)\.(?:(?P<pid>\d+)\.)?[^.]+\.partial$")
ORPHAN_PARTIAL_AGE_S = 3600.0  # a partial file without a pid (older versions) is an orphan after an hour


def remove_stale_partials(folder: Path | None = None) -> list[Path]:
    """Remove (and return) the ``.partial`` downloads of processes that died (a name carries its writer's pid)."""
    folder = cache_dir() if folder is None else folder
    removed = []
    try:
        entries = list(folder.iterdir())
    except OSError:  # no cache folder yet
        return removed
    for path in entries:
        match = _PARTIAL.match(path.name)
        if not match:
            continue
        pid = match.group("pid")
        try:
            stale = not pid_alive(int(pid)) if pid else time.time() - path.stat().st_mtime > ORPHAN_PARTIAL_AGE_S
            if stale:
                path.unlink()
                removed.append(path)
        except OSError:  # removed meanwhile, or not ours to remove
            continue
    return removed


def read_state_dict(path: str | os.PathLike) -> dict[str, Tensor]:
    """A torchvision-format state dict from a ``.pth`` file, tensors only (``weights_only=True``); a WeightsError
    names the path and the reader's error (``.public`` only the file's name)."""
    path = Path(path)
    if not path.is_file():
        raise WeightsError(f"weights file not found: {path}", public=f"weights file {path.name} not found")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch.load raises many kinds on a bad file: all mean "unreadable"
        raise WeightsError(
            f"could not read the checkpoint {path} ({type(exc).__name__}: {exc}); the file is corrupt or truncated",
            public=f"the checkpoint {path.name} is corrupt or truncated",
        ) from None
    if not isinstance(state, dict) or not all(isinstance(v, Tensor) for v in state.values()):
        raise WeightsError(f"{path} is not a state dict of tensors (torchvision's format)",
                           public=f"{path.name} is not a state dict of tensors (torchvision's format)")
    return state


# --- The key map: torchvision's names -> the chapter's names ------------------
# {i} is the encoder layer. torchvision's fused in_proj (3D, D) is split into
# q_proj, k_proj and v_proj in that order, as nn.MultiheadAttention packs them.
KEY_MAP: dict[str, str] = {
    "conv_proj.weight": "embedding.patch_embed.proj.weight",
    "conv_proj.bias": "embedding.patch_embed.proj.bias",
    "class_token": "embedding.add_cls_token.cls_token",
    "encoder.pos_embedding": "embedding.pos_embed.weight",
    "encoder.layers.encoder_layer_{i}.ln_1.weight": "encoder.layers.{i}.norm1.weight",
    "encoder.layers.encoder_layer_{i}.ln_1.bias": "encoder.layers.{i}.norm1.bias",
    "encoder.layers.encoder_layer_{i}.self_attention.in_proj_weight": "encoder.layers.{i}.attn.{qkv}_proj.weight",
    "encoder.layers.encoder_layer_{i}.self_attention.in_proj_bias": "encoder.layers.{i}.attn.{qkv}_proj.bias",
    "encoder.layers.encoder_layer_{i}.self_attention.out_proj.weight": "encoder.layers.{i}.attn.out_proj.weight",
    "encoder.layers.encoder_layer_{i}.self_attention.out_proj.bias": "encoder.layers.{i}.attn.out_proj.bias",
    "encoder.layers.encoder_layer_{i}.ln_2.weight": "encoder.layers.{i}.norm2.weight",
    "encoder.layers.encoder_layer_{i}.ln_2.bias": "encoder.layers.{i}.norm2.bias",
    "encoder.layers.encoder_layer_{i}.mlp.0.weight": "encoder.layers.{i}.mlp.net.0.weight",
    "encoder.layers.encoder_layer_{i}.mlp.0.bias": "encoder.layers.{i}.mlp.net.0.bias",
    "encoder.layers.encoder_layer_{i}.mlp.3.weight": "encoder.layers.{i}.mlp.net.3.weight",
    "encoder.layers.encoder_layer_{i}.mlp.3.bias": "encoder.layers.{i}.mlp.net.3.bias",
    "encoder.ln.weight": "encoder.norm.weight",
    "encoder.ln.bias": "encoder.norm.bias",
    "heads.head.weight": "head.head.weight",
    "heads.head.bias": "head.head.bias",
}
# Checkpoints saved before torchvision 0.14 name the MLP linear_1 / linear_2.
_LEGACY = {".mlp.linear_1.": ".mlp.0.", ".mlp.linear_2.": ".mlp.3."}
_LAYER = re.compile(r"encoder\.layers\.encoder_layer_(\d+)\.")


def convert_torchvision(state: dict[str, Tensor]) -> dict[str, Tensor]:
    """A torchvision ViT state dict under our names (a new dict); a WeightsError names the keys the map lacks."""
    out: dict[str, Tensor] = {}
    unknown = []
    for tv_key, value in state.items():
        for old, new in _LEGACY.items():
            tv_key = tv_key.replace(old, new)
        match = _LAYER.search(tv_key)
        template = _LAYER.sub("encoder.layers.encoder_layer_{i}.", tv_key) if match else tv_key
        ours = KEY_MAP.get(template)
        if ours is None:
            unknown.append(tv_key)
            continue
        ours = ours.replace("{i}", match.group(1)) if match else ours
        if "{qkv}" in ours:
            for part, chunk in zip("qkv", value.chunk(3, dim=0)):
                out[ours.replace("{qkv}", part)] = chunk
        else:
            out[ours] = value
    if unknown:
        raise WeightsError(f"checkpoint has keys that are not a torchvision ViT's: {', '.join(unknown[:5])}")
    return out


def check_shapes(expected: dict[str, torch.Size], state: dict[str, Tensor], source: str) -> None:
    """Strict: the same keys, the same shapes; the error names the key and both shapes."""
    missing = [k for k in expected if k not in state]
    unexpected = [k for k in state if k not in expected]
    if missing or unexpected:
        raise WeightsError(
            f"{source} does not fit the model: missing {missing[:5] or 'none'}, unexpected {unexpected[:5] or 'none'}"
        )
    for key, shape in expected.items():
        if state[key].shape != shape:
            raise WeightsError(
                f"{source}: {key} has shape {tuple(state[key].shape)} in the checkpoint, expected {tuple(shape)}"
            )
