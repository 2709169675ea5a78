"""A Hugging Face Hub repository's small files -> our config, its name, classes and preprocessing (torch-free).

:func:`read_spec` reads timm's or transformers' config.json into a :class:`HubSpec` and registers its config under
the repository id, as the presets are. Offline with nothing cached, the architecture is read from the name (random
weights, and the status says so). Anything that is not a plain ViT is refused in one sentence naming it.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from vit import validate
from vit.config import PRESETS, register
from vit.errors import InputError
from vit.model import hubnames
from vit.model.hubspec import HubSpec
from vit.model.hubtimm import timm_spec
from vit.model.hubtransformers import TYPES as TRANSFORMERS_TYPES
from vit.model.hubtransformers import transformers_spec

Progress = Callable[[int, int], None]
# A weights file larger than this is refused before it is downloaded.
MAX_WEIGHTS_BYTES = int(float(os.environ.get("VIT_MAX_WEIGHTS_GB", "4")) * 1e9)
WEIGHTS_FILES = ("model.safetensors", "pytorch_model.bin")
SUPPORTED = ("timm's vit_*, deit_*, deit3_* and *_dinov2 ViTs with a class token, token pooling and learned "
             f"position embeddings, and transformers' model types {', '.join(TRANSFORMERS_TYPES)}")
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


SPECS: dict[str, HubSpec] = {}  # registry key -> what was read
RETRY_CONFIG_AFTER_S = 60.0  # a config.json that could not be had is asked for again after this long
_config_tried: dict[str, float] = {}  # registry key -> when its config.json was last asked for


def is_hub_name(value) -> bool:
    """A repository id ("org/name") or an existing local folder: what :func:`read_spec` takes."""
    if not isinstance(value, str) or value in PRESETS:
        return False
    try:  # "ViT-B/32" is a preset's display name, not a repository
        if validate.model_name(value) in PRESETS:
            return False
    except InputError:
        pass
    value = value.strip()
    return bool(_REPO_ID.match(value)) or Path(os.path.expanduser(value)).is_dir()


def registry_key(value: str) -> str:
    """The name a Hub model is registered under: the id as given, or a local folder's resolved path."""
    value = value.strip()
    folder = Path(os.path.expanduser(value))
    return str(folder.resolve()) if folder.is_dir() and not _REPO_ID.match(value) else value


# --------------------------------------------------------------------------- files


class FileUnavailable(Exception):
    """A file could not be had now (offline and not cached, or the network failed): worth retrying."""


def fetch(name: str, filename: str, folder: Path | None = None, progress: Progress | None = None) -> Path | None:
    """A repository's file on disk, from ``folder`` or the Hub cache (downloaded if need be); None when the
    repository has none."""
    if folder is not None:
        path = folder / filename
        return path if path.is_file() else None
    from huggingface_hub import errors, hf_hub_download  # noqa: PLC0415 - only when a Hub model is asked for

    try:
        return Path(hf_hub_download(name, filename, tqdm_class=_progress_bar(progress)))
    except errors.RemoteEntryNotFoundError:
        return None
    except (errors.GatedRepoError, errors.RepositoryNotFoundError) as exc:
        raise InputError(f"the Hub has no repository {name!r} that this server can read (not found, or private "
                         f"and no token: `hf auth login`); {type(exc).__name__}") from None
    except (errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled, OSError) as exc:
        raise FileUnavailable(f"{filename} of {name} could not be downloaded and is not cached "
                              f"({type(exc).__name__})") from None


def _cached(name: str, filename: str) -> bool:
    """Whether the Hub cache holds the file now (no network)."""
    from huggingface_hub import try_to_load_from_cache  # noqa: PLC0415

    return Path(name).is_dir() or isinstance(try_to_load_from_cache(name, filename), str)


def file_size(name: str, filename: str) -> int | None:
    """A file's size on the Hub in bytes, before it is downloaded (None if unknown or offline)."""
    try:
        from huggingface_hub import get_hf_file_metadata, hf_hub_url  # noqa: PLC0415

        return get_hf_file_metadata(hf_hub_url(name, filename)).size
    except Exception:  # noqa: BLE001 - offline, no such file, no network: the size is simply unknown
        return None


def _progress_bar(progress: Progress | None):
    """A tqdm class for ``hf_hub_download`` that reports ``progress(bytes_done, bytes_total)``; None without one."""
    if progress is None:
        return None
    from tqdm.auto import tqdm  # noqa: PLC0415 - huggingface_hub's own dependency

    class Reporting(tqdm):
        def update(self, n=1):
            out = super().update(n)
            progress(int(self.n), int(self.total or 0))
            return out

    return Reporting


def _json(path: Path | None) -> dict | None:
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path.name} is not readable JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path.name} should hold a JSON object, got {type(data).__name__}")
    return data


def licence_of(readme: Path | None) -> str | None:
    """The ``license:`` of a model card's YAML front matter, if it has one."""
    if readme is None:
        return None
    text = readme.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return None
    front = text[3:].split("\n---", 1)[0]
    match = re.search(r"^licen[cs]e:\s*['\"]?([^'\"\n]+)", front, re.MULTILINE)
    return match.group(1).strip() if match else None


# --------------------------------------------------------------------------- the spec


def read_spec(value: str, progress: Progress | None = None) -> HubSpec:
    """Read and register a repository's config, preprocessing, classes and licence ("org/name" or a folder)."""
    if not is_hub_name(value):
        raise InputError(f"expected a Hugging Face Hub repository id such as 'timm/vit_tiny_patch16_224.augreg_in1k' "
                         f"or a folder holding a repository's files, got {value!r}")
    return _read(registry_key(value), progress)


def _read(name: str, progress: Progress | None) -> HubSpec:
    """:func:`read_spec` of a registry key."""
    folder = Path(name) if Path(name).is_dir() and not _REPO_ID.match(name) else None
    try:
        config_json = _json(fetch(name, "config.json", folder, progress))
    except FileUnavailable as exc:
        spec = replace(hubnames.spec_from_name(name), why_not_read=str(exc))
    else:
        if config_json is None:
            raise InputError(f"{name} has no config.json: expected a timm or transformers repository")
        spec = _spec_from_files(name, folder, config_json)
    return remember(spec)


def reread(name: str, progress: Progress | None = None) -> HubSpec:
    """The registered spec; one read from the name alone is read again from config.json (at most once every
    ``RETRY_CONFIG_AFTER_S``)."""
    spec = SPECS[name]
    if spec.read_from == "config.json":
        return spec
    if time.monotonic() - _config_tried.get(name, -1e9) <= RETRY_CONFIG_AFTER_S and not _cached(name, "config.json"):
        return spec  # a file put in the cache since (python -m vit download) is read at once: no network asked
    _config_tried[name] = time.monotonic()  # the page's asks are spaced; a read elsewhere (the CLI, a test) is not one
    return remember(replace(_read(name, progress), display_name=spec.display_name))


def remember(spec: HubSpec) -> HubSpec:
    """Register a spec (its config under its name for validation and cost) and keep it in ``SPECS``."""
    register(spec.name, spec.config, spec.display_name)
    SPECS[spec.name] = spec
    return spec


def _optional(name: str, filename: str, folder: Path | None) -> Path | None:
    try:
        return fetch(name, filename, folder)
    except FileUnavailable:
        return None


def _spec_from_files(name: str, folder: Path | None, config_json: dict) -> HubSpec:
    licence = licence_of(_optional(name, "README.md", folder))
    if "architecture" in config_json:
        spec = timm_spec(name, config_json)
    elif "model_type" in config_json:
        preprocessor = _json(_optional(name, "preprocessor_config.json", folder))
        spec = transformers_spec(name, config_json, preprocessor)
    else:
        raise InputError(f"{name}'s config.json is neither timm's (no 'architecture') nor transformers' "
                         f"(no 'model_type'); supported: {SUPPORTED}")
    licence = licence or spec.licence
    return replace(spec, folder=folder, licence=licence)


def spec_of(name: str) -> HubSpec:
    """The registered spec of a Hub model (``read_spec`` first)."""
    return SPECS[name]
