"""One validation layer for every parameter the API, the CLI and the app take: a value as it arrived, normalised,
or an InputError naming the parameter, the range and the value. ``bool`` is never a number; NaN never. A model,
patch size and depth are validated once, by :func:`setting`, into a frozen :class:`Setting`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

from vit.config import (
    DISPLAY_NAMES,
    HUB_DISPLAY_NAMES,
    HUB_MODELS,
    MAX_PATCH_SIZE,
    MIN_PATCH_SIZE,
    PRESETS,
    ViTConfig,
    display_name,
    grid_for_patch_size,
    native_config,
    patch_size_range,
)
from vit.errors import InputError

HEAD_FUSIONS = ("mean", "max", "min")  # how attention rollout and the fused maps combine the heads
MAX_TOP_K = 20
DEFAULT_TOP_K = 5  # top_k when none is given (every class of a model with fewer)
MAX_CURVE_STEPS = 100  # perturbation curves: fractions 0, 1/steps, ..., 1
MAX_DISCARD_RATIO = 0.99
_SHOWN_CHARS = 60  # longer values are cut in messages


# --------------------------------------------------------------------------- shared helpers


def show(value: Any) -> str:
    """The value as messages quote it: its ``repr``, cut to a readable length."""
    text = repr(value)
    if len(text) > _SHOWN_CHARS:
        text = text[: _SHOWN_CHARS - 3] + "..."
    return text


def integer(name: str, value: Any, lo: int, hi: int, note: str = "", clamp: bool = False,
            default: int | None = None) -> int:
    """An integer in ``lo..hi`` (None: ``default``). With ``clamp`` (a page's control) a non-number is ``default``
    and a number is rounded into the range, as a browser's number box shows it: what runs is what it shows."""
    if value is None and default is not None:
        return default
    if clamp:
        number = _control(value)
        return default if number is None else int(min(max(round(number), lo), hi))
    number = as_integer(value)
    if number is None or not lo <= number <= hi:
        raise InputError(f"{name} must be an integer from {lo} to {hi}{note}, got {show(value)}")
    return number


def number(name: str, value: Any, lo: float, hi: float, note: str = "", clamp: bool = False,
           default: float | None = None) -> float:
    """A finite real in ``[lo, hi]`` (``-0.0`` becomes ``0.0``); ``clamp`` and ``default`` as :func:`integer`'s."""
    if clamp:
        got = _control(value)
        return default if got is None else min(max(got, lo), hi)
    got = _as_float(value)
    if got is None or not lo <= got <= hi:
        raise InputError(f"{name} must be a number from {lo:g} to {hi:g}{note}, got {show(value)}")
    return got + 0.0


def _control(value: Any) -> float | None:
    """A control's number; None for a non-number or NaN (the control's default then); an InputError for one no
    control can show (``1e999``, ``"inf"``, a 400-digit integer)."""
    try:
        got = float(value)
    except (TypeError, ValueError):
        return None
    except OverflowError:  # an int past a float's range
        got = math.inf
    if math.isinf(got):
        raise InputError(key="refusal-not-finite", value=show(value))
    return None if math.isnan(got) else got


def _as_float(value: Any) -> float | None:
    """A finite float from an int, float or numeric string; ``None`` if there is none."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        return None
    try:
        got = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError, TypeError):
        return None
    return got if math.isfinite(got) else None


def as_integer(value: Any) -> int | None:
    """An int from an int, an integral float or a numeric string; ``None`` if there is none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass  # maybe "16.0" or "1e1"
    got = _as_float(value)
    if got is None or not got.is_integer():
        return None
    return int(got)


def choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """A case-insensitive string choice, lower-cased."""
    if isinstance(value, str) and value.strip().lower() in choices:
        return value.strip().lower()
    allowed = ", ".join(repr(c) for c in choices)
    raise InputError(f"{name} must be one of {allowed}, got {show(value)}")


# --------------------------------------------------------------------------- parameters


def _squash(name: str) -> str:
    """``"ViT-B/16"``, ``"vit_b_16"`` and ``"vit b 16"`` all become ``"vitb16"``."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


_MODEL_ALIASES: dict[str, str] = {
    **{_squash(DISPLAY_NAMES[key]): key for key in PRESETS},  # "ViT-Tiny shapes, trained here"
    **{_squash(key): key for key in PRESETS},
}


def model_name(value: Any) -> str:
    """A ``PRESETS`` key or registered Hub id from itself or its display name. An unregistered id is refused, never
    looked up: a request cannot make the server download what it names."""
    if isinstance(value, str) and _squash(value) in _MODEL_ALIASES:
        return _MODEL_ALIASES[_squash(value)]
    if isinstance(value, str) and value.strip() in HUB_MODELS:
        return value.strip()
    hub = {_squash(shown): key for key, shown in HUB_DISPLAY_NAMES.items()}
    if isinstance(value, str) and _squash(value) in hub:
        return hub[_squash(value)]
    names = ", ".join([f"{key} ({DISPLAY_NAMES[key]})" for key in PRESETS]
                      + [f"{key} ({shown})" for key, shown in HUB_DISPLAY_NAMES.items()])
    raise InputError(f"model must be one of {names}, got {show(value)}")  # the API, app and CLI call it `model`


def _patch_note(name: str | None) -> str:
    """A family with a smaller image allows P up to half its image size: the message names the family."""
    if name is None or patch_size_range(name) == (MIN_PATCH_SIZE, MAX_PATCH_SIZE):
        return ""
    return f" for {display_name(name).split(',')[0]}"


def patch_size(value: Any, name: str | None = None) -> int:
    """A patch size P in pixels: 4 to 64, or to half the image size of the family ``name`` (a ``PRESETS`` key)."""
    lo, hi = (MIN_PATCH_SIZE, MAX_PATCH_SIZE) if name is None else patch_size_range(name)
    return integer("patch_size", value, lo, hi, _patch_note(name))


def depth(value: Any, num_layers: int) -> int:
    """How many encoder blocks to run: 1 to the model's L."""
    return integer("depth", value, 1, num_layers, f" (the model has L={num_layers} layers)")


@dataclass(frozen=True)
class Setting:
    """A model family with the patch size and depth to run it at, all three valid."""

    name: str  # a PRESETS key: "vit_b_16", or a registered Hub model's id
    patch_size: int  # P
    depth: int  # encoder layers run, 1..L

    @property
    def native(self) -> ViTConfig:
        """The family's own config, as its checkpoint was trained."""
        return native_config(self.name)

    @property
    def display_name(self) -> str:
        return display_name(self.name)

    @property
    def grid(self) -> int:
        """Patches per side at this patch size: round(native resolution / P)."""
        return grid_for_patch_size(self.native.image_size, self.patch_size)

    @property
    def config(self) -> ViTConfig:
        """The config of the model this setting builds: input grid x P, the first ``depth`` layers."""
        return self.native.with_(patch_size=self.patch_size, image_size=self.grid * self.patch_size,
                                 num_layers=self.depth)


def setting(model: Any, patch_size: Any = None, depth: Any = None, clamp: bool = False) -> Setting:
    """A model with its patch size and depth (None: the checkpoint's P, all layers), validated once, at the edge.
    ``clamp``: the page's controls (:func:`integer`); the API and the CLI are strict."""
    name = model_name(model)
    native, (lo, hi) = native_config(name), patch_size_range(name)
    L = native.num_layers
    return Setting(
        name=name,
        patch_size=integer("patch_size", patch_size, lo, hi, _patch_note(name), clamp, native.patch_size),
        depth=integer("depth", depth, 1, L, f" (the model has L={L} layers)", clamp, L),
    )


def top_k(value: Any, num_classes: int = 1000, clamp: bool = False) -> int:
    """How many predictions to show: 1 to ``min(20, num_classes)``; None is 5 (or every class of a model with
    fewer: a default never fails)."""
    return integer("top_k", value, 1, min(MAX_TOP_K, num_classes), clamp=clamp,
                   default=max(1, min(DEFAULT_TOP_K, num_classes)))


def class_index(value: Any, num_classes: int, name: str = "target") -> int:
    """A class index 0..K-1 (the class an explanation or a curve is about)."""
    return integer(name, value, 0, num_classes - 1)


def steps(value: Any) -> int:
    """The number of steps of a perturbation curve: 1 to 100 (the fractions 0, 1/steps, ..., 1)."""
    return integer("steps", value, 1, MAX_CURVE_STEPS)


DTYPES = ("auto", "float32", "bfloat16")  # the precisions a model runs in (vit.model.precision)


def dtype(value: Any) -> str:
    """A model's precision's name, from itself (any case) or ``torch.float32`` / ``torch.bfloat16``."""
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":  # torch.float32, without importing torch
        value = str(value).removeprefix("torch.")
        if value not in DTYPES:
            raise InputError(f"dtype must be one of {', '.join(repr(c) for c in DTYPES)}, got torch.{value}")
    return choice("dtype", value, DTYPES)


def head_fusion(value: Any) -> str:
    """How attention rollout fuses heads: ``"mean"``, ``"max"`` or ``"min"``."""
    return choice("head_fusion", value, HEAD_FUSIONS)


def discard_ratio(value: Any, clamp: bool = False) -> float:
    """The fraction of weakest attention weights rollout discards: [0, 0.99]; not a number, clamped, is 0."""
    return number("discard_ratio", value, 0.0, MAX_DISCARD_RATIO, clamp=clamp, default=0.0)


def layer(value: Any, depth: int) -> int:
    return integer("layer", value, 1, depth, f" (1-based; {depth} layers were run)")


def head(value: Any, num_heads: int) -> int:
    return integer("head", value, 1, num_heads, f" (1-based; the model has h={num_heads} heads)")


def opacity(value: Any, clamp: bool = False, default: float | None = None) -> float:
    """An overlay's opacity in [0, 1] (0 transparent, 1 opaque)."""
    return number("opacity", value, 0.0, 1.0, clamp=clamp, default=default)


def epochs(value: Any) -> int:
    """How many passes over the drawn training set ``train-shapes`` makes: 1 to 1,000."""
    return integer("epochs", value, 1, 1000)


def seed(value: Any) -> int:
    return integer("seed", value, 0, 2**31 - 1)


def minutes(value: Any) -> float:
    return number("minutes", value, 0.1, 600.0)
