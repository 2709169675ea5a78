"""A corpus of odd and broken image files, generated locally (nothing is downloaded).

``make_corpus(tmp_dir)`` writes the files and returns ``(path, should_load)``
pairs; ``EXPECTED_SIZES`` gives the (width, height) :func:`vit.images.load_image`
must return for each file that loads (after EXIF rotation), keyed by file name,
and ``EXPECTED_ERROR_WORDS`` the words its error message must contain for each
file that must not. Reused by the image, CLI and app tests.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

RED, GREEN, BLUE, WHITE = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)

# --------------------------------------------------------------------------- helpers


def _encode(img: Image.Image, fmt: str, **params) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **params)
    return buf.getvalue()


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def raw_png(width: int, height: int, bit_depth: int, color_type: int, row: bytes | None = None) -> bytes:
    """A PNG written by hand, so a huge image costs a few kB and no memory.

    Args:
        width: width claimed in IHDR.
        height: height claimed in IHDR.
        bit_depth: 1, 8 or 16.
        color_type: 0 grey, 2 RGB, 6 RGBA.
        row: the unfiltered bytes of every row; ``None`` writes a tiny IDAT
            that does not match the claimed size (a header-only bomb).
    """
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    if row is None:
        idat = zlib.compress(b"\x00" * 16)
    else:
        packer = zlib.compressobj(9)
        line = b"\x00" + row  # filter type 0
        parts = [packer.compress(line) for _ in range(height)]
        idat = b"".join(parts) + packer.flush()
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )


def halves(width: int, height: int, left=RED, right=BLUE) -> Image.Image:
    """An RGB image whose left half is ``left`` and right half ``right``."""
    img = Image.new("RGB", (width, height), right)
    img.paste(left, (0, 0, width // 2, height))
    return img


def exif_jpeg(orientation: int) -> bytes:
    """A 40x20 red|blue JPEG tagged with EXIF ``orientation``."""
    exif = Image.Exif()
    exif[0x0112] = orientation
    return _encode(halves(40, 20), "JPEG", quality=95, exif=exif.tobytes())


def gradient_16bit(width: int = 256, height: int = 8) -> Image.Image:
    """An ``I;16`` image whose columns go from 0 to 65535."""
    row = np.linspace(0, 65535, width).round().astype(np.uint16)
    return Image.fromarray(np.tile(row, (height, 1)))


def gradient_16bit_big_endian(width: int = 256, height: int = 8) -> Image.Image:
    """The same gradient in mode ``I;16B`` (Pillow's ``convert("I;16B")`` clips at 255)."""
    data = np.asarray(gradient_16bit(width, height)).astype(">u2")
    return Image.frombytes("I;16B", (width, height), data.tobytes())


def _frames(fmt: str, colours, size=(16, 12), **params) -> bytes:
    first, *rest = [Image.new("RGB", size, c) for c in colours]
    if fmt == "GIF":
        first, *rest = [f.convert("P") for f in [first, *rest]]
    return _encode(first, fmt, save_all=True, append_images=rest, **params)


# --------------------------------------------------------------------------- the corpus

def _good_files() -> dict[str, tuple[Callable[[], bytes], tuple[int, int]]]:
    """File name -> (bytes factory, (width, height) after loading)."""
    rgba = Image.new("RGBA", (32, 24), RED + (255,))
    rgba.paste((0, 0, 0, 0), (0, 0, 16, 24))  # left half fully transparent (black underneath)
    pal = Image.new("P", (20, 10), 1)
    pal.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)
    pal.paste(0, (0, 0, 10, 10))  # index 0 (black) on the left ...
    la = Image.merge("LA", [Image.new("L", (10, 10), 0), Image.linear_gradient("L").resize((10, 10))])
    f_grad = Image.fromarray(np.tile(np.linspace(-3.0, 5.0, 64, dtype=np.float32), (4, 1)))
    i32 = Image.fromarray(np.tile(np.arange(0, 64 * 100_000, 100_000, dtype=np.int32), (4, 1)))
    one_bit = Image.new("1", (17, 9), 0)
    one_bit.paste(1, (0, 0, 8, 9))
    rgb16_row = np.array([[0xFFFF, 0, 0]] * 5 + [[0, 0, 0xFFFF]] * 5, dtype=">u2").tobytes()
    return {
        "rgb.jpg": (lambda: _encode(halves(64, 48), "JPEG"), (64, 48)),
        "progressive.jpg": (lambda: _encode(halves(64, 48), "JPEG", progressive=True), (64, 48)),
        "grey.jpg": (lambda: _encode(Image.new("L", (30, 20), 128), "JPEG"), (30, 20)),
        "exif_orientation_6.jpg": (lambda: exif_jpeg(6), (20, 40)),
        "exif_orientation_8.jpg": (lambda: exif_jpeg(8), (20, 40)),
        "exif_orientation_3.jpg": (lambda: exif_jpeg(3), (40, 20)),
        "cmyk.jpg": (lambda: _encode(halves(20, 10).convert("CMYK"), "JPEG", quality=95), (20, 10)),
        "cmyk.tiff": (lambda: _encode(halves(20, 10).convert("CMYK"), "TIFF"), (20, 10)),
        "rgba_transparent_left.png": (lambda: _encode(rgba, "PNG"), (32, 24)),
        "palette_transparent_left.png": (lambda: _encode(pal, "PNG", transparency=0), (20, 10)),
        "la.png": (lambda: _encode(la, "PNG"), (10, 10)),
        "i16_gradient.png": (lambda: _encode(gradient_16bit(), "PNG"), (256, 8)),
        "i16_gradient.tiff": (lambda: _encode(gradient_16bit(), "TIFF"), (256, 8)),
        "i16b_gradient.tiff": (lambda: _encode(gradient_16bit_big_endian(), "TIFF"), (256, 8)),
        "rgb16_red_blue.png": (lambda: raw_png(10, 4, 16, 2, rgb16_row), (10, 4)),
        "f_gradient.tiff": (lambda: _encode(f_grad, "TIFF"), (64, 4)),
        "i32_gradient.tiff": (lambda: _encode(i32, "TIFF"), (64, 4)),
        "one_bit.png": (lambda: _encode(one_bit, "PNG"), (17, 9)),
        "one_bit.bmp": (lambda: _encode(one_bit, "BMP"), (17, 9)),
        "one_pixel.png": (lambda: _encode(Image.new("RGB", (1, 1), GREEN), "PNG"), (1, 1)),
        "tall_1x3000.png": (lambda: _encode(Image.new("L", (1, 3000), 200), "PNG"), (1, 3000)),
        "wide_5000x1.jpg": (lambda: _encode(Image.new("RGB", (5000, 1), BLUE), "JPEG"), (5000, 1)),
        "animated_red_then_green.gif": (lambda: _frames("GIF", [RED, GREEN], duration=100, loop=0), (16, 12)),
        "animated_red_then_green.webp": (lambda: _frames("WEBP", [RED, GREEN], lossless=True), (16, 12)),
        "multipage_red_then_green.tiff": (lambda: _frames("TIFF", [RED, GREEN]), (16, 12)),
        "lossless.webp": (lambda: _encode(halves(30, 20), "WEBP", lossless=True), (30, 20)),
        "rgba_transparent_left.webp": (lambda: _encode(rgba, "WEBP", lossless=True), (32, 24)),
        "rgb.bmp": (lambda: _encode(halves(30, 20), "BMP"), (30, 20)),
        "rgba.tiff": (lambda: _encode(rgba, "TIFF"), (32, 24)),
        "jpeg_named.png": (lambda: _encode(halves(24, 16), "JPEG"), (24, 16)),
        "no_extension": (lambda: _encode(halves(24, 16), "PNG"), (24, 16)),
    }


def _bad_files() -> dict[str, tuple[Callable[[], bytes], tuple[str, ...]]]:
    """File name -> (bytes factory, words the error message must contain)."""
    jpeg = _encode(halves(200, 150), "JPEG")
    png = _encode(Image.effect_noise((200, 150), 64).convert("RGB"), "PNG")
    not_image = ("could not read", "as an image")
    return {
        "document_pdf_renamed.jpg": (
            lambda: b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n",
            not_image + ("pdf",),
        ),
        "notes.jpg": (lambda: b"these are my lecture notes, not a photo\n" * 20, not_image),
        "empty.jpg": (lambda: b"", ("empty",)),
        "truncated.jpg": (lambda: jpeg[: len(jpeg) // 2], ("truncated or corrupt",)),
        "truncated.png": (lambda: png[: len(png) // 2], ("truncated or corrupt",)),
        "only_soi.jpg": (lambda: b"\xff\xd8", ("could not",)),
        "random_bytes.jpg": (lambda: np.random.default_rng(0).bytes(4096), not_image),
        "png_header_then_garbage.png": (
            lambda: b"\x89PNG\r\n\x1a\n" + np.random.default_rng(1).bytes(2048),
            ("could not",),
        ),
        "photo.heic": (
            lambda: b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 64,
            not_image + ("heic",),
        ),
        "drawing.svg": (
            lambda: b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>',
            not_image + ("svg",),
        ),
        "page.png": (lambda: b"<!DOCTYPE html><html><body>404</body></html>", not_image + ("html",)),
        # 100000 x 100000 claimed in a 60-byte file: Pillow itself refuses it at open.
        "bomb_header_only.png": (lambda: raw_png(100_000, 100_000, 1, 0), ("pixels", "limit")),
        # 9000 x 8000 = 72M one-bit pixels, a valid ~6 kB PNG, above MAX_PIXELS but below Pillow's own limit.
        "bomb_9000x8000.png": (lambda: raw_png(9000, 8000, 1, 0, b"\x00" * 1000), ("9000 x 8000", "pixels", "limit")),
        # 12000 x 10000 = 120M: between Pillow's warning (89M) and error (179M) thresholds.
        "bomb_12000x10000.png": (lambda: raw_png(12_000, 10_000, 1, 0), ("pixels", "limit")),
        **_refused_formats(),
    }


def _refused_formats() -> dict[str, tuple[Callable[[], bytes], tuple[str, ...]]]:
    """Formats Pillow opens but the README does not list: each refused, named, in one sentence."""
    small = halves(32, 32)
    refused = ("not supported", "use a jpeg, png, webp, gif, bmp or tiff file")
    return {
        "icon.ico": (lambda: _encode(small, "ICO", sizes=[(32, 32)]), ("windows icon (ico)",) + refused),
        "photo.j2k": (lambda: _encode(small, "JPEG2000", no_jp2=True), ("jpeg 2000",) + refused),
        "photo.jp2": (lambda: _encode(small, "JPEG2000", no_jp2=False), ("jpeg 2000",) + refused),
        "picture.tga": (lambda: _encode(small, "TGA"), ("targa",) + refused),
        "picture.pcx": (lambda: _encode(small, "PCX"), ("pcx",) + refused),
        "picture.sgi": (lambda: _encode(small, "SGI"), ("sgi",) + refused),
        "picture.qoi": (lambda: _encode(small, "QOI"), ("qoi",) + refused),
        "picture.dds": (lambda: _encode(small, "DDS"), ("dds",) + refused),
        "picture.im": (lambda: _encode(small, "IM"), ("im",) + refused),
        "picture.spider": (lambda: _encode(small.convert("F"), "SPIDER"), ("spider",) + refused),
        "picture.ppm": (lambda: _encode(small, "PPM"), ("ppm",) + refused),
        "picture.xbm": (lambda: _encode(small.convert("1"), "XBM"), ("xbm",) + refused),
        "picture.eps": (lambda: b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 32 32\n", ("postscript",) + refused),
    }


_FOLDER, _MISSING, _HUGE = "folder.jpg", "missing.jpg", "huge.jpg"

# File name -> (width, height) after loading, for every entry that must load.
EXPECTED_SIZES: dict[str, tuple[int, int]] = {name: size for name, (_, size) in _good_files().items()}
# File name -> lower-case words the InputError message must contain, for every entry that must not.
EXPECTED_ERROR_WORDS: dict[str, tuple[str, ...]] = {
    **{name: words for name, (_, words) in _bad_files().items()},
    _FOLDER: ("directory",),
    _MISSING: ("not found",),
    _HUGE: ("mb", "limit"),
}


def make_corpus(tmp_dir: Path) -> list[tuple[Path, bool]]:
    """Write the corpus into ``tmp_dir`` and list it.

    Besides the files of ``EXPECTED_SIZES`` and ``EXPECTED_ERROR_WORDS`` it adds a
    directory named like an image, a missing path and a file over
    ``vit.images.MAX_FILE_BYTES`` (sparse, so it costs no disk).

    Args:
        tmp_dir: an existing, empty directory.

    Returns:
        ``(path, should_load)`` for every entry.
    """
    from vit.images import MAX_FILE_BYTES

    tmp_dir = Path(tmp_dir)
    entries: list[tuple[Path, bool]] = []
    for name, (make, _) in _good_files().items():
        (tmp_dir / name).write_bytes(make())
        entries.append((tmp_dir / name, True))
    for name, (make, _) in _bad_files().items():
        (tmp_dir / name).write_bytes(make())
        entries.append((tmp_dir / name, False))

    folder, missing, huge = tmp_dir / _FOLDER, tmp_dir / _MISSING, tmp_dir / _HUGE
    folder.mkdir()
    with huge.open("wb") as fh:
        fh.write(_encode(halves(8, 8), "JPEG"))
        fh.truncate(MAX_FILE_BYTES + 1)
    entries += [(folder, False), (missing, False), (huge, False)]
    return entries
