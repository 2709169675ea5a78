"""vit.validate: every parameter is either normalised into range or refused with a message
naming the parameter, the allowed values and the value given."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vit.validate as v
from vit.config import DISPLAY_NAMES, MAX_PATCH_SIZE, MIN_PATCH_SIZE, PRESETS
from vit.errors import InputError

ANYTHING = st.one_of(
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
    st.none(),
    st.booleans(),
    st.lists(st.integers()),
    # strings that parse, so the accepting branch is exercised too
    st.integers(-100, 100).map(str),
    st.floats(-100, 100).map(repr),
    st.sampled_from(["mean", " MAX ", "Min", "ViT-B/16", "vit_l_32", "16.0", "1e1", " 7 ", "0.5"]),
)
FAST = settings(max_examples=200, deadline=None)


def shown(value) -> str:
    """What the message must quote: the repr, or its start when it is long."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57]


def check_refusal(err: InputError, name: str, value) -> None:
    message = str(err)
    assert message.startswith(name + " must be"), message
    assert shown(value) in message, message
    assert "\n" not in message


def integral_value(value) -> int | None:
    """The integer a permissive but strict reader would see in value, if any."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError, OverflowError):
        return None
    return int(number) if math.isfinite(number) and number.is_integer() else None


def real_value(value) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def check_integer(fn, name, value, lo, hi, *args):
    expected = integral_value(value)
    if expected is not None and lo <= expected <= hi:
        result = fn(value, *args)
        assert type(result) is int and result == expected
    else:
        with pytest.raises(InputError) as caught:
            fn(value, *args)
        check_refusal(caught.value, name, value)


def check_number(fn, name, value, lo, hi):
    expected = real_value(value)
    if expected is not None and lo <= expected <= hi:
        result = fn(value)
        assert type(result) is float and result == expected and lo <= result <= hi
    else:
        with pytest.raises(InputError) as caught:
            fn(value)
        check_refusal(caught.value, name, value)


# --------------------------------------------------------------------------- properties


@FAST
@given(ANYTHING)
def test_patch_size_property(value):
    check_integer(v.patch_size, "patch_size", value, MIN_PATCH_SIZE, MAX_PATCH_SIZE)


@FAST
@given(ANYTHING, st.integers(1, 32))
def test_depth_property(value, num_layers):
    check_integer(v.depth, "depth", value, 1, num_layers, num_layers)


@FAST
@given(ANYTHING, st.integers(1, 2000))
def test_top_k_property(value, num_classes):
    if value is None:  # the default: 5, or every class of a model with fewer
        assert v.top_k(None, num_classes) == min(5, num_classes)
        return
    check_integer(v.top_k, "top_k", value, 1, min(20, num_classes), num_classes)


@FAST
@given(ANYTHING, st.integers(1, 32))
def test_layer_property(value, depth):
    check_integer(v.layer, "layer", value, 1, depth, depth)


@FAST
@given(ANYTHING, st.integers(1, 16))
def test_head_property(value, num_heads):
    check_integer(v.head, "head", value, 1, num_heads, num_heads)


@FAST
@given(ANYTHING)
def test_discard_ratio_property(value):
    check_number(v.discard_ratio, "discard_ratio", value, 0.0, 0.99)


@FAST
@given(ANYTHING)
def test_opacity_property(value):
    check_number(v.opacity, "opacity", value, 0.0, 1.0)


@FAST
@given(ANYTHING)
def test_head_fusion_property(value):
    if isinstance(value, str) and value.strip().lower() in ("mean", "max", "min"):
        assert v.head_fusion(value) == value.strip().lower()
    else:
        with pytest.raises(InputError) as caught:
            v.head_fusion(value)
        check_refusal(caught.value, "head_fusion", value)


@FAST
@given(ANYTHING)
def test_model_name_property(value):
    try:
        result = v.model_name(value)
    except InputError as err:
        check_refusal(err, "model", value)
    else:
        assert result in PRESETS
        assert isinstance(value, str)


# --------------------------------------------------------------------------- examples


@pytest.mark.parametrize("value", [16, 16.0, "16", " 16 ", "16.0", "1.6e1", np.int64(16), np.float32(16.0)])
def test_patch_size_accepts(value):
    assert v.patch_size(value) == 16
    assert type(v.patch_size(value)) is int


@pytest.mark.parametrize(
    "value",
    [3.5, 3, 65, 0, -16, True, False, float("nan"), float("inf"), -float("inf"), 10**100, 1e300,
     None, "abc", "", "16px", "0x10", [16], (16,), {16}, np.bool_(True), "nan", "inf", 16.5],
)
def test_patch_size_refuses(value):
    with pytest.raises(InputError) as caught:
        v.patch_size(value)
    check_refusal(caught.value, "patch_size", value)
    assert "from 4 to 64" in str(caught.value)


def test_patch_size_message_exactly():
    with pytest.raises(InputError) as caught:
        v.patch_size(3.5)
    assert str(caught.value) == "patch_size must be an integer from 4 to 64, got 3.5"


def test_long_values_are_cut_in_messages():
    with pytest.raises(InputError) as caught:
        v.patch_size("x" * 10_000)
    assert len(str(caught.value)) < 200
    assert str(caught.value).endswith("...")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("vit_b_16", "vit_b_16"), ("ViT-B/16", "vit_b_16"), ("vit-l/32", "vit_l_32"), ("VIT-H/14", "vit_h_14"),
     (" vit_b_32 ", "vit_b_32"), ("ViT L 16", "vit_l_16")],
)
def test_model_name_accepts(value, expected):
    assert v.model_name(value) == expected


def test_every_display_name_maps_back():
    for key, display in DISPLAY_NAMES.items():
        assert v.model_name(display) == key
        assert v.model_name(key.upper()) == key


@pytest.mark.parametrize("value", ["resnet50", "", "vit_b_8", "vit", None, 16, ["vit_b_16"]])
def test_model_name_refuses_and_lists_the_choices(value):
    with pytest.raises(InputError) as caught:
        v.model_name(value)
    message = str(caught.value)
    check_refusal(caught.value, "model", value)
    for key, display in DISPLAY_NAMES.items():
        assert key in message and display in message


def test_depth_names_the_models_layer_count():
    assert v.depth(12, 12) == 12
    assert v.depth("1", 24) == 1
    with pytest.raises(InputError,
                       match=r"depth must be an integer from 1 to 12 \(the model has L=12 layers\), got 13"):
        v.depth(13, 12)
    with pytest.raises(InputError, match="got 0"):
        v.depth(0, 12)


def test_setting_keeps_the_checkpoints_own_for_none():
    for name, native in PRESETS.items():
        s = v.setting(DISPLAY_NAMES[name])
        assert (s.name, s.patch_size, s.depth) == (name, native.patch_size, native.num_layers)
        assert s.native is native and s.display_name == DISPLAY_NAMES[name]
        assert s.config == native  # at its own patch size and depth, the family's own model


def test_setting_normalises_and_derives_the_config():
    s = v.setting("ViT-B/16", "24", 6.0)
    assert s == v.Setting("vit_b_16", 24, 6) and type(s.patch_size) is int and type(s.depth) is int
    assert s.grid == 9  # round(224 / 24)
    config = s.config
    assert (config.patch_size, config.image_size, config.num_layers, config.grid_size) == (24, 216, 6, 9)
    assert config.embed_dim == PRESETS["vit_b_16"].embed_dim
    with pytest.raises(AttributeError):
        s.depth = 1  # frozen: validated once, never changed after
    assert len({v.setting("vit_b_16", 16, 12), v.setting("ViT-B/16")}) == 1  # one key for every spelling


def test_setting_refuses_with_the_parameters_own_messages():
    """The first bad value is named, in the message its own validator gives."""
    with pytest.raises(InputError) as caught:
        v.setting("resnet50", 3, 99)
    check_refusal(caught.value, "model", "resnet50")
    with pytest.raises(InputError) as caught:
        v.setting("vit_b_16", 3.5, 99)
    assert str(caught.value) == "patch_size must be an integer from 4 to 64, got 3.5"
    with pytest.raises(InputError) as caught:
        v.setting("vit_tiny_shapes", 40)
    assert str(caught.value) == "patch_size must be an integer from 4 to 32 for ViT-Tiny shapes, got 40"
    with pytest.raises(InputError) as caught:
        v.setting("vit_l_16", None, 25)
    assert str(caught.value) == "depth must be an integer from 1 to 24 (the model has L=24 layers), got 25"


@FAST
@given(st.sampled_from(sorted(PRESETS)), ANYTHING, ANYTHING)
def test_setting_property(name, patch_size, depth):
    """setting() accepts exactly what model_name, patch_size and depth accept, None meaning the native one."""
    native = PRESETS[name]
    try:
        want = (v.patch_size(patch_size, name) if patch_size is not None else native.patch_size,
                v.depth(depth, native.num_layers) if depth is not None else native.num_layers)
    except InputError as err:
        with pytest.raises(InputError) as caught:
            v.setting(name, patch_size, depth)
        assert str(caught.value) == str(err)
    else:
        assert v.setting(name, patch_size, depth) == v.Setting(name, *want)


def test_top_k_range():
    assert v.top_k(1) == 1
    assert v.top_k(20) == 20
    assert v.top_k("5", num_classes=5) == 5
    with pytest.raises(InputError, match="top_k must be an integer from 1 to 20, got 21"):
        v.top_k(21)
    with pytest.raises(InputError, match="from 1 to 5, got 6"):
        v.top_k(6, num_classes=5)


@pytest.mark.parametrize(("value", "expected"), [("mean", "mean"), ("MAX", "max"), (" Min ", "min")])
def test_head_fusion_accepts(value, expected):
    assert v.head_fusion(value) == expected


def test_head_fusion_lists_the_choices():
    with pytest.raises(InputError) as caught:
        v.head_fusion("avg")
    assert str(caught.value) == "head_fusion must be one of 'mean', 'max', 'min', got 'avg'"


@pytest.mark.parametrize(("value", "expected"), [(0, 0.0), (0.99, 0.99), ("0.5", 0.5), (-0.0, 0.0), ("9e-1", 0.9)])
def test_discard_ratio_accepts(value, expected):
    result = v.discard_ratio(value)
    assert result == expected and type(result) is float
    assert math.copysign(1.0, result) == 1.0


@pytest.mark.parametrize("value", [1, 0.995, -0.01, float("nan"), True, "half", None])
def test_discard_ratio_refuses(value):
    with pytest.raises(InputError, match=r"discard_ratio must be a number from 0 to 0\.99, got"):
        v.discard_ratio(value)


def test_layer_is_one_based():
    assert v.layer(1, 12) == 1
    assert v.layer(12, 12) == 12
    with pytest.raises(InputError, match="layer must be an integer from 1 to 12 .*1-based.*got 0"):
        v.layer(0, 12)
    with pytest.raises(InputError, match="got 13"):
        v.layer(13, 12)


def test_head_is_one_based():
    assert v.head(1, 12) == 1
    assert v.head(12, 12) == 12
    with pytest.raises(InputError,
                       match=r"head must be an integer from 1 to 12 \(1-based; the model has h=12 heads\), got 0"):
        v.head(0, 12)
    with pytest.raises(InputError, match="got 13"):
        v.head(13, 12)


def test_opacity():
    assert v.opacity(0) == 0.0
    assert v.opacity(1) == 1.0
    assert v.opacity("0.25") == 0.25
    with pytest.raises(InputError, match=r"opacity must be a number from 0 to 1, got 1\.5"):
        v.opacity(1.5)


def test_messages_share_one_format():
    pattern = re.compile(r"^\w+ must be (an integer|a number) from \S+ to \S+.*, got .+$")
    calls = [
        lambda: v.patch_size(99), lambda: v.depth(99, 12), lambda: v.top_k(99), lambda: v.layer(99, 12),
        lambda: v.head(99, 12), lambda: v.discard_ratio(9),
        lambda: v.opacity(9),
    ]
    for call in calls:
        with pytest.raises(InputError) as caught:
            call()
        assert pattern.match(str(caught.value)), str(caught.value)
