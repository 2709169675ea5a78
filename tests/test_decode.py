"""vit.serve.decode: decodes admitted against a memory budget, first come first served; and
vit.images.decode_cost, the header's estimate that the budget admits by, checked against a real peak."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import ROOT
from PIL import Image

from vit.errors import InputError
from vit.images import decode_cost
from vit.serve import decode
from vit.serve.decode import DecodeBudget, DecodeTooLarge, DecodeWaitedTooLong, load_image_bounded


def wait_until(condition, seconds=5.0):
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.002)


def test_concurrent_admissions_never_exceed_the_budget():
    budget = DecodeBudget(100)
    lock, state = threading.Lock(), {"now": 0, "most": 0, "runs": 0}
    costs = [int(c) for c in np.random.default_rng(0).integers(5, 70, 40)]

    def work(cost):
        with budget.admit(cost, timeout=30):
            with lock:
                state["now"] += cost
                state["most"] = max(state["most"], state["now"])
            time.sleep(0.005)
            with lock:
                state["now"] -= cost
                state["runs"] += 1

    threads = [threading.Thread(target=work, args=(c,)) for c in costs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["runs"] == len(costs)
    assert state["most"] <= 100
    assert state["most"] > 70  # decodes did run together: the gate is not one at a time
    assert budget.in_use == 0 and budget.waiting == 0


def test_first_come_first_served_a_small_decode_does_not_overtake():
    """With 8 of 10 held, a 5 that waits is not overtaken by a 1 that came after it (which would fit)."""
    budget, order = DecodeBudget(10), []

    def work(name, cost):
        with budget.admit(cost, timeout=10):
            order.append(name)

    with budget.admit(8):
        first = threading.Thread(target=work, args=("five", 5))
        first.start()
        wait_until(lambda: budget.waiting == 1)
        second = threading.Thread(target=work, args=("one", 1))
        second.start()
        wait_until(lambda: budget.waiting == 2)
        time.sleep(0.05)
        assert order == []  # the 1 fits (8 + 1 <= 10) but waits its turn behind the 5
    first.join()
    second.join()
    assert order == ["five", "one"]


def test_a_decode_larger_than_the_whole_budget_is_refused_before_it_starts():
    budget = DecodeBudget(10**9)
    with pytest.raises(DecodeTooLarge) as caught:
        with budget.admit(3_200_000_000):
            pytest.fail("admitted")
    message = str(caught.value)
    assert "3.20 GB" in message and "budget of 1.00 GB" in message and "\n" not in message
    assert isinstance(caught.value, InputError)
    assert budget.in_use == 0 and budget.waiting == 0


def test_the_budget_is_released_on_exception():
    budget = DecodeBudget(10)
    with pytest.raises(RuntimeError):
        with budget.admit(7):
            assert budget.in_use == 7
            raise RuntimeError("the decoder failed")
    assert budget.in_use == 0
    with budget.admit(10, timeout=0):  # the whole budget is free again
        pass


def test_a_wait_times_out_and_leaves_the_line():
    budget = DecodeBudget(10)
    with budget.admit(10):
        started = time.monotonic()
        with pytest.raises(DecodeWaitedTooLong, match="waited 0.05 s"):
            with budget.admit(1, timeout=0.05):
                pytest.fail("admitted")
        assert time.monotonic() - started >= 0.04  # it waited its timeout, then left
        assert budget.waiting == 0
    with budget.admit(10, timeout=0):
        pass


def test_give_up_stops_the_wait():
    budget, asked = DecodeBudget(10), []

    def give_up():
        asked.append(1)
        return len(asked) > 2

    with budget.admit(10):
        with pytest.raises(DecodeWaitedTooLong, match="given up"):
            with budget.admit(1, timeout=None, give_up=give_up):
                pytest.fail("admitted")
    assert len(asked) == 3 and budget.waiting == 0


@pytest.mark.parametrize(("value", "expected"), [(None, 1_000_000_000), ("0.5", 500_000_000), (" 2 ", 2 * 10**9)])
def test_the_budget_comes_from_the_environment(value, expected):
    env = {} if value is None else {decode.BUDGET_ENV: value}
    assert decode.budget_bytes(env) == expected


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "lots"])
def test_a_bad_budget_variable_is_one_sentence(value):
    expected = rf"VIT_DECODE_BUDGET_GB must be a number of gigabytes greater than 0, got '{value}'"
    with pytest.raises(ValueError, match=expected):
        decode.budget_bytes({decode.BUDGET_ENV: value})


def png_bytes(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


class RecordingBudget(DecodeBudget):
    def __init__(self, max_bytes):
        super().__init__(max_bytes)
        self.asked = []

    def admit(self, cost_bytes, **kwargs):
        self.asked.append(cost_bytes)
        return super().admit(cost_bytes, **kwargs)


def test_load_image_bounded_admits_the_headers_cost_then_decodes():
    data = png_bytes(Image.new("RGBA", (300, 200), (255, 0, 0, 255)))
    budget = RecordingBudget(10**9)
    img = load_image_bounded(data, budget)
    assert img.mode == "RGB" and img.size == (300, 200) and img.getpixel((5, 5)) == (255, 0, 0)
    assert budget.asked == [decode_cost(data).peak_bytes]
    assert budget.in_use == 0


def test_load_image_bounded_refuses_before_decoding(monkeypatch):
    from vit import images

    def never(self):
        pytest.fail("decoded although refused")

    monkeypatch.setattr(images.PendingDecode, "decode", never)
    data = png_bytes(Image.new("RGB", (2000, 1500)))
    with pytest.raises(DecodeTooLarge, match="decode budget"):
        load_image_bounded(data, DecodeBudget(1_000_000))
    with pytest.raises(InputError, match="JPEG 2000 files are not supported"):
        buf = io.BytesIO()
        Image.new("RGB", (8, 8)).save(buf, "JPEG2000")
        load_image_bounded(buf.getvalue(), DecodeBudget(10**9))


def test_load_image_bounded_takes_paths_and_in_memory_images(tmp_path):
    path = tmp_path / "red.png"
    path.write_bytes(png_bytes(Image.new("RGB", (30, 20), (255, 0, 0))))
    budget = RecordingBudget(10**9)
    assert load_image_bounded(path, budget).getpixel((1, 1)) == (255, 0, 0)
    assert load_image_bounded(Image.new("L", (4, 4), 9), budget).getpixel((0, 0)) == (9, 9, 9)
    assert len(budget.asked) == 1  # the PIL image was already decoded: nothing to admit


def test_the_default_budget_is_one_per_process(monkeypatch):
    monkeypatch.setattr(decode, "_DEFAULT", None)
    monkeypatch.setenv(decode.BUDGET_ENV, "0.25")
    assert decode.default_budget() is decode.default_budget()
    assert decode.default_budget().max_bytes == 250_000_000


# --------------------------------------------------------------------------- the estimate against the real peak

PEAK = r"""
import sys, time
from vit.images import decode_cost, load_image
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
data = open(sys.argv[1], "rb").read()
estimate = decode_cost(data).peak_bytes
base = hwm()
load_image(data)
print(hwm() - base, estimate)
"""


def _gradient(mode: str, size=(3000, 2400)) -> Image.Image:
    grey = Image.linear_gradient("L").resize(size)
    if mode == "I;16":
        return Image.fromarray(np.asarray(grey).astype(np.uint16) * 257)
    if mode == "RGBA":
        return Image.merge("RGBA", [grey, grey.transpose(Image.Transpose.ROTATE_180), grey, grey])
    return grey.convert(mode)


CASES = {
    "rgb.jpg": lambda p: _gradient("RGB").save(p, "JPEG", quality=90),
    "progressive.jpg": lambda p: _gradient("RGB").save(p, "JPEG", quality=90, progressive=True),
    "rgba.png": lambda p: _gradient("RGBA").save(p, "PNG", compress_level=1),
    "i16.png": lambda p: _gradient("I;16").save(p, "PNG", compress_level=1),
    "f.tiff": lambda p: _gradient("F").save(p, "TIFF", compression="tiff_adobe_deflate"),
    "rgba_lossless.webp": lambda p: _gradient("RGBA", (2000, 1600)).save(p, "WEBP", lossless=True, method=0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_decode_cost_is_within_a_factor_of_two_of_the_real_peak(tmp_path, name):
    """The peak RSS of a fresh process decoding the file (VmHWM) against the header's estimate."""
    path = tmp_path / name
    CASES[name](path)
    proc = subprocess.run([sys.executable, "-c", PEAK, str(path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    peak, estimate = (int(v) for v in proc.stdout.split())
    assert peak > 20e6, peak  # the decode did hold its pixels: the comparison means something
    assert peak / 2 <= estimate <= peak * 2, json.dumps({"peak": peak, "estimate": estimate})


def test_clients_take_turns_one_clients_line_holds_another_back_by_one_decode():
    """Issue 26: decodes are fair between clients. One client (a flood) holds the budget and has three more
    waiting; a student's photo that arrives after them is admitted after at most one of the flood's."""
    budget, order = DecodeBudget(10), []

    def work(name, client):
        with budget.admit(6, timeout=10, client=client):
            order.append(name)
            time.sleep(0.02)

    threads = []
    with budget.admit(6, client="10.0.0.66"):
        for i, (name, client) in enumerate([("flood 1", "10.0.0.66"), ("flood 2", "10.0.0.66"),
                                            ("flood 3", "10.0.0.66"), ("student", "10.0.0.2")]):
            threads.append(threading.Thread(target=work, args=(name, client)))
            threads[-1].start()
            wait_until(lambda i=i: budget.waiting == i + 1)
    for t in threads:
        t.join()
    assert order == ["flood 1", "student", "flood 2", "flood 3"]
    assert budget._last == {} and budget.in_use == 0  # nothing kept of clients that have gone
