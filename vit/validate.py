"""One validation layer for every parameter the API, the CLI and the app take.

Each public function takes the raw value as it arrived (an int from Python, a
float from a slider, a string from the command line or a URL) and returns it
normalised, or raises :class:`~vit.errors.InputError` whose message names the
parameter, the allowed range or choices, and the value given, e.g.
``"patch_size must be an integer from 4 to 64, got 3.5"``.

Numbers: ``bool`` is always refused (``True`` is not a patch size); integral
floats (``16.0``) and numeric strings (``"16"``, ``" 16 "``, ``"1e1"``) are
accepted where an integer is expected; NaN and infinities never are.

Indexing conventions (what a person types):

* ``layer`` and ``head`` are **1-based** (layer 1 is the first block, head 1
  the first head) — subtract 1 to index a tensor.

A model with its patch size and depth is validated once, by :func:`setting`,
into a frozen :class:`Setting` that everything further in takes as it is.
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


def _integer(name: str, value: Any, lo: int, hi: int, note: str = "") -> int:
    """Validate an integer parameter in ``lo..hi`` (inclusive).

    Args:
        name: the parameter name used in the message.
        value: an int, an integral float or a numeric string (bool refused).
        lo: smallest allowed value.
        hi: largest allowed value.
        note: extra context put after the range, e.g. ``" (the model has 12 layers)"``.

    Returns:
        The value as a Python ``int``.

    Raises:
        InputError: ``"<name> must be an integer from <lo> to <hi><note>, got <value>"``.
    """
    number = _as_integer(value)
    if number is None or not lo <= number <= hi:
        raise InputError(f"{name} must be an integer from {lo} to {hi}{note}, got {show(value)}")
    return number


def _number(name: str, value: Any, lo: float, hi: float, note: str = "") -> float:
    """Validate a finite real parameter in ``[lo, hi]``.

    Args:
        name: the parameter name used in the message.
        value: an int, a float or a numeric string (bool refused).
        lo: smallest allowed value.
        hi: largest allowed value.
        note: extra context put after the range.

    Returns:
        The value as a Python ``float`` (``-0.0`` becomes ``0.0``).

    Raises:
        InputError: ``"<name> must be a number from <lo> to <hi><note>, got <value>"``.
    """
    number = _as_float(value)
    if number is None or not lo <= number <= hi:
        raise InputError(f"{name} must be a number from {lo:g} to {hi:g}{note}, got {show(value)}")
    return number + 0.0


def _as_float(value: Any) -> float | None:
    """A finite float from an int, float or numeric string; ``None`` if there is none."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError, TypeError):
        return None
    return number if math.isfinite(number) else None


def _as_integer(value: Any) -> int | None:
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
    number = _as_float(value)
    if number is None or not number.is_integer():
        return None
    return int(number)


def choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """Validate a case-insensitive string choice; returns it lower-cased."""
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
    """Validate a model name.

    Args:
        value: a ``PRESETS`` key (``"vit_b_16"``) or a display name
            (``"ViT-B/16"``); case, spaces, ``-``, ``_`` and ``/`` are ignored. Or the repository id
            of a Hub model registered already (``config.register``, done by ``vit.model.hubconfig``),
            exactly, or its display name: an id nobody registered is refused, never looked up, so a
            request cannot make the server download what it names.

    Returns:
        The ``PRESETS`` key, e.g. ``"vit_b_16"``, or the registered repository id.

    Raises:
        InputError: not one of the models.
    """
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


def patch_size(value: Any, name: str | None = None) -> int:
    """Validate a patch size P in pixels: an integer from ``MIN_PATCH_SIZE`` to ``MAX_PATCH_SIZE``.

    Args:
        value: an int, an integral float or a numeric string.
        name: a ``PRESETS`` key; a family with a smaller image allows P up to half its
            image size (``config.patch_size_range``), and the message names the family.

    Returns:
        P as an ``int``.

    Raises:
        InputError: e.g. ``"patch_size must be an integer from 4 to 64, got 3.5"`` or
            ``"patch_size must be an integer from 4 to 32 for ViT-Tiny shapes, got 40"``.
    """
    if name is None:
        return _integer("patch_size", value, MIN_PATCH_SIZE, MAX_PATCH_SIZE)
    lo, hi = patch_size_range(name)
    note = "" if (lo, hi) == (MIN_PATCH_SIZE, MAX_PATCH_SIZE) else f" for {display_name(name).split(',')[0]}"
    return _integer("patch_size", value, lo, hi, note)


def depth(value: Any, num_layers: int) -> int:
    """Validate how many encoder blocks to run: 1 to the model's L.

    Args:
        value: an int, an integral float or a numeric string.
        num_layers: the model's L.

    Returns:
        The depth as an ``int``.

    Raises:
        InputError: outside 1..L; the message names L.
    """
    return _integer("depth", value, 1, num_layers, f" (the model has L={num_layers} layers)")


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
        """What people read: ``"ViT-B/16"``."""
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


_patch_size, _depth = patch_size, depth  # setting()'s arguments have the same names


def setting(model: Any, patch_size: Any = None, depth: Any = None) -> Setting:
    """Validate a model name with its patch size and depth, once, at the edge.

    Args:
        model: a model name as :func:`model_name` takes it (``"vit_b_16"``, ``"ViT-B/16"``).
        patch_size: as :func:`patch_size` takes it; None keeps the checkpoint's own.
        depth: as :func:`depth` takes it; None runs all of the family's layers.

    Returns:
        A frozen :class:`Setting`.

    Raises:
        InputError: from :func:`model_name`, :func:`patch_size` or :func:`depth`, in that order.
    """
    name = model_name(model)
    native = native_config(name)
    return Setting(
        name=name,
        patch_size=native.patch_size if patch_size is None else _patch_size(patch_size, name),
        depth=native.num_layers if depth is None else _depth(depth, native.num_layers),
    )


def top_k(value: Any, num_classes: int = 1000) -> int:
    """Validate how many predictions to show: 1 to ``min(20, num_classes)``.

    Args:
        value: an int, an integral float or a numeric string; None: the default, 5 (or every class of a model
            with fewer: a default never fails).
        num_classes: how many classes the model has.

    Returns:
        k as an ``int``.

    Raises:
        InputError: outside the range.
    """
    if value is None:
        return max(1, min(DEFAULT_TOP_K, num_classes))
    return _integer("top_k", value, 1, min(MAX_TOP_K, num_classes))


def class_index(value: Any, num_classes: int, name: str = "target") -> int:
    """Validate a class index 0..K-1 (the class an explanation or a curve is about)."""
    return _integer(name, value, 0, num_classes - 1)


def steps(value: Any) -> int:
    """Validate the number of steps of a perturbation curve: 1 to 100 (the fractions 0, 1/steps, ..., 1)."""
    return _integer("steps", value, 1, MAX_CURVE_STEPS)


DTYPES = ("auto", "float32", "bfloat16")  # the precisions a model runs in (vit.model.precision)


def dtype(value: Any) -> str:
    """Validate a model's precision: ``"auto"``, ``"float32"`` or ``"bfloat16"`` (any case), or ``torch.float32``
    / ``torch.bfloat16`` themselves; returns the name."""
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":  # torch.float32, without importing torch
        value = str(value).removeprefix("torch.")
        if value not in DTYPES:
            raise InputError(f"dtype must be one of {', '.join(repr(c) for c in DTYPES)}, got torch.{value}")
    return choice("dtype", value, DTYPES)


def head_fusion(value: Any) -> str:
    """Validate how attention rollout fuses heads: ``"mean"``, ``"max"`` or ``"min"``.

    Args:
        value: one of the choices, any case, surrounding spaces ignored.

    Returns:
        The choice, lower-cased.

    Raises:
        InputError: anything else.
    """
    return choice("head_fusion", value, HEAD_FUSIONS)


def discard_ratio(value: Any) -> float:
    """Validate the fraction of weakest attention weights rollout discards: [0, 0.99].

    Args:
        value: an int, a float or a numeric string.

    Returns:
        The ratio as a ``float``.

    Raises:
        InputError: not a finite number in [0, 0.99].
    """
    return _number("discard_ratio", value, 0.0, MAX_DISCARD_RATIO)


def layer(value: Any, depth: int) -> int:
    """Validate a layer (encoder block) number, **1-based**: 1 to ``depth``.

    Args:
        value: an int, an integral float or a numeric string.
        depth: how many blocks were run.

    Returns:
        The 1-based layer number (subtract 1 to index a list of blocks).

    Raises:
        InputError: outside 1..depth.
    """
    return _integer("layer", value, 1, depth, f" (1-based; {depth} layers were run)")


def head(value: Any, num_heads: int) -> int:
    """Validate an attention head number, **1-based**: 1 to h (people count heads from 1).

    Args:
        value: an int, an integral float or a numeric string.
        num_heads: the model's h.

    Returns:
        The 1-based head number (subtract 1 to index the heads dimension).

    Raises:
        InputError: outside 1..h.
    """
    return _integer("head", value, 1, num_heads, f" (1-based; the model has h={num_heads} heads)")


def opacity(value: Any) -> float:
    """Validate an overlay opacity in [0, 1] (0 transparent, 1 opaque).

    Args:
        value: an int, a float or a numeric string.

    Returns:
        The opacity as a ``float``.

    Raises:
        InputError: not a finite number in [0, 1].
    """
    return _number("opacity", value, 0.0, 1.0)


def epochs(value: Any) -> int:
    """Validate how many passes over the drawn training set ``train-shapes`` makes: 1 to 1,000."""
    return _integer("epochs", value, 1, 1000)


def seed(value: Any) -> int:
    """Validate a random seed: 0 to 2^31 - 1."""
    return _integer("seed", value, 0, 2**31 - 1)


def minutes(value: Any) -> float:
    """Validate a training time budget in minutes: 0.1 to 600."""
    return _number("minutes", value, 0.1, 600.0)
