"""vit.images: every file a phone or browser might hand us loads as RGB, or fails with InputError."""

from __future__ import annotations

import io
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageFile

import vit.images as images
from tests.corpus import (
    BLUE,
    EXPECTED_ERROR_WORDS,
    EXPECTED_SIZES,
    GREEN,
    RED,
    WHITE,
    gradient_16bit,
    halves,
    make_corpus,
    raw_png,
)
from vit.errors import InputError
from vit.images import load_image


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    make_corpus(folder)
    return folder


def colours(img: Image.Image) -> set[tuple[int, ...]]:
    return {tuple(int(v) for v in px) for px in np.asarray(img).reshape(-1, 3)}


def close(pixel, colour, tol=40) -> bool:
    return all(abs(int(a) - int(b)) <= tol for a, b in zip(pixel, colour))


def load(corpus_dir: Path, name: str) -> Image.Image:
    return load_image(corpus_dir / name)


# --------------------------------------------------------------------------- the corpus


def test_corpus_is_large_and_labelled(tmp_path):
    entries = make_corpus(tmp_path)
    assert len(entries) >= 25
    assert {p.name for p, ok in entries if ok} == set(EXPECTED_SIZES)
    assert {p.name for p, ok in entries if not ok} == set(EXPECTED_ERROR_WORDS)


@pytest.mark.parametrize("name", sorted(EXPECTED_SIZES))
def test_valid_file_loads_as_rgb_of_the_right_size(corpus_dir, name):
    img = load(corpus_dir, name)
    assert isinstance(img, Image.Image)
    assert img.mode == "RGB"
    assert img.size == EXPECTED_SIZES[name]
    np.asarray(img)  # fully decoded


@pytest.mark.parametrize("name", sorted(EXPECTED_SIZES))
def test_bytes_and_str_paths_give_the_same_pixels(corpus_dir, name):
    path = corpus_dir / name
    reference = np.asarray(load_image(path))
    assert np.array_equal(np.asarray(load_image(str(path))), reference)
    assert np.array_equal(np.asarray(load_image(path.read_bytes())), reference)
    assert np.array_equal(np.asarray(load_image(bytearray(path.read_bytes()))), reference)


@pytest.mark.parametrize("name", sorted(EXPECTED_ERROR_WORDS))
def test_bad_file_raises_input_error_with_a_helpful_line(corpus_dir, name):
    with pytest.raises(InputError) as caught:
        load(corpus_dir, name)
    message = str(caught.value)
    assert "\n" not in message
    assert len(message) < 400
    for word in EXPECTED_ERROR_WORDS[name]:
        assert word in message.lower(), (word, message)


def test_error_messages_name_the_file(corpus_dir):
    for name in ("notes.jpg", "truncated.jpg", "missing.jpg", "folder.jpg", "empty.jpg"):
        with pytest.raises(InputError, match=name):
            load(corpus_dir, name)


def test_not_an_image_message_lists_the_formats(corpus_dir):
    with pytest.raises(InputError) as caught:
        load(corpus_dir, "document_pdf_renamed.jpg")
    assert "not a JPEG/PNG/WebP/GIF/BMP/TIFF file?" in str(caught.value)


def test_bomb_reports_its_size_and_the_limit(corpus_dir):
    with pytest.raises(InputError, match=r"9000 x 8000 = 72,000,000 pixels, more than the limit of 64,000,000"):
        load(corpus_dir, "bomb_9000x8000.png")


# --------------------------------------------------------------------------- pixel content


@pytest.mark.parametrize(
    ("name", "top", "bottom"),
    [("exif_orientation_6.jpg", RED, BLUE), ("exif_orientation_8.jpg", BLUE, RED)],
)
def test_exif_rotation_is_applied(corpus_dir, name, top, bottom):
    img = load(corpus_dir, name)  # stored 40x20, left red | right blue
    assert img.size == (20, 40)
    assert close(img.getpixel((10, 5)), top)
    assert close(img.getpixel((10, 34)), bottom)


def test_exif_upside_down(corpus_dir):
    img = load(corpus_dir, "exif_orientation_3.jpg")
    assert close(img.getpixel((5, 10)), BLUE)
    assert close(img.getpixel((34, 10)), RED)


@pytest.mark.parametrize(
    "name", ["rgba_transparent_left.png", "rgba_transparent_left.webp", "rgba.tiff"]
)
def test_transparent_area_becomes_white(corpus_dir, name):
    img = load(corpus_dir, name)
    assert img.getpixel((3, 12)) == WHITE
    assert img.getpixel((28, 12)) == RED


def test_palette_transparency_becomes_white(corpus_dir):
    img = load(corpus_dir, "palette_transparent_left.png")
    assert img.getpixel((2, 5)) == WHITE
    assert img.getpixel((17, 5)) == RED


def test_grey_with_alpha(corpus_dir):
    img = np.asarray(load(corpus_dir, "la.png"))  # black, alpha 0 at top to 255 at bottom
    assert img[0].min() >= 230
    assert img[-1].max() <= 25


@pytest.mark.parametrize("name", ["cmyk.jpg", "cmyk.tiff", "rgb.bmp", "lossless.webp"])
def test_colours_survive(corpus_dir, name):
    img = load(corpus_dir, name)
    width, height = img.size
    assert close(img.getpixel((1, height // 2)), RED)
    assert close(img.getpixel((width - 2, height // 2)), BLUE)


@pytest.mark.parametrize(
    "name", ["i16_gradient.png", "i16_gradient.tiff", "i16b_gradient.tiff", "f_gradient.tiff", "i32_gradient.tiff"]
)
def test_wide_gradients_stay_gradients(corpus_dir, name):
    row = np.asarray(load(corpus_dir, name))[0, :, 0].astype(int)
    assert row[0] == 0
    assert row[-1] == 255
    assert np.all(np.diff(row) >= 0)
    assert 100 <= row[len(row) // 2] <= 155
    assert len(np.unique(row)) > len(row) // 2


def test_sixteen_bit_rgb_png(corpus_dir):
    img = load(corpus_dir, "rgb16_red_blue.png")
    assert img.getpixel((1, 1)) == RED
    assert img.getpixel((8, 1)) == BLUE


@pytest.mark.parametrize("name", ["one_bit.png", "one_bit.bmp"])
def test_one_bit(corpus_dir, name):
    img = load(corpus_dir, name)
    assert img.getpixel((2, 4)) == WHITE
    assert img.getpixel((14, 4)) == (0, 0, 0)


def test_one_pixel(corpus_dir):
    assert load(corpus_dir, "one_pixel.png").getpixel((0, 0)) == GREEN


@pytest.mark.parametrize(
    "name",
    ["animated_red_then_green.gif", "animated_red_then_green.webp", "multipage_red_then_green.tiff"],
)
def test_first_frame(corpus_dir, name):
    assert close(load(corpus_dir, name).getpixel((8, 6)), RED, tol=10)


# --------------------------------------------------------------------------- PIL images of every mode

ALL_MODES = [
    "1", "L", "LA", "La", "P", "PA", "RGB", "RGBA", "RGBa", "RGBX", "CMYK", "YCbCr",
    "LAB", "HSV", "I", "I;16", "I;16B", "I;16L", "I;16N", "F",
]


@pytest.mark.parametrize("mode", ALL_MODES)
def test_every_mode_converts(mode):
    img = Image.new(mode, (7, 3))
    out = load_image(img)
    assert out.mode == "RGB"
    assert out.size == (7, 3)
    assert out is not img


def test_input_image_is_not_modified():
    img = Image.new("LA", (6, 4), (10, 0))
    exif = img.getexif()
    exif[0x0112] = 6
    img.info["exif"] = exif.tobytes()
    out = load_image(img)
    assert out.size == (4, 6)
    assert img.mode == "LA" and img.size == (6, 4)


def test_pa_transparency_becomes_white():
    img = Image.new("PA", (4, 2))
    img.putpalette([255, 0, 0] * 256)
    img.putalpha(0)
    assert colours(load_image(img)) == {WHITE}


@pytest.mark.parametrize(
    ("mode", "value", "expected"),
    [("I;16", 1000, round(1000 / 257)), ("I;16", 200, 200), ("I", 0, 0), ("I", 70_000, 255), ("F", 0.5, 0),
     ("F", 300.0, 255)],
)
def test_constant_wide_images_do_not_divide_by_zero(mode, value, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = load_image(Image.new(mode, (5, 5), value))
    assert colours(out) == {(expected,) * 3}


def test_sixteen_bit_gradient_scaled_by_type_range():
    out = np.asarray(load_image(gradient_16bit()))[0, :, 0]
    expected = np.rint(np.linspace(0, 65535, 256).round() / 257)
    assert np.abs(out.astype(int) - expected).max() <= 1


def test_dark_sixteen_bit_photo_stays_dark():
    img = Image.fromarray(np.full((4, 4), 5000, dtype=np.uint16))
    img.putpixel((0, 0), 256)
    assert np.asarray(load_image(img)).max() <= 20


def test_float_image_with_nan_and_inf():
    values = np.array([[np.nan, -np.inf, 0.0, 1.0, 2.0, np.inf]], dtype=np.float32)
    out = np.asarray(load_image(Image.fromarray(values)))[0, :, 0]
    assert out.tolist() == [0, 0, 0, 128, 255, 255]


def test_truncated_lazily_opened_pil_image(corpus_dir):
    lazy = Image.open(io.BytesIO((corpus_dir / "truncated.jpg").read_bytes()))
    with pytest.raises(InputError, match="truncated or corrupt"):
        load_image(lazy)


def test_truncated_images_are_not_tolerated_globally(corpus_dir):
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False
    with pytest.raises(InputError):
        load(corpus_dir, "truncated.png")
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False


# --------------------------------------------------------------------------- numpy arrays


def test_arrays_of_every_accepted_shape_and_dtype():
    grey = np.tile(np.arange(10, dtype=np.uint8) * 25, (4, 1))
    assert np.asarray(load_image(grey))[:, :, 0].tolist() == grey.tolist()
    assert load_image(grey[:, :, None]).size == (10, 4)
    rgb = np.zeros((4, 10, 3), dtype=np.uint8)
    rgb[..., 2] = 255
    assert load_image(rgb).getpixel((0, 0)) == BLUE
    rgba = np.zeros((4, 10, 4), dtype=np.uint8)
    assert load_image(rgba).getpixel((0, 0)) == WHITE
    assert load_image(grey.astype(np.uint16) * 257).getpixel((9, 0)) == (225,) * 3
    assert load_image(np.full((2, 3, 3), 0.5)).getpixel((0, 0)) == (128,) * 3
    assert load_image(np.full((2, 3), 1.0, dtype=np.float16)).getpixel((0, 0)) == WHITE
    assert load_image(np.asfortranarray(rgb)).getpixel((0, 0)) == BLUE


@pytest.mark.parametrize(
    ("array", "words"),
    [
        (np.zeros((4,), np.uint8), "shape"),
        (np.zeros((4, 4, 2), np.uint8), "shape"),
        (np.zeros((4, 4, 3, 1), np.uint8), "shape"),
        (np.zeros((0, 4, 3), np.uint8), "empty"),
        (np.zeros((4, 4), np.int64), "dtype"),
        (np.zeros((4, 4), bool), "dtype"),
        (np.full((4, 4), 255.0), "[0, 1]"),
        (np.full((4, 4), -0.1), "[0, 1]"),
        (np.full((4, 4), np.nan), "finite"),
    ],
)
def test_bad_arrays(array, words):
    with pytest.raises(InputError, match="image array") as caught:
        load_image(array)
    assert words in str(caught.value)


@pytest.mark.parametrize("source", [None, 3, [[0, 1]], {"path": "x.jpg"}])
def test_unsupported_source_types(source):
    with pytest.raises(InputError, match="file path"):
        load_image(source)


def test_empty_bytes():
    with pytest.raises(InputError, match="empty"):
        load_image(b"")


def test_url_hint():
    with pytest.raises(InputError, match="not found.*web addresses"):
        load_image("https://example.com/cat.jpg")


# --------------------------------------------------------------------------- limits


def test_pixel_limit_is_read_at_call_time(monkeypatch):
    monkeypatch.setattr(images, "MAX_PIXELS", 100)
    with pytest.raises(InputError, match=r"20 x 10 = 200 pixels, more than the limit of 100"):
        load_image(halves(20, 10))
    with pytest.raises(InputError, match="limit"):
        load_image(np.zeros((10, 20), np.uint8))
    png = io.BytesIO()
    halves(20, 10).save(png, "PNG")
    with pytest.raises(InputError, match="limit"):
        load_image(png.getvalue())
    assert load_image(halves(10, 10)).size == (10, 10)


def test_byte_limit(monkeypatch):
    data = io.BytesIO()
    halves(20, 10).save(data, "PNG")
    monkeypatch.setattr(images, "MAX_FILE_BYTES", len(data.getvalue()) - 1)
    with pytest.raises(InputError, match="MB, more than the limit"):
        load_image(data.getvalue())


def test_own_limit_does_not_depend_on_pillows_global(monkeypatch, corpus_dir):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)
    with pytest.raises(InputError, match="100000 x 100000"):
        load(corpus_dir, "bomb_header_only.png")
    with pytest.raises(InputError, match="9000 x 8000"):
        load(corpus_dir, "bomb_9000x8000.png")


def test_bombs_are_refused_by_our_own_check_without_touching_warning_filters(corpus_dir):
    """No warnings.catch_warnings() in decoding: it swaps process-global state, unsafe under concurrency."""
    filters = list(warnings.filters)
    with warnings.catch_warnings():  # the test's own: Pillow may still warn above its own, higher limit
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        with pytest.raises(InputError, match="limit"):
            load(corpus_dir, "bomb_12000x10000.png")
        assert warnings.filters[1:] == filters  # decoding added or removed no filter
    with pytest.raises(InputError, match="9000 x 8000"):  # under Pillow's limit, over ours
        load(corpus_dir, "bomb_9000x8000.png")


def test_decoding_in_parallel_with_bombs(corpus_dir):
    """Requests decode in threads at once: every valid image right, every bomb refused."""
    good = io.BytesIO()
    halves(12, 8).save(good, "PNG")
    jobs = [good.getvalue(), (corpus_dir / "bomb_9000x8000.png").read_bytes()] * 16

    def decode(data):
        try:
            return load_image(data).size
        except InputError as exc:
            return str(exc)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(decode, jobs))
    assert results[0::2] == [(12, 8)] * 16
    assert all("9000 x 8000" in r for r in results[1::2])


def test_huge_header_costs_nothing():
    with pytest.raises(InputError, match="pixels"):
        load_image(raw_png(2**31 - 1, 2**31 - 1, 8, 6))


# --------------------------------------------------------------------------- fuzzing


def _valid_files() -> list[bytes]:
    out = []
    for fmt, mode in [("PNG", "RGBA"), ("JPEG", "RGB"), ("GIF", "P"), ("TIFF", "RGB"), ("WEBP", "RGB"), ("BMP", "RGB")]:
        buf = io.BytesIO()
        halves(12, 8).convert(mode).save(buf, fmt)
        out.append(buf.getvalue())
    return out


VALID_FILES = _valid_files()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.integers(0, len(VALID_FILES) - 1),
    edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=8),
    cut=st.integers(0, 10_000),
)
def test_damaged_files_load_or_raise_input_error(which, edits, cut):
    data = bytearray(VALID_FILES[which])
    for pos, byte in edits:
        data[pos % len(data)] = byte
    data = data[: max(cut, 1)] if cut < len(data) else data
    try:
        img = load_image(bytes(data))
    except InputError as err:
        assert "\n" not in str(err)
    else:
        assert img.mode == "RGB"


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=512))
def test_random_bytes_never_crash(data):
    try:
        load_image(data)
    except InputError:
        pass


# --------------------------------------------------------------------------- formats we do not open (issue 26)


def _encoded(img: Image.Image, fmt: str, **params) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **params)
    return buf.getvalue()


def test_jpeg_2000_is_refused_in_one_sentence():
    with pytest.raises(InputError) as caught:
        load_image(_encoded(halves(64, 64), "JPEG2000"))
    assert str(caught.value) == ("could not use the uploaded data: JPEG 2000 files are not supported, "
                                 "use a JPEG, PNG, WebP, GIF, BMP or TIFF file")


REFUSED = sorted(name for name, words in EXPECTED_ERROR_WORDS.items() if "not supported" in words)


def test_the_refused_formats_are_the_undocumented_ones():
    assert len(REFUSED) >= 12
    assert {"icon.ico", "photo.j2k", "picture.tga", "picture.qoi", "picture.eps"} <= set(REFUSED)


@pytest.mark.parametrize("name", REFUSED)
def test_naming_a_refused_format_decodes_no_pixel(corpus_dir, monkeypatch, name):
    """Every pixel decoder Pillow runs is made by Image._getdecoder (ICO's embedded PNG too): none is asked for."""
    asked = []

    def no_decoder(*args, **kwargs):
        asked.append(args)
        raise AssertionError("a pixel decoder was asked for")

    monkeypatch.setattr(Image, "_getdecoder", no_decoder)
    with pytest.raises(InputError, match="files are not supported"):
        load(corpus_dir, name)
    assert asked == []


@pytest.mark.parametrize(("fmt", "with_exif"), [("PNG", False), ("PNG", True), ("JPEG", True), ("TIFF", False),
                                                ("GIF", False), ("BMP", False), ("WEBP", True)])
def test_decode_cost_reads_the_header_only(monkeypatch, fmt, with_exif):
    """decode_cost decodes nothing (a PNG's getexif() would: without an early eXIf it loads the image to look)."""
    exif = Image.Exif()
    exif[0x0112] = 6
    params = {"exif": exif.tobytes()} if with_exif else {}
    data = _encoded(halves(300, 200).convert("P" if fmt == "GIF" else "RGB"), fmt, **params)
    monkeypatch.setattr(Image, "_getdecoder", lambda *a, **k: pytest.fail("decoded"))
    cost = images.decode_cost(data)
    assert cost.size == (300, 200) and cost.factor == 1 and cost.peak_bytes > 300 * 200


# --------------------------------------------------------------------------- shrinking at the decoder


def test_a_large_png_is_box_reduced_keeping_the_shorter_side_and_the_aspect():
    data = _encoded(halves(4096, 2100), "PNG")
    cost = images.decode_cost(data)
    assert (cost.factor, cost.output_size) == (2, (2048, 1050))
    img = load_image(data)
    assert img.size == (2048, 1050) and min(img.size) >= images.MODEL_SIDE
    assert close(img.getpixel((10, 500)), RED, tol=2) and close(img.getpixel((2040, 500)), BLUE, tol=2)


def test_an_image_under_twice_the_model_side_keeps_its_size():
    data = _encoded(halves(2047, 5000), "PNG")
    assert images.decode_cost(data).factor == 1
    assert load_image(data).size == (2047, 5000)


def test_a_large_jpeg_is_decoded_in_draft_mode():
    data = _encoded(halves(4100, 4100), "JPEG")
    cost = images.decode_cost(data)
    assert cost.decoded_size == (1025, 1025) and cost.factor == 1
    assert load_image(data).size == (1025, 1025)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG"])
def test_exif_rotation_is_right_after_the_shrink(fmt):
    exif = Image.Exif()
    exif[0x0112] = 6  # stored left red | right blue, shown turned: top red, bottom blue
    img = load_image(_encoded(halves(4100, 2050), fmt, exif=exif.tobytes()))
    assert img.size == (1025, 2050)  # JPEG: draft 1/2; PNG: reduced by 2
    assert close(img.getpixel((500, 10)), RED) and close(img.getpixel((500, 2040)), BLUE)


def test_transparency_is_averaged_with_its_alpha_before_the_white():
    """A 2 x 2 block with one transparent black pixel and one red pixel: pink on white, not dark red."""
    rgba = Image.new("RGBA", (2050, 2050), RED + (255,))
    rgba.paste((0, 0, 0, 0), (0, 0, 1025, 2050))  # an odd width: column 1024 shares a block with red 1025
    img = load_image(_encoded(rgba, "PNG"))
    assert img.size == (1025, 1025)
    assert img.getpixel((100, 100)) == WHITE and img.getpixel((900, 100)) == RED
    r, g, b = img.getpixel((512, 100))
    assert r >= 250 and 110 <= g <= 145 and g == b  # straight averaging would give (191, 127, 127)


def test_float_images_span_several_bands_like_one_float64_stretch():
    rng = np.random.default_rng(3)
    values = rng.normal(0, 1000, (700, 3000)).astype(np.float32)
    values[::97, ::89] = np.nan
    values[5, 5], values[600, 7] = np.inf, -np.inf
    out = np.asarray(load_image(_encoded(Image.fromarray(values), "TIFF")))[:, :, 0].astype(int)
    finite = values[np.isfinite(values)].astype(np.float64)
    lo, hi = finite.min(), finite.max()
    ref = np.nan_to_num((values.astype(np.float64) - lo) * (255 / (hi - lo)), nan=0, posinf=255, neginf=0)
    assert np.abs(out - np.clip(np.rint(ref), 0, 255)).max() <= 1
    assert out[5, 5] == 255 and out[600, 7] == 0 and out[0, 0] == 0


def test_sixteen_bit_range_is_decided_over_the_whole_image_not_a_band():
    """Only the last rows exceed 255: every band is scaled by 257, the dark first rows too."""
    values = np.full((3000, 1500), 200, dtype=np.uint16)
    values[-1, -1] = 60000
    out = np.asarray(load_image(_encoded(Image.fromarray(values), "PNG")))
    assert out[0, 0, 0] == round(200 / 257)


def test_a_decode_over_the_memory_limit_is_refused_from_the_header(monkeypatch):
    monkeypatch.setattr(images, "MAX_DECODE_BYTES", 1_000_000)
    monkeypatch.setattr(Image, "_getdecoder", lambda *a, **k: pytest.fail("decoded"))
    with pytest.raises(InputError, match=r"decoding the uploaded data \(1000 x 800 pixels, PNG\) would take about "
                                         r"0\.0 GB of memory, more than the limit of 0\.0 GB for one image"):
        load_image(_encoded(halves(1000, 800), "PNG"))


# --------------------------------------------------------------------------- progressive JPEG scans


def with_repeated_last_scan(data: bytes, times: int) -> bytes:
    last, eoi = data.rindex(b"\xff\xda"), data.rindex(b"\xff\xd9")
    return data[:eoi] + data[last:eoi] * times + data[eoi:]


NOISE = Image.fromarray(np.random.default_rng(0).integers(0, 256, (96, 128, 3), dtype=np.uint8))


def test_scans_are_counted_by_walking_the_segments():
    assert images.count_jpeg_scans(_encoded(NOISE, "JPEG"), 100) == 1
    progressive = _encoded(NOISE, "JPEG", progressive=True)
    normal = images.count_jpeg_scans(progressive, 100)
    assert 4 <= normal <= 12
    # 0xFFDA inside a comment is not a scan; stuffed 0xFF00 bytes and restart markers in the scans are skipped
    commented = _encoded(NOISE, "JPEG", progressive=True, comment=b"\xff\xda" * 300, restart_marker_blocks=1)
    assert commented.count(b"\xff\xda") > 300
    assert images.count_jpeg_scans(commented, 1000) == normal
    assert images.count_jpeg_scans(with_repeated_last_scan(progressive, 50), 1000) == normal + 50
    assert images.count_jpeg_scans(with_repeated_last_scan(progressive, 5000), 100) == 101  # stops past the limit
    assert images.count_jpeg_scans(b"\x89PNG", 100) == 0


def test_a_progressive_jpeg_with_too_many_scans_is_refused_before_decoding(monkeypatch):
    progressive = _encoded(NOISE, "JPEG", progressive=True)
    assert load_image(with_repeated_last_scan(progressive, 50)).size == (128, 96)  # 60 scans: a slow file, allowed
    monkeypatch.setattr(Image, "_getdecoder", lambda *a, **k: pytest.fail("decoded"))
    with pytest.raises(InputError) as caught:
        load_image(with_repeated_last_scan(progressive, 1000))
    assert str(caught.value) == ("the uploaded data is a progressive JPEG with more than 100 scans (a normal one "
                                 "has about 10), which would take minutes to decode: save it again as a normal JPEG")


def test_mpo_counts_the_first_image_only():
    first = _encoded(NOISE, "JPEG", progressive=True)
    assert images.count_jpeg_scans(first + with_repeated_last_scan(first, 500), 100) == \
        images.count_jpeg_scans(first, 100)


def test_an_mpo_phone_jpeg_opens_as_a_jpeg():
    data = _encoded(halves(40, 20), "MPO", save_all=True, append_images=[halves(40, 20, BLUE, RED)])
    with Image.open(io.BytesIO(data)) as probe:
        assert probe.format == "MPO"
    img = load_image(data)
    assert img.size == (40, 20) and close(img.getpixel((2, 10)), RED)


def test_a_large_progressive_jpeg_is_allowed_fewer_scans(monkeypatch):
    """Every scan is a pass over the whole image: scans x pixels is bounded too."""
    progressive = _encoded(NOISE, "JPEG", progressive=True)  # 128 x 96, about 10 scans
    monkeypatch.setattr(images, "MAX_SCAN_PIXELS", 128 * 96 * 12)
    assert load_image(progressive).size == (128, 96)
    with pytest.raises(InputError, match=r"progressive JPEG of 128 x 96 pixels with more than 12 scans"):
        load_image(with_repeated_last_scan(progressive, 5))


def test_the_whole_images_range_from_pillows_extrema_equals_the_band_scan():
    """Modes I and F are stretched by the image's finite range; Pillow's one-pass extrema (no copy) is used when
    it can say, and must give the same range as the band-by-band scan, NaN and infinities anywhere."""
    from vit import images

    rng = np.random.default_rng(0)
    for trial in range(40):
        values = rng.normal(0, 10.0 ** rng.integers(0, 30), size=(17, 23)).astype(np.float32)
        for special in (np.nan, np.inf, -np.inf)[: trial % 4]:
            values.flat[rng.integers(0, values.size, 3)] = special
        if trial % 5 == 0:
            values.flat[0] = np.nan  # Pillow's extrema is NaN then: the band scan answers
        assert images._band_range(Image.fromarray(values, mode="F")) == images.finite_range(values), trial
    ints = rng.integers(-2**31, 2**31 - 1, size=(9, 9), dtype=np.int32)
    assert images._band_range(Image.fromarray(ints, mode="I")) == (float(ints.min()), float(ints.max()))
