"""Image intake: turn whatever a phone, a browser or a script hands us into an RGB image.

:func:`load_image` accepts a path, raw bytes, a PIL image or a numpy array and
returns a fully decoded ``PIL.Image.Image`` in mode ``"RGB"`` at its original
size (resizing happens later, in the model's preprocessing). Everything a user
can get wrong — a missing file, a PDF renamed ``.jpg``, a truncated download, a
decompression bomb — becomes an :class:`~vit.errors.InputError` with a one-line
message; no Pillow traceback ever reaches the user.

Conversion rules (see :func:`to_rgb`):

* EXIF orientation is applied, so a phone photo comes out the right way up.
* Transparency (``RGBA``, ``LA``, ``La``, ``PA``, ``RGBa``, palette or grey
  images with a ``transparency`` entry) is composited on **white**.
* 16-bit greys (``I;16``, ``I;16B``, ``I;16L``, ``I;16N``) and ``uint16`` arrays
  use the type's range: if any value exceeds 255 the data is taken to span
  0..65535 and divided by 257 (65535 -> 255); if none does, it is 8-bit data
  stored in 16 bits and is kept as is. A dark 16-bit photo stays dark and a
  full-range gradient stays a gradient.
* 32-bit integer (``I``) and float (``F``) images have no conventional range,
  so they are stretched from their own min..max to 0..255 (non-finite values
  are ignored for the range; NaN and -inf become 0, +inf 255). A constant image
  cannot be stretched and keeps its value clipped to 0..255.
* Float numpy arrays must hold values in [0, 1] and are multiplied by 255.
* Every other mode (``1``, ``L``, ``P``, ``CMYK``, ``YCbCr``, ``LAB``, ``HSV``,
  ``RGBX`` ...) goes through Pillow's own ``convert("RGB")``.

Animated GIF/WebP/PNG and multipage TIFF give their first frame.

Limits are read from this module at call time, so tests may monkeypatch them.
We never change Pillow's global settings; in particular truncated files fail
because Pillow's default ``ImageFile.LOAD_TRUNCATED_IMAGES = False`` is left
alone (code that sets it to ``True`` process-wide disables that check).
"""

from __future__ import annotations

import io
import math
import os
import re
from pathlib import Path
from typing import Union

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from vit.errors import InputError

MAX_PIXELS = 64_000_000  # a 48 MP phone photo or a 20,000 x 3,000 panorama fits
# JPEGs larger than this are decoded at 1/2, 1/4 or 1/8 scale (libjpeg's draft mode):
# the model sees at most a few hundred pixels, and a panorama decodes in a fraction of the memory.
JPEG_DRAFT_SIZE = (1024, 1024)
MAX_FILE_BYTES = 20 * 1024 * 1024

ImageSource = Union[str, os.PathLike, bytes, bytearray, memoryview, Image.Image, np.ndarray]

_FORMATS = "not a JPEG/PNG/WebP/GIF/BMP/TIFF file?"
_SIXTEEN_BIT_MODES = ("I;16", "I;16B", "I;16L", "I;16N")
_ALPHA_MODES = ("RGBA", "LA", "PA")
_PREMULTIPLIED = {"La": "LA", "RGBa": "RGBA"}


# --------------------------------------------------------------------------- public


def load_image(source: ImageSource) -> Image.Image:
    """Decode ``source`` into a fully loaded RGB image at its original size.

    Args:
        source: a file path (``str`` or ``os.PathLike``), the file's bytes
            (``bytes``/``bytearray``/``memoryview``), a ``PIL.Image.Image`` (any
            mode; it is not modified) or a numpy array of shape (H, W),
            (H, W, 1), (H, W, 3) or (H, W, 4) with dtype uint8, uint16 or float
            (values in [0, 1]).

    Returns:
        A new ``PIL.Image.Image`` in mode ``"RGB"``, upright per its EXIF
        orientation, with transparency composited on white.

    Raises:
        InputError: the file is missing, a directory, empty, larger than
            ``MAX_FILE_BYTES``, not an image, truncated or corrupt; the image
            has more than ``MAX_PIXELS`` pixels; the array has a wrong shape,
            dtype or value range; or ``source`` is of another type.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return _decode(_read_file(path), label=str(path))
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        _check_byte_count(len(data), label="the uploaded data")
        return _decode(data, label="the uploaded data")
    if isinstance(source, Image.Image):
        return _from_pil(source)
    if isinstance(source, np.ndarray):
        return _from_array(source)
    raise InputError(
        "image must be a file path, the file's bytes, a PIL image or a numpy array, "
        f"got {type(source).__name__}"
    )


def to_rgb(img: Image.Image) -> Image.Image:
    """Convert a decoded image of any mode to RGB (rules in the module docstring).

    Args:
        img: a loaded PIL image; it is not modified.

    Returns:
        A new RGB image of the same size.
    """
    mode = img.mode
    if mode in _SIXTEEN_BIT_MODES:
        return _grey_to_rgb(scale_16bit(np.asarray(img)))
    if mode in ("I", "F"):
        return _grey_to_rgb(stretch_to_uint8(np.asarray(img, dtype=np.float64)))
    if mode in _PREMULTIPLIED:
        img = img.convert(_PREMULTIPLIED[mode])
        mode = img.mode
    if mode in _ALPHA_MODES or "transparency" in img.info:
        return flatten_on_white(img.convert("RGBA"))
    if mode == "RGB":
        return img.copy()
    return img.convert("RGB")


def _grey_to_rgb(grey: np.ndarray) -> Image.Image:
    """An RGB image from a 2-D uint8 array of grey levels."""
    return Image.fromarray(np.ascontiguousarray(grey)).convert("RGB")


def flatten_on_white(rgba: Image.Image) -> Image.Image:
    """Composite an RGBA image over an opaque white background.

    Args:
        rgba: an image in mode ``"RGBA"``.

    Returns:
        The RGB result; fully transparent pixels become (255, 255, 255).
    """
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return Image.alpha_composite(white, rgba).convert("RGB")


def scale_16bit(values: np.ndarray) -> np.ndarray:
    """Map 16-bit samples to uint8 by the type's range.

    If any value exceeds 255 the data spans 0..65535 and is divided by 257
    (rounded); otherwise it is 8-bit data stored in 16 bits and is kept.

    Args:
        values: an unsigned integer array (any byte order) with values 0..65535.

    Returns:
        A uint8 array of the same shape.
    """
    wide = values.astype(np.uint32)
    if wide.size and int(wide.max()) > 255:
        wide = (wide + 128) // 257
    return wide.astype(np.uint8)


def stretch_to_uint8(values: np.ndarray) -> np.ndarray:
    """Stretch numbers from their own finite min..max to 0..255.

    Non-finite values do not count towards the range; NaN and -inf map to 0,
    +inf to 255. A constant array (or one with no finite value) cannot be
    stretched: its value is clipped to 0..255 (NaN gives 0).

    Args:
        values: a numeric array.

    Returns:
        A uint8 array of the same shape.
    """
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    lo = float(finite.min()) if finite.size else 0.0
    hi = float(finite.max()) if finite.size else 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        if hi > lo:
            out = (values - lo) * (255.0 / (hi - lo))
        else:
            out = values.copy()
    out = np.nan_to_num(out, nan=0.0, posinf=255.0, neginf=0.0)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


# --------------------------------------------------------------------------- files and bytes


def _read_file(path: Path) -> bytes:
    """Read a whole image file, refusing what cannot be an image before decoding."""
    try:
        if not path.exists():
            raise InputError(f"image file not found: {path}{_url_hint(str(path))}")
        if path.is_dir():
            raise InputError(f"expected an image file, got a directory: {path}")
        _check_byte_count(path.stat().st_size, label=str(path))
        return path.read_bytes()
    except InputError:
        raise
    except PermissionError:
        raise InputError(f"could not read image file {path}: permission denied") from None
    except (OSError, ValueError) as err:  # e.g. a name too long or with a NUL byte
        reason = getattr(err, "strerror", None) or str(err)
        raise InputError(f"could not read image file {path}: {reason}") from None


def _url_hint(text: str) -> str:
    """A hint for people who pass a web address as a path."""
    if text.lower().startswith(("http:/", "https:/", "www.")):
        return " (web addresses are not fetched; download the image and pass the file)"
    return ""


def _check_byte_count(size: int, label: str) -> None:
    """Refuse empty and oversized inputs (sizes in MiB, the size rounded up)."""
    if size == 0:
        raise InputError(f"image is empty (0 bytes): {label}")
    if size > MAX_FILE_BYTES:
        shown = math.ceil(size / 2**20 * 10) / 10
        raise InputError(
            f"{label} is {shown:.1f} MB, more than the limit of {MAX_FILE_BYTES / 2**20:g} MB"
        )


def _decode(data: bytes, label: str) -> Image.Image:
    """Open, size-check, fully load, orient and convert encoded image bytes.

    The pixel limit is checked by us, from the header, before anything is decoded: no
    ``warnings.catch_warnings()`` (process-global, so not safe while other requests
    decode). Pillow's own bomb check still raises above twice its limit; between its
    limit and that, it only warns, and :data:`MAX_PIXELS`, which is lower, has refused.
    """
    try:
        img = Image.open(io.BytesIO(data))
    except UnidentifiedImageError:
        raise InputError(_not_an_image_message(label, data[:64])) from None
    except Image.DecompressionBombError as err:
        raise InputError(_bomb_message_from_pillow(str(err))) from None
    except Exception as err:  # noqa: BLE001 - any decoder failure is a bad file
        raise InputError(_corrupt_message(label, err)) from None
    with img:
        _check_pixel_count(*img.size)
        try:
            if img.format == "JPEG":
                img.draft(None, JPEG_DRAFT_SIZE)
            img.load()
        except Image.DecompressionBombError as err:
            raise InputError(_bomb_message_from_pillow(str(err))) from None
        except Exception as err:  # noqa: BLE001 - truncated or corrupt data
            raise InputError(_corrupt_message(label, err)) from None
        return to_rgb(_upright(img))


def _not_an_image_message(label: str, head: bytes) -> str:
    """The message for bytes Pillow does not recognise, with a hint where we can guess."""
    hint = _guess_non_image(head)
    found = f"; it looks like {hint}" if hint else ""
    return f"could not read {label} as an image ({_FORMATS}){found}"


def _guess_non_image(head: bytes) -> str | None:
    """Name a few common things people upload instead of a photo, from the first bytes."""
    text = head.lstrip().lower()
    if head.startswith(b"%PDF"):
        return "a PDF document"
    if head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"hevc", b"mif1", b"msf1"):
        return "a HEIC photo (iPhone); export it as JPEG"
    if text.startswith((b"<svg", b"<?xml")) and b"<svg" in text:
        return "an SVG drawing; export it as PNG"
    if text.startswith((b"<!doctype html", b"<html")):
        return "a web page (HTML), not the picture itself"
    if head.startswith(b"PK\x03\x04"):
        return "a ZIP archive or Office document"
    return None


def _corrupt_message(label: str, err: BaseException) -> str:
    """The message for a file Pillow recognised but could not decode."""
    reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return f"could not decode {label}: the file is truncated or corrupt ({reason})"


# --------------------------------------------------------------------------- limits


def _check_pixel_count(width: int, height: int) -> None:
    """Refuse images larger than ``MAX_PIXELS`` before their pixels are decoded."""
    pixels = width * height
    if pixels > MAX_PIXELS:
        raise InputError(
            f"image is {width} x {height} = {pixels:,} pixels, more than the limit of "
            f"{MAX_PIXELS:,} pixels"
        )


def _bomb_message_from_pillow(pillow_message: str) -> str:
    """Pillow refused first (its own limit); it reports the pixel count but not W x H."""
    found = re.search(r"(\d+) pixels", pillow_message)
    size = f"{int(found.group(1)):,} pixels" if found else "too many pixels"
    return (
        f"image is {size}, more than the limit of {MAX_PIXELS:,} pixels "
        "(refused as a possible decompression bomb)"
    )


# --------------------------------------------------------------------------- in-memory inputs


def _upright(img: Image.Image) -> Image.Image:
    """Apply the EXIF orientation; a broken EXIF block is ignored, not fatal."""
    try:
        return ImageOps.exif_transpose(img)
    except Exception:  # noqa: BLE001 - bad EXIF should not cost the user their photo
        return img


def _from_pil(img: Image.Image) -> Image.Image:
    """Convert a caller's PIL image (possibly lazily opened) without modifying it."""
    _check_pixel_count(*img.size)
    if img.width == 0 or img.height == 0:
        raise InputError(f"image is empty ({img.width} x {img.height} pixels)")
    try:
        img.load()
    except Exception as err:  # noqa: BLE001 - a lazily opened, truncated file
        raise InputError(_corrupt_message("the image", err)) from None
    return to_rgb(_upright(img))


def _from_array(array: np.ndarray) -> Image.Image:
    """Convert an (H, W), (H, W, 1), (H, W, 3) or (H, W, 4) array to RGB."""
    shape = array.shape
    if array.ndim == 3 and shape[2] == 1:
        array = array[:, :, 0]
    if not (array.ndim == 2 or (array.ndim == 3 and array.shape[2] in (3, 4))):
        raise InputError(
            f"image array must have shape (H, W), (H, W, 3) or (H, W, 4), got {shape}"
        )
    if shape[0] == 0 or shape[1] == 0:
        raise InputError(f"image array is empty, got shape {shape}")
    _check_pixel_count(shape[1], shape[0])
    img = Image.fromarray(np.ascontiguousarray(_array_to_uint8(array)))  # L, RGB or RGBA
    return flatten_on_white(img) if img.mode == "RGBA" else img.convert("RGB")


def _array_to_uint8(array: np.ndarray) -> np.ndarray:
    """uint8 kept, uint16 scaled by :func:`scale_16bit`, float in [0, 1] times 255."""
    if array.dtype == np.uint8:
        return array
    if array.dtype == np.uint16:
        return scale_16bit(array)
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)):
            raise InputError("float image array must be finite, got NaN or infinity")
        lo, hi = float(array.min()), float(array.max())
        if lo < 0.0 or hi > 1.0:
            raise InputError(
                f"float image array must have values in [0, 1], got values from {lo:g} to {hi:g}"
            )
        return np.rint(array.astype(np.float64) * 255.0).astype(np.uint8)
    raise InputError(
        f"image array must have dtype uint8, uint16 or float, got {array.dtype}"
    )
