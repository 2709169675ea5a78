"""Image intake: whatever a phone, a browser or a script hands us becomes an upright RGB ``PIL.Image``.

Everything a user can get wrong is an :class:`~vit.errors.InputError` in one sentence; a decode is bounded from the
header before it starts. The formats and conversion rules: docs/reliability.md, "Image intake"."""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from vit.errors import InputError

MAX_PIXELS = 64_000_000  # a 48 MP phone photo or a 20,000 x 3,000 panorama fits
# JPEGs larger than this are decoded at 1/2, 1/4 or 1/8 scale (libjpeg's draft mode):
# the model sees at most a few hundred pixels, and a panorama decodes in a fraction of the memory.
JPEG_DRAFT_SIZE = (1024, 1024)
# Other formats are box-reduced by an integer factor after loading, keeping the shorter side at least this
# long: the models resize the shorter side to at most ~1024 px (ViT-H/14 at 518 px, the largest patch sizes).
MODEL_SIDE = 1024
MAX_FILE_BYTES = 20 * 1024 * 1024
# Every progressive scan is a pass over the whole image (libjpeg's default has ~10): refused from the markers.
MAX_JPEG_SCANS = 100
# ... and a large one fewer: scans x pixels at most this.
MAX_SCAN_PIXELS = 1_000_000_000
# The most memory one decode may hold at its peak (decode_cost); the figures: docs/reliability.md.
MAX_DECODE_BYTES = 400 * 2**20
# The most pixels a decoder may produce (a JPEG's draft is smaller): bounds a decode's time.
MAX_DECODED_PIXELS = 36_000_000

ImageSource = str | os.PathLike | bytes | bytearray | memoryview | Image.Image | np.ndarray

# What Image.open may try: the README's formats. "JPEG" also opens MPO (Pillow's name for many phone JPEGs).
OPEN_FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "BMP", "TIFF")
_SIXTEEN_BIT_MODES = ("I;16", "I;16B", "I;16L", "I;16N")
_ALPHA_MODES = ("RGBA", "LA", "PA")
_PREMULTIPLIED = {"La": "LA", "RGBa": "RGBA"}
_BAND_BYTES = 4 * 2**20  # the rows converted at a time: the only full-width temporaries


# --------------------------------------------------------------------------- public


@dataclass(frozen=True)
class DecodeCost:
    """What decoding a file will take, known from its header before any pixel is decoded."""

    format: str
    size: tuple[int, int]
    mode: str
    decoded_size: tuple[int, int]  # what the decoder produces (a JPEG's draft: 1/2, 1/4 or 1/8 of size)
    factor: int  # the box reduction after loading
    output_size: tuple[int, int]  # the RGB result, before the EXIF rotation
    peak_bytes: int  # decoder, decoded image, one band's conversion, result


def load_image(source: ImageSource) -> Image.Image:
    """Decode ``source`` into a new RGB image, upright, transparency on white; an array is (H, W), (H, W, 1),
    (H, W, 3) or (H, W, 4), uint8, uint16 or float in [0, 1]. A file over twice :data:`MODEL_SIDE` is shrunk."""
    if isinstance(source, Image.Image):
        return _from_pil(source)
    if isinstance(source, np.ndarray):
        return _from_array(source)
    data, label = read_encoded(source)
    with PendingDecode(data, label) as pending:
        return pending.decode()


def read_encoded(source) -> tuple[bytes, str]:
    """The encoded bytes of a path or bytes source, and the label its messages use (refusals as :func:`load_image`)."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return _read_file(path), str(path)
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        _check_byte_count(len(data), label="the uploaded data")
        return data, "the uploaded data"
    raise InputError(
        "image must be a file path, the file's bytes, a PIL image or a numpy array, "
        f"got {type(source).__name__}"
    )


def decode_cost(data: bytes, label: str = "the uploaded data") -> DecodeCost:
    """What decoding these bytes will cost, from the header alone (refusing as :func:`load_image` does)."""
    with PendingDecode(data, label) as pending:
        return pending.cost


class PendingDecode:
    """An image opened from its header: ``with PendingDecode(data, label) as p:`` refuses what the header can,
    ``p.cost`` says what decoding will take, ``p.decode()`` does it (vit.serve.decode admits between the two)."""

    def __init__(self, data: bytes, label: str):
        self._label = label
        self._img, size = _open_header(data, label)
        try:
            self.cost = _cost_of(self._img, size, data, _header_orientation(self._img))
            _check_decode_bytes(self.cost, label)
            _check_decoded_pixels(self.cost, label)
        except BaseException:
            self._img.close()
            raise

    def decode(self) -> Image.Image:
        """Decode, shrink and convert: a new RGB image, upright."""
        _load(self._img, self._label)
        rgb = _shrunk_rgb(self._img, self.cost.factor)
        return _apply_orientation(rgb, _orientation(self._img))

    def close(self) -> None:
        self._img.close()

    def __enter__(self) -> PendingDecode:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def to_rgb(img: Image.Image) -> Image.Image:
    """A new RGB image of the same size from a loaded image of any mode (the rules: docs/reliability.md)."""
    return _shrunk_rgb(img, 1)


def flatten_on_white(rgba: Image.Image) -> Image.Image:
    """An RGBA image composited over opaque white, as RGB."""
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return Image.alpha_composite(white, rgba).convert("RGB")


def scale_16bit(values: np.ndarray, wide: bool | None = None) -> np.ndarray:
    """16-bit samples to uint8 by the type's range: divided by 257 if the image has a value over 255 (``wide``; None:
    decide from ``values``, which may be one band), else 8-bit data stored in 16 bits, kept."""
    if wide is None:
        wide = bool(values.size) and int(values.max()) > 255
    if not wide:
        return values.astype(np.uint8)
    return ((values.astype(np.uint32) + 128) // 257).astype(np.uint8)


def stretch_to_uint8(values: np.ndarray, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """Numbers stretched from their finite min..max (or ``lo``..``hi``: the whole image's, :func:`finite_range`) to
    uint8, in float32. NaN and -inf give 0, +inf 255; a constant array is clipped to 0..255."""
    if lo is None or hi is None:
        lo, hi = finite_range(values)
    out = np.array(values, dtype=np.float32)  # a copy: the caller's array is not changed
    with np.errstate(invalid="ignore", over="ignore"):
        if hi > lo:
            scale = 255.0 / (hi - lo)
            out *= np.float32(scale)  # scaled before the shift: no overflow for values near float32's limits
            out -= np.float32(lo * scale)
        np.clip(out, 0, 255, out=out)  # -inf -> 0, +inf -> 255; NaN stays NaN
        np.rint(out, out=out)
    out[np.isnan(out)] = 0
    return out.astype(np.uint8)


def finite_range(values: np.ndarray) -> tuple[float, float]:
    """(min, max) of the finite values, (0, 0) if there is none."""
    values = np.asarray(values)
    if np.issubdtype(values.dtype, np.floating):
        values = values[np.isfinite(values)]
    if not values.size:
        return 0.0, 0.0
    return float(values.min()), float(values.max())


# --------------------------------------------------------------------------- files and bytes


def _read_file(path: Path) -> bytes:
    """Read a whole image file, refusing what cannot be an image before decoding."""
    try:
        if not path.exists():
            if path.is_symlink():
                raise InputError(f"image file {path} is a link that leads nowhere (a loop or a missing target)")
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
        raise InputError(key="refusal-empty", label=label)
    if size > MAX_FILE_BYTES:
        shown = math.ceil(size / 2**20 * 10) / 10
        raise InputError(key="refusal-too-large", label=label, size=f"{shown:.1f}", limit=f"{MAX_FILE_BYTES / 2**20:g}")


def _open_header(data: bytes, label: str) -> tuple[Image.Image, tuple[int, int]]:
    """Open the header only, refuse what it can, set the JPEG draft. The pixel limit is ours: Pillow's warning
    cannot be caught per request (``warnings.catch_warnings()`` is process-global)."""
    try:
        img = Image.open(io.BytesIO(data), formats=OPEN_FORMATS)
    except UnidentifiedImageError:
        raise _unopened(label, data) from None
    except Image.DecompressionBombError as err:
        raise _bomb_from_pillow(str(err)) from None
    except Exception as err:  # noqa: BLE001 - any decoder failure is a bad file
        raise _corrupt(label, err) from None
    size = img.size
    try:
        _check_pixel_count(*size)
        if img.format in ("JPEG", "MPO"):
            _check_scan_count(data, size, label)
            img.draft(None, JPEG_DRAFT_SIZE)
    except BaseException:
        img.close()
        raise
    return img, size


def _load(img: Image.Image, label: str) -> None:
    """Decode the pixels (the first frame), every decoder failure as one sentence."""
    try:
        img.load()
    except Image.DecompressionBombError as err:
        raise _bomb_from_pillow(str(err)) from None
    except Exception as err:  # noqa: BLE001 - truncated or corrupt data
        raise _corrupt(label, err) from None


def _unopened(label: str, data: bytes) -> InputError:
    """Not one of our formats: named where Pillow knows it, else the hints of :func:`_not_an_image`."""
    hint = _guess_non_image(data[:64])
    other = None if hint else sniff_format(data)
    if other is None:
        return _not_an_image(label, data[:64])
    return InputError(key="refusal-format", label=label, fmt=format_name(other))


def _not_an_image(label: str, head: bytes) -> InputError:
    """The refusal of bytes Pillow does not recognise, with a hint where we can guess."""
    hint = _guess_non_image(head)
    if hint:
        return InputError(key="refusal-not-image-like", label=label, what=hint)
    return InputError(key="refusal-not-image", label=label)


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


def _corrupt(label: str, err: BaseException) -> InputError:
    """The refusal of a file Pillow recognised but could not decode."""
    reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return InputError(key="refusal-corrupt", label=label, reason=reason)


# --------------------------------------------------------------------------- limits


def _check_pixel_count(width: int, height: int) -> None:
    """Refuse images larger than ``MAX_PIXELS`` before their pixels are decoded."""
    pixels = width * height
    if pixels > MAX_PIXELS:
        raise InputError(key="refusal-pixels", w=width, h=height, pixels=f"{pixels:,}", limit=f"{MAX_PIXELS:,}")


def _bomb_from_pillow(pillow_message: str) -> InputError:
    """Pillow refused first (its own limit); it reports the pixel count but not W x H."""
    found = re.search(r"(\d+) pixels", pillow_message)
    size = f"{int(found.group(1)):,} pixels" if found else "too many pixels"
    return InputError(key="refusal-bomb", size=size, limit=f"{MAX_PIXELS:,}")


# --------------------------------------------------------------------------- formats we do not open

# Pillow's names -> the words a student knows; others are named by Pillow's own description.
_FORMAT_NAMES = {
    "JPEG2000": "JPEG 2000", "ICO": "Windows icon (ICO)", "CUR": "Windows cursor (CUR)", "TGA": "Targa (TGA)",
    "PCX": "PCX", "SGI": "SGI", "QOI": "QOI", "DDS": "DDS texture", "IM": "IM", "SPIDER": "SPIDER",
    "PPM": "Netpbm (PPM, PGM, PBM)", "XBM": "X11 bitmap (XBM)", "AVIF": "AVIF", "EPS": "PostScript (EPS)",
    "PSD": "Photoshop (PSD)", "ICNS": "Mac icon (ICNS)", "DIB": "headerless BMP (DIB)",
    # ours, for the messages that name an accepted file's format
    "JPEG": "JPEG", "MPO": "JPEG (MPO)", "PNG": "PNG", "WEBP": "WebP", "GIF": "GIF", "BMP": "BMP", "TIFF": "TIFF",
}


# Their openers decode pixels (ICO loads at open, AVIF and BLP start their decoder): named by signature alone.
_NAMED_BY_SIGNATURE = ("ICO", "AVIF", "BLP", "FLI")


def sniff_format(data: bytes) -> str | None:
    """Pillow's name for a format we do not open, from its header only: a signature match is confirmed by a lazy
    open with that plugin alone (except :data:`_NAMED_BY_SIGNATURE`)."""
    Image.init()
    prefix = data[:16]
    signed = [f for f in Image.ID if f not in OPEN_FORMATS and Image.OPEN[f][1] is not None
              and _accepts(Image.OPEN[f][1], prefix)]
    unsigned = [f for f in Image.ID if f not in OPEN_FORMATS and Image.OPEN[f][1] is None]
    for fmt in signed + unsigned:
        if fmt in _NAMED_BY_SIGNATURE or _opens_lazily_as(data, fmt):
            return fmt
    return signed[0] if signed else None


def _opens_lazily_as(data: bytes, fmt: str) -> bool:
    try:
        with Image.open(io.BytesIO(data), formats=[fmt]):
            return True
    except Exception:  # noqa: BLE001 - not this format
        return False


def _accepts(accept: Callable[[bytes], object], prefix: bytes) -> bool:
    try:
        return accept(prefix) is True
    except Exception:  # noqa: BLE001 - a plugin's signature test failing means "not mine"
        return False


def format_name(fmt: str) -> str:
    """A format's name as a student knows it, e.g. ``JPEG2000`` -> ``"JPEG 2000"``."""
    if fmt in _FORMAT_NAMES:
        return _FORMAT_NAMES[fmt]
    description = getattr(Image.OPEN.get(fmt, (None,))[0], "format_description", None)
    return f"{description} ({fmt})" if description else fmt


# --------------------------------------------------------------------------- progressive JPEG scans

_NEXT_MARKER = re.compile(rb"\xff[^\x00\xd0-\xd7]")  # in entropy-coded data: not a stuffed byte, not RSTn
_STANDALONE = {0x01, *range(0xD0, 0xD8)}  # TEM and RSTn carry no length


def count_jpeg_scans(data: bytes, limit: int) -> int:
    """The scans (SOS markers) of a JPEG's first image, from markers and lengths only; ``limit + 1`` past ``limit``."""
    if not data.startswith(b"\xff\xd8"):
        return 0
    scans, pos, end = 0, 2, len(data)
    while pos + 1 < end:
        if data[pos] != 0xFF or data[pos + 1] == 0xFF:  # garbage or fill bytes: on to the next marker
            found = _NEXT_MARKER.search(data, pos + 1 if data[pos] == 0xFF else pos)
            if found is None:
                break
            pos = found.start()
            continue
        marker = data[pos + 1]
        if marker == 0xD9:  # EOI
            break
        if marker in _STANDALONE:
            pos += 2
            continue
        if pos + 4 > end:
            break
        pos += 2 + int.from_bytes(data[pos + 2:pos + 4], "big")
        if marker == 0xDA:
            scans += 1
            if scans > limit:
                return scans
            found = _NEXT_MARKER.search(data, pos)
            if found is None:
                break
            pos = found.start()
    return scans


def _check_decoded_pixels(cost: DecodeCost, label: str) -> None:
    """Refuse, from the header, a decode that would produce more than ``MAX_DECODED_PIXELS``: it takes seconds."""
    w, h = cost.decoded_size
    if w * h > MAX_DECODED_PIXELS:
        raise InputError(key="refusal-decoded-pixels", label=label, w=w, h=h, fmt=format_name(cost.format),
                         limit=f"{MAX_DECODED_PIXELS:,}", most=f"{MAX_DECODED_PIXELS:,}")


def _check_decode_bytes(cost: DecodeCost, label: str) -> None:
    """Refuse, from the header, a decode that would hold more than ``MAX_DECODE_BYTES``."""
    if cost.peak_bytes > MAX_DECODE_BYTES:
        w, h = cost.size
        raise InputError(key="refusal-decode-memory", label=label, w=w, h=h, fmt=format_name(cost.format),
                         need=f"{cost.peak_bytes / 1e9:.1f}", limit=f"{MAX_DECODE_BYTES / 1e9:.1f}")


def _check_scan_count(data: bytes, size: tuple[int, int], label: str) -> None:
    """Refuse a JPEG with more than ``MAX_JPEG_SCANS`` scans or, if large, ``MAX_SCAN_PIXELS`` over all scans."""
    w, h = size
    allowed = max(1, min(MAX_JPEG_SCANS, MAX_SCAN_PIXELS // max(1, w * h)))
    if count_jpeg_scans(data, allowed) <= allowed:
        return
    if allowed == MAX_JPEG_SCANS:
        raise InputError(key="refusal-scans", label=label, allowed=allowed)
    raise InputError(key="refusal-scans-size", label=label, w=w, h=h, allowed=allowed)


# --------------------------------------------------------------------------- the cost of a decode


def pixel_bytes(mode: str) -> int:
    """Bytes per pixel Pillow stores for a mode: 1 for ``1``/``L``/``P``, 2 for ``I;16*``, else 4 (RGB too)."""
    if mode in ("1", "L", "P"):
        return 1
    return 2 if mode.startswith("I;16") else 4


def shrink_factor(width: int, height: int) -> int:
    """The integer box reduction that keeps the shorter side at least :data:`MODEL_SIDE` (1: none)."""
    return max(1, min(width, height) // MODEL_SIDE)


def _cost_of(img: Image.Image, size: tuple[int, int], data: bytes, orientation: int) -> DecodeCost:
    """The peak of a decode: the decoder's own buffers, the decoded image, one band's conversion, the result."""
    w, h = img.size  # after the JPEG draft
    factor = shrink_factor(w, h)
    out_w, out_h = -(-w // factor), -(-h // factor)
    out = out_w * out_h * 4 * (2 if orientation != 1 else 1)  # RGB is stored in 4 bytes; a rotation copies it
    band = min(h, _band_rows(w, factor)) * w * 16  # the band's crop, float32, uint8 and RGB(A) copies
    peak = w * h * pixel_bytes(img.mode) + _decoder_bytes(img, size, data) + band + out
    return DecodeCost(format=img.format, size=size, mode=img.mode, decoded_size=(w, h),
                      factor=factor, output_size=(out_w, out_h), peak_bytes=int(peak))


def _decoder_bytes(img: Image.Image, size: tuple[int, int], data: bytes) -> int:
    """What the format's decoder holds besides the decoded image, from its header."""
    w, h = img.size
    if img.format == "WEBP":
        return 3 * w * h * 4  # libwebp's canvas, its copy of the previous frame, the frame Pillow copies out
    if img.format in ("JPEG", "MPO") and img.info.get("progressive"):
        return _jpeg_coefficient_bytes(img, *size)
    if img.format == "TIFF":
        return _tiff_buffer_bytes(img) + len(data)  # libtiff reads the file, then a strip or tile at a time
    return 0


def _jpeg_coefficient_bytes(img: Image.Image, w: int, h: int) -> int:
    """A progressive JPEG keeps every DCT coefficient (2 bytes each) at full size until the last scan."""
    layers = getattr(img, "layer", None) or [("", 1, 1, 0)] * len(img.getbands())
    h_max = max(layer[1] for layer in layers) or 1
    v_max = max(layer[2] for layer in layers) or 1
    blocks = sum(math.ceil(w * layer[1] / h_max / 8) * math.ceil(h * layer[2] / v_max / 8) for layer in layers)
    return blocks * 64 * 2


def _tiff_buffer_bytes(img: Image.Image) -> int:
    """libtiff decodes a strip (RowsPerStrip rows) or a tile at a time into one buffer."""
    w, h = img.size
    tags = getattr(img, "tag_v2", {})
    rows = min(h, int(tags.get(278, h) or h))  # RowsPerStrip
    if 322 in tags and 323 in tags:  # TileWidth, TileLength
        w, rows = int(tags[322]), int(tags[323])
    return w * rows * pixel_bytes(img.mode)


# --------------------------------------------------------------------------- shrink and convert, band by band


def _band_rows(width: int, factor: int) -> int:
    """Rows converted at a time: about ``_BAND_BYTES`` of RGB, a multiple of the reduction factor."""
    rows = max(1, _BAND_BYTES // max(1, width * 4))
    return max(factor, rows // factor * factor)


def _shrunk_rgb(img: Image.Image, factor: int) -> Image.Image:
    """A new RGB image, ``factor`` times smaller, converted a band of rows at a time (no full-size copy).
    ``reduce`` averages RGBA premultiplied by alpha: a transparent pixel's hidden colour does not bleed."""
    reducible = _band_converter(img)
    w, h = img.size
    rows = _band_rows(w, factor)
    out = Image.new("RGB", (-(-w // factor), -(-h // factor)))
    for top in range(0, h, rows):
        band = reducible(img.crop((0, top, w, min(h, top + rows))))
        if factor > 1:
            band = band.reduce(factor)
        out.paste(_reduced_to_rgb(band), (0, top // factor))
    return out


def _band_converter(img: Image.Image) -> Callable[[Image.Image], Image.Image]:
    """The function that brings one band of ``img`` to L, RGB or RGBA; the whole image's range is measured first."""
    mode = img.mode
    if mode in _SIXTEEN_BIT_MODES:
        wide = _band_max(img) > 255
        return lambda band: Image.fromarray(scale_16bit(np.asarray(band), wide))
    if mode in ("I", "F"):
        lo, hi = _band_range(img)
        return lambda band: Image.fromarray(stretch_to_uint8(np.asarray(band), lo, hi))
    if mode in _PREMULTIPLIED or mode in _ALPHA_MODES or "transparency" in img.info:
        return _rgba_band
    if mode in ("RGB", "L"):
        return lambda band: band
    return lambda band: band.convert("RGB")


def _rgba_band(band: Image.Image) -> Image.Image:
    if band.mode in _PREMULTIPLIED:
        band = band.convert(_PREMULTIPLIED[band.mode])
    return band if band.mode == "RGBA" else band.convert("RGBA")


def _reduced_to_rgb(band: Image.Image) -> Image.Image:
    if band.mode == "RGBA":
        return flatten_on_white(band)
    return band if band.mode == "RGB" else band.convert("RGB")


def _bands(img: Image.Image):
    w, h = img.size
    rows = _band_rows(w, 1)
    for top in range(0, h, rows):
        yield np.asarray(img.crop((0, top, w, min(h, top + rows))))


def _finite_extrema(img: Image.Image) -> tuple[float, float] | None:
    """Pillow's own (min, max) of a one-band image (one pass in C) when both are finite, else None (its
    comparisons pass over NaN unless the first pixel is one)."""
    try:
        extrema = img.getextrema()
    except ValueError:  # e.g. I;16B: "image has wrong mode"
        return None
    if not (isinstance(extrema, tuple) and len(extrema) == 2 and all(isinstance(v, (int, float)) for v in extrema)):
        return None
    return (float(extrema[0]), float(extrema[1])) if all(math.isfinite(v) for v in extrema) else None


def _band_max(img: Image.Image) -> int:
    extrema = _finite_extrema(img)
    if extrema is not None:
        return int(extrema[1])
    return max((int(band.max()) for band in _bands(img) if band.size), default=0)


def _band_range(img: Image.Image) -> tuple[float, float]:
    """The finite (min, max) of the whole image, a band at a time where Pillow's extrema cannot say."""
    extrema = _finite_extrema(img)
    if extrema is not None:
        return extrema
    lo, hi = math.inf, -math.inf
    for band in _bands(img):
        if np.issubdtype(band.dtype, np.floating):
            band = band[np.isfinite(band)]
        if band.size:
            lo, hi = min(lo, float(band.min())), max(hi, float(band.max()))
    return (lo, hi) if lo <= hi else (0.0, 0.0)


# --------------------------------------------------------------------------- EXIF orientation

_TRANSPOSE = {
    2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}


def _orientation(img: Image.Image) -> int:
    """The EXIF orientation of a loaded image (1: upright; a broken EXIF block is ignored). Before loading:
    :func:`_header_orientation` (a PNG's ``getexif()`` decodes the whole image to find its eXIf chunk)."""
    try:
        value = img.getexif().get(0x0112, 1)
    except Exception:  # noqa: BLE001 - bad EXIF should not cost the user their photo
        return 1
    return value if value in _TRANSPOSE else 1


def _header_orientation(img: Image.Image) -> int:
    """The orientation known before decoding: a PNG's only from an eXIf chunk before its pixels."""
    if img.format != "PNG":
        return _orientation(img)
    if "exif" not in img.info:
        return 1
    try:
        exif = Image.Exif()
        exif.load(img.info["exif"])
        value = exif.get(0x0112, 1)
    except Exception:  # noqa: BLE001 - as in _orientation
        return 1
    return value if value in _TRANSPOSE else 1


def _apply_orientation(rgb: Image.Image, orientation: int) -> Image.Image:
    """Turn the (already shrunk) image upright, as ``ImageOps.exif_transpose`` would have the original."""
    return rgb.transpose(_TRANSPOSE[orientation]) if orientation in _TRANSPOSE else rgb


# --------------------------------------------------------------------------- in-memory inputs


def _from_pil(img: Image.Image) -> Image.Image:
    """Convert a caller's PIL image (possibly lazily opened) without modifying it."""
    _check_pixel_count(*img.size)
    if img.width == 0 or img.height == 0:
        raise InputError(f"image is empty ({img.width} x {img.height} pixels)")
    try:
        img.load()
    except Exception as err:  # noqa: BLE001 - a lazily opened, truncated file
        raise _corrupt("the image", err) from None
    return _apply_orientation(to_rgb(img), _orientation(img))


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
