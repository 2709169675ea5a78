"""Plots drawn with PIL: the early-exit depth plot and its text layout, axes, grouped bars, a dot plot,
a line plot (:class:`Series`) and the pre-norm block diagram of chapter 11.4.1.

Drawn with PIL rather than matplotlib: a matplotlib figure costs ~150 ms per request on two
cores, these ~5 ms. Fonts, the palette and text fitting are :mod:`vit.views.draw`'s; this
module imports it, never the other way round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from vit import i18n
from vit.views.draw import BAR_FONT, INK, LANGUAGE, PALETTE, fit_text, font

# --------------------------------------------------------------------------- the depth plot

BLUE, ORANGE = (0, 114, 178), (230, 159, 0)  # Okabe-Ito: safe for colour-blind viewers
LABEL_INK = (150, 95, 0)
_PLOT_MARGINS = (56, 20, 66, 60)  # left, right, top, bottom px around the axes
_LABEL_MAX_PX = 150  # a class name longer than this is cut with "…"


@dataclass(frozen=True)
class PlotText:
    """One piece of text of the depth plot: where its anchor is, and the box it covers."""

    xy: tuple[float, float]
    text: str
    anchor: str  # PIL's text anchor
    box: tuple[float, float, float, float]  # (x0, y0, x1, y1)
    kind: str  # "legend", "axis", "tick" or "label"
    size: int = 16
    fill: tuple[int, int, int] = (30, 30, 30)


_LEGEND_LINE = 22  # px between the legend's lines, when its two entries do not fit on one
_LEGEND_NAME_MIN = 60  # px: a final class name cut shorter than this on one line moves the top-1 to a line of its own


def _legend(final_label: str, width: int) -> list[tuple[tuple[int, int, int], str, int]]:
    """The depth plot's legend: (colour, text, line) for the final answer and the top-1, the final class name cut
    with "…" to what is left. On one line where the name keeps at least :data:`_LEGEND_NAME_MIN` px of it, else one
    line each (a narrow plot: a laptop in projector mode), where nothing runs off the picture."""
    f = font(16, bold=False)
    lang = LANGUAGE.get()  # the picture's language (vit.views.draw.language)
    top1, final_words = i18n.text("plot-top1", lang), i18n.text("plot-final", lang)
    left, right = _PLOT_MARGINS[0], _PLOT_MARGINS[1]
    room = width - left - right - 20  # after the first swatch
    one_line = room - 24 - 20 - f.getlength(top1) - f.getlength(final_words)  # the name's room beside the top-1
    if one_line >= min(_LEGEND_NAME_MIN, f.getlength(final_label)):
        return [(BLUE, final_words + fit_text(final_label, f, one_line), 0), (ORANGE, top1, 0)]
    final = final_words + fit_text(final_label, f, room - f.getlength(final_words))
    return [(BLUE, final, 0), (ORANGE, fit_text(top1, f, room), 1)]


def _plot_top(final_label: str, width: int) -> int:
    """The depth plot's top margin: its legend's lines above the axes."""
    return _PLOT_MARGINS[2] + _LEGEND_LINE * max(line for _, _, line in _legend(final_label, width))


def depth_axes(n: int, size: tuple[int, int], top: int = _PLOT_MARGINS[2]):
    """x of layer i (0-based) and y of probability p, in pixels (``top``: the margin above the axes)."""
    W, H = size
    left, right, _, bottom = _PLOT_MARGINS

    def x_at(i: int) -> float:
        return left + (W - left - right) * (i + 0.5) / n

    def y_at(p: float) -> float:
        return top + (H - top - bottom) * (1.0 - p)

    return x_at, y_at


def _text(xy, text: str, anchor: str, kind: str, size: int = 16, bold: bool = True, fill=(30, 30, 30)) -> PlotText:
    f = font(size, bold)
    box = ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox(xy, text, font=f, anchor=anchor)
    return PlotText(xy, text, anchor, tuple(float(v) for v in box), kind, size, fill)


def _overlaps(a, b, pad: float = 2) -> bool:
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def _inside(box, size, margin: float = 2) -> bool:
    return box[0] >= margin and box[1] >= margin and box[2] <= size[0] - margin and box[3] <= size[1] - margin


def depth_texts(layers: Sequence[int], top1_probs: Sequence[float], top1_labels: Sequence[str],
                final_probs: Sequence[float], final_label: str, size: tuple[int, int] = (720, 360)) -> list[PlotText]:
    """Every text of the depth plot, laid out so that none overlaps another or leaves the picture.

    Legend, axis titles and ticks first; then the class names of the top-1 points: the
    last layer's, then each layer where the top-1 class changes (a name holds until the
    next one; the same name within two layers of where it is written already is left out).
    A name is cut with "…" past 150 px and put at the first free spot of
    :func:`_label_spots` around its point; where none is free it is skipped: no name
    overlaps another text, covers a point or leaves the plot.
    """
    W, H = size
    n = len(layers)
    left, right, _, bottom = _PLOT_MARGINS
    top = _plot_top(final_label, W)
    x_at, y_at = depth_axes(n, size, top)
    texts: list[PlotText] = []
    f = font(16, bold=False)
    lang = LANGUAGE.get()  # the picture's language (vit.views.draw.language)

    # The legend at the top: on one line where it fits, else one line each (:func:`_legend`).
    x, last = left, 0
    for _, text, line in _legend(final_label, W):
        if line != last:  # a line of its own
            x, last = left, line
        texts.append(_text((x + 20, 20 + line * _LEGEND_LINE), text, "lm", "legend", bold=False))
        x = texts[-1].box[2] + 24
    texts.append(_text((8, top - 14), i18n.text("plot-probability", lang), "ls", "axis"))
    centre = (left + W - right) / 2
    title = fit_text(i18n.text("plot-layer", lang), font(16), 2 * (W - centre) - 8)
    texts.append(_text((centre, H - 10), title, "ms", "axis"))
    for k in range(6):
        texts.append(_text((left - 8, y_at(k / 5)), f"{k / 5:.1f}", "rm", "tick", bold=False))
    step = 1
    widest = max(f.getlength(str(v)) for v in layers)
    while (widest + 10) > step * (W - left - right) / n:
        step += 1
    for i, layer in enumerate(layers):
        if i % step == 0:
            texts.append(_text((x_at(i), H - bottom + 8), str(layer), "mt", "tick", bold=False))

    placed = [t.box for t in texts]
    for probs in (top1_probs, final_probs):  # the points themselves are never covered
        placed += [(x_at(i) - 5, y_at(float(p)) - 5, x_at(i) + 5, y_at(float(p)) + 5) for i, p in enumerate(probs)]
    changes = [i for i in range(n) if i == 0 or top1_labels[i] != top1_labels[i - 1]]
    named: dict[int, str] = {}  # layer index -> class named there
    for i in dict.fromkeys([n - 1, *changes]):  # the final layer first, then each change, in order
        if any(named.get(j) == top1_labels[i] for j in range(i - 2, i + 3)):
            continue  # the same name a layer or two away says nothing new
        label = fit_text(top1_labels[i], font(15, bold=False), _LABEL_MAX_PX)
        x, y = x_at(i), y_at(float(top1_probs[i]))
        for xy, anchor in _label_spots(x, y):
            t = _text(xy, label, anchor, "label", 15, bold=False, fill=LABEL_INK)
            t = _shift_into(t, left, W - right)
            if _inside(t.box, size) and t.box[3] <= H - bottom and t.box[1] >= top - 10 \
                    and not any(_overlaps(t.box, b) for b in placed):
                texts.append(t)
                placed.append(t.box)
                named[i] = top1_labels[i]
                break
    return texts


def _label_spots(x: float, y: float) -> list[tuple[tuple[float, float], str]]:
    """Where a point's name may go, best first: above it (centred, then starting or ending at it), higher, below."""
    spots = []
    for dy, v in ((-9, "d"), (-26, "d"), (9, "a")):
        spots += [((x, y + dy), "m" + v), ((x - 6, y + dy), "l" + v), ((x + 6, y + dy), "r" + v)]
    return spots


def _shift_into(t: PlotText, x0: float, x1: float) -> PlotText:
    """The same text moved sideways so that it lies between x0 and x1 (a name near an edge)."""
    dx = max(0.0, x0 - t.box[0]) - max(0.0, t.box[2] - x1)
    if not dx:
        return t
    xy = (t.xy[0] + dx, t.xy[1])
    box = (t.box[0] + dx, t.box[1], t.box[2] + dx, t.box[3])
    return PlotText(xy, t.text, t.anchor, box, t.kind, t.size, t.fill)


def depth_plot(layers: Sequence[int], top1_probs: Sequence[float], top1_labels: Sequence[str],
               final_probs: Sequence[float], final_label: str, size: tuple[int, int] = (720, 360)) -> Image.Image:
    """How the prediction forms across depth: early-exit top-1 and the final class, per layer.

    Drawn with PIL (a matplotlib figure costs ~150 ms per request on two cores; this, ~5 ms).
    Blue circles: probability of the final answer after each layer; orange squares:
    probability of whatever is top-1 at that layer, labelled with its class where it
    changes (:func:`depth_texts` places every text).
    """
    W, H = size
    left, right, _, bottom = _PLOT_MARGINS
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    n = len(layers)
    top = _plot_top(final_label, W)
    x_at, y_at = depth_axes(n, size, top)
    for k in range(6):  # horizontal grid
        y = y_at(k / 5)
        draw.line([(left, y), (W - right, y)], fill=(225, 225, 225), width=1)
    draw.line([(left, top), (left, H - bottom), (W - right, H - bottom)], fill=(90, 90, 90), width=2)
    for probs, colour, marker, width in ((top1_probs, ORANGE, "square", 2), (final_probs, BLUE, "circle", 3)):
        points = [(x_at(i), y_at(float(p))) for i, p in enumerate(probs)]
        if len(points) > 1:
            draw.line(points, fill=colour, width=width)
        for x, y in points:
            box = [x - 4, y - 4, x + 4, y + 4]
            (draw.ellipse if marker == "circle" else draw.rectangle)(box, fill=colour)
    texts = depth_texts(layers, top1_probs, top1_labels, final_probs, final_label, size)
    legend = [t for t in texts if t.kind == "legend"]
    for colour, t in zip((BLUE, ORANGE), legend):
        x, y = t.xy[0] - 20, t.xy[1]
        draw.rectangle([x, y - 7, x + 14, y + 7], fill=colour)
    for t in texts:
        f = font(t.size, bold=t.kind == "axis")
        if t.kind == "label":  # a white halo keeps a name readable over the grid and the lines
            draw.rectangle([t.box[0] - 1, t.box[1] - 1, t.box[2] + 1, t.box[3] + 1], fill=(255, 255, 255))
        draw.text(t.xy, t.text, fill=t.fill, font=f, anchor=t.anchor)
    return img


# --------------------------------------------------------------------------- axes, bars, dots and lines


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is >= ``value`` (an axis end with round ticks)."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= value * (1 - 1e-9))


def _axes(draw: ImageDraw.ImageDraw, size: tuple[int, int], y_max: float, y_label: str, x_label: str,
          margins=(64, 20, 50, 56), label_over_axis: bool = False):
    """Draw axes, a y grid with 5 ticks from 0 to ``y_max`` rounded up to a round number; return (x0, x1, y_at)."""
    y_max = nice_ceiling(y_max)
    W, H = size
    left, right, top, bottom = margins
    f = font(BAR_FONT, bold=False)

    def y_at(v: float) -> float:
        return H - bottom - (H - top - bottom) * (v / y_max if y_max > 0 else 0.0)

    for k in range(6):
        y = y_at(y_max * k / 5)
        draw.line([(left, y), (W - right, y)], fill=(225, 225, 225), width=1)
        draw.text((left - 6, y), f"{y_max * k / 5:.3g}", fill=INK, font=f, anchor="rm")
    draw.line([(left, top), (left, H - bottom), (W - right, H - bottom)], fill=(90, 90, 90), width=2)
    # The y label in the left margin's corner, or over the axis (clear of the ticks) where a legend sits above.
    if label_over_axis:
        draw.text((left, top - 8), fit_text(y_label, font(BAR_FONT), W - left - 4), fill=INK, font=font(BAR_FONT),
                  anchor="ls")
    else:
        draw.text((8, top - 4), y_label, fill=INK, font=font(BAR_FONT), anchor="ls")
    draw.text(((left + W - right) / 2, H - 8), x_label, fill=INK, font=font(BAR_FONT), anchor="ms")
    return left, W - right, y_at


def _x_ticks(draw, xs: Sequence[float], labels: Sequence[str], y: float) -> None:
    f = font(BAR_FONT, bold=False)
    step = 1
    widest = max((f.getlength(t) for t in labels), default=0)
    while len(xs) > 1 and (widest + 10) > step * (xs[1] - xs[0]):
        step += 1
    for i, (x, t) in enumerate(zip(xs, labels)):
        if i % step == 0:
            draw.text((x, y + 6), t, fill=INK, font=f, anchor="mt")


SERIES_COLOURS = tuple(PALETTE[i] for i in (4, 0, 2, 5))  # grouped_bars' colours, series by series


def grouped_bars(values: np.ndarray, series: Sequence[str], x_labels: Sequence[str], x_label: str, y_label: str,
                 size: tuple[int, int] = (800, 400)) -> Image.Image:
    """One group of bars per row of ``values`` (n, s), one colour per series, legend on top."""
    values = np.asarray(values, dtype=np.float64)
    n, s = values.shape
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    y_max = float(values.max()) if values.size else 1.0
    f = font(BAR_FONT, bold=False)
    legend = _legend_rows(series, f, 64, size[0])  # on top, in as many rows as the width needs
    top = min(legend[-1][0][1] + 14 + 40 if legend else 50, max(20, size[1] - 56 - 40))  # 40 px of bars at least
    x0, x1, y_at = _axes(draw, size, y_max, y_label, x_label, margins=(64, 20, top, 56), label_over_axis=True)
    group = (x1 - x0) / n
    bar = max(1.0, group * 0.8 / s)
    centres = []
    for i in range(n):
        start = x0 + group * i + group * 0.1
        centres.append(start + bar * s / 2)
        for j in range(s):
            draw.rectangle([start + j * bar, y_at(values[i, j]), start + (j + 1) * bar - 1, y_at(0)],
                           fill=SERIES_COLOURS[j % 4])
    _x_ticks(draw, centres, x_labels, y_at(0))
    for (x, y), j, name in legend:
        draw.rectangle([x, y, x + 14, y + 14], fill=SERIES_COLOURS[j % 4])
        draw.text((x + 20, y + 7), name, fill=INK, font=f, anchor="lm")
    return img


def _legend_rows(series: Sequence[str], f, x0: int, width: int) -> list[tuple[tuple[int, int], int, str]]:
    """Where each series' swatch goes: in a row from ``x0``, wrapping onto the next row at ``width``."""
    out, x, y = [], x0, 12
    for j, name in enumerate(series):
        w = 20 + f.getlength(name) + 22
        if x > x0 and x + w - 22 > width - 8:
            x, y = x0, y + 22
        out.append(((int(x), y), j, name))
        x += w
    return out


def dot_plot(xs: Sequence[float], ys: Sequence[float], x_ticks: Sequence[int], x_label: str, y_label: str,
             y_max: float, size: tuple[int, int] = (800, 400)) -> Image.Image:
    """One dot per (x, y), x among ``x_ticks`` (categories, e.g. layers), y from 0 to ``y_max``."""
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    x0, x1, y_at = _axes(draw, size, y_max, y_label, x_label, label_over_axis=True)  # narrow frames: clear of ticks
    n = len(x_ticks)
    x_of = {t: x0 + (x1 - x0) * (i + 0.5) / n for i, t in enumerate(x_ticks)}
    for x, y in zip(xs, ys):
        cx, cy = x_of[x], y_at(float(y))
        draw.ellipse([cx - 5, cy - 5, cx + 5, cy + 5], fill=BLUE, outline=(255, 255, 255))
    _x_ticks(draw, list(x_of.values()), [str(t) for t in x_ticks], y_at(0))
    return img


def _dashed(draw: ImageDraw.ImageDraw, points: Sequence[tuple[float, float]], fill, width: int,
            dash: float = 9) -> None:
    """A polyline drawn in dashes of ``dash`` px (gaps as long), continuing across its corners."""
    on, left = True, dash
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        length = math.hypot(x1 - x0, y1 - y0)
        t = 0.0
        while t < length:
            step = min(left, length - t)
            if on:
                a, b = t / length, (t + step) / length
                draw.line([(x0 + (x1 - x0) * a, y0 + (y1 - y0) * a), (x0 + (x1 - x0) * b, y0 + (y1 - y0) * b)],
                          fill=fill, width=width)
            t += step
            left -= step
            if left <= 0:
                on, left = not on, dash


@dataclass(frozen=True)
class Series:
    """One line of :func:`line_plot`."""

    name: str  # in the legend
    xs: Sequence[float]  # in [0, 1]
    ys: Sequence[float]
    colour: tuple[int, int, int]
    dashed: bool = False  # a reference line (e.g. random order), drawn in dashes with hollow markers


def line_plot(series: Sequence[Series], x_label: str, y_label: str, y_max: float = 1.0,
              size: tuple[int, int] = (800, 400)) -> Image.Image:
    """Lines over x in [0, 1] (ticks in per cent), y from 0 to ``y_max``, legend on top (on as many lines as it
    needs: the axes start below its last)."""
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    f = font(BAR_FONT, bold=False)
    left = 64
    places, x, y = [], left, 14
    for s in series:  # the legend, wrapped onto another line where it does not fit
        width = 34 + f.getlength(s.name) + 18
        if x + width > size[0] - 8 and x > left:
            x, y = left, y + 24
        places.append((x, y))
        x += width
    x0, x1, y_at = _axes(draw, size, y_max, y_label, x_label, margins=(left, 24, y + 52, 56))
    ticks = [i / 5 for i in range(6)]
    _x_ticks(draw, [x0 + (x1 - x0) * t for t in ticks], [f"{t:.0%}" for t in ticks], y_at(0))
    for s in series:
        points = [(x0 + (x1 - x0) * float(x), y_at(float(y))) for x, y in zip(s.xs, s.ys)]
        if s.dashed:
            _dashed(draw, points, s.colour, 2)
        elif len(points) > 1:
            draw.line(points, fill=s.colour, width=3)
        for x, y in points:
            draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill="white" if s.dashed else s.colour, outline=s.colour,
                         width=2)
    for s, (x, y) in zip(series, places):
        if s.dashed:
            _dashed(draw, [(x, y), (x + 26, y)], s.colour, 2, dash=5)
        else:
            draw.line([(x, y), (x + 26, y)], fill=s.colour, width=3)
        draw.text((x + 32, y), s.name, fill=INK, font=f, anchor="lm")
    return img


# --------------------------------------------------------------------------- the block diagram (11.4.1)


def block_diagram(stream: str, attention: str, mlp: str, output: str, title: str,
                  width: int = 800) -> Image.Image:
    """The pre-norm block as the chapter writes it, numbers on its arrows.

    H = X + MSA(LN(X)) on the first row, Y = H + MLP(LN(H)) on the second; the residual
    path of each row is drawn over it. The four strings are put where those vectors flow:
    ``stream`` under X, ``attention`` on MSA's output, ``mlp`` on the MLP's, ``output`` under Y.
    """
    height = 250
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    f, small, big = font(16), font(14, bold=False), font(17)
    ink, grey = (30, 30, 30), (90, 90, 90)
    draw.text((10, 8), fit_text(title, big, width - 20), fill=ink, font=big)
    boxes = ["LayerNorm", "MSA", "+"], ["LayerNorm", "MLP", "+"]
    x_in, x_out = 14, width - 14
    step = (x_out - x_in - 70) / 4
    for row, (names, start, end, branch, colour) in enumerate(
            ((boxes[0], "X", "H", attention, SERIES_COLOURS[1]), (boxes[1], "H", "Y", mlp, SERIES_COLOURS[2]))):
        y = 90 + row * 100
        xs = [x_in + 40 + step * (i + 1) for i in range(3)]
        draw.text((x_in, y), start, fill=ink, font=big, anchor="lm")
        draw.text((x_out, y), end, fill=ink, font=big, anchor="rm")
        draw.line([(x_in + 22, y), (x_out - 24, y)], fill=grey, width=2)
        for x, name in zip(xs, names):
            if name == "+":
                draw.ellipse([x - 13, y - 13, x + 13, y + 13], fill="white", outline=ink, width=2)
                draw.text((x, y), "+", fill=ink, font=big, anchor="mm")
            else:
                w = draw.textlength(name, font=f) / 2 + 10
                draw.rounded_rectangle([x - w, y - 15, x + w, y + 15], radius=6, fill=(238, 242, 248), outline=ink)
                draw.text((x, y), name, fill=ink, font=f, anchor="mm")
        # The residual path: from the row's input over the boxes into the "+".
        top = y - 34
        draw.line([(x_in + 30, y - 8), (x_in + 30, top), (xs[2], top), (xs[2], y - 14)], fill=grey, width=2)
        draw.text(((x_in + 30 + xs[2]) / 2, top - 3), i18n.text("residual-path", LANGUAGE.get()), fill=grey,
                  font=small, anchor="md")
        draw.text(((xs[1] + xs[2]) / 2, y + 20), branch, fill=colour, font=f, anchor="ma")
    draw.text((x_in, 90 + 22), stream, fill=SERIES_COLOURS[0], font=f, anchor="la")
    # Narrow, the MLP's number would run into it: a line lower.
    draw.text((x_out, 190 + (22 if width >= 600 else 44)), output, fill=SERIES_COLOURS[3], font=f, anchor="ra")
    return img
