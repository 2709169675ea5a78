"""Plots in PIL, far cheaper per request than matplotlib: depth plot, bars, dots, lines, the block diagram of 11.4.1."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from vit import i18n
from vit.views.draw import BAR_FONT, INK, PALETTE, font, wrap_text

BLUE, ORANGE = (0, 114, 178), (230, 159, 0)  # Okabe-Ito: safe for colour-blind viewers
LABEL_INK = (150, 95, 0)
_PLOT_MARGINS = (56, 20, 66, 60)  # left, right, top, bottom px around the axes


@dataclass(frozen=True)
class PlotText:
    """One text of the depth plot, its anchor and the box it covers."""

    xy: tuple[float, float]
    text: str
    anchor: str  # PIL's text anchor
    box: tuple[float, float, float, float]  # (x0, y0, x1, y1)
    kind: str  # "legend", "axis", "tick" or "label"
    size: int = 16
    fill: tuple[int, int, int] = (30, 30, 30)


_LEGEND_LINE = 22  # px between the legend's lines, when its two entries do not fit on one
_LEGEND_X = 8  # px: the legend's first swatch, at the picture's left edge (above the axis title)


def _legend(final_label: str, width: int, lang: str) -> list[tuple[tuple[int, int, int] | None, str, int]]:
    """(colour, text, line) of the depth plot's two entries: one line where both fit, else wrapped (None: no swatch)."""
    f = font(16, bold=False)
    entries = ((BLUE, i18n.text("plot-final", lang) + final_label), (ORANGE, i18n.text("plot-top1", lang)))
    room = width - _LEGEND_X - 20 - 8  # after a swatch
    if sum(f.getlength(t) for _, t in entries) + 24 + 20 <= room:
        return [(entries[0][0], entries[0][1], 0), (entries[1][0], entries[1][1], 0)]
    out: list[tuple[tuple[int, int, int] | None, str, int]] = []
    for colour, text in entries:
        for i, piece in enumerate(wrap_text(text, f, room)):
            out.append((colour if i == 0 else None, piece, len(out)))
    return out


def _plot_top(final_label: str, width: int, lang: str) -> int:
    """The depth plot's top margin: its legend's lines above the axes."""
    return _PLOT_MARGINS[2] + _LEGEND_LINE * max(line for _, _, line in _legend(final_label, width, lang))


_TWO_LINE_TITLE = 400  # px: a depth plot at least this high has room for its axis title on two lines


def _axis_title(size: tuple[int, int], lang: str) -> list[str]:
    """The x-axis title's lines: one, or two in a plot :data:`_TWO_LINE_TITLE` px high; else the short form."""
    W, H = size
    left, right = _PLOT_MARGINS[0], _PLOT_MARGINS[1]
    centre = (left + W - right) / 2
    room = 2 * min(centre, W - centre) - 8
    lines = wrap_text(i18n.text("plot-layer", lang), font(16), room)
    if len(lines) <= (2 if H >= _TWO_LINE_TITLE else 1):
        return lines
    return wrap_text(i18n.text("plot-layer-short", lang), font(16), room)


def _plot_bottom(size: tuple[int, int], lang: str) -> int:
    """The depth plot's bottom margin: the layer numbers and the axis title's lines under the axes."""
    return _PLOT_MARGINS[3] + _LEGEND_LINE * (len(_axis_title(size, lang)) - 1)


def depth_margins(final_label: str, size: tuple[int, int], lang: str = "en") -> tuple[int, int]:
    """(top, bottom) margins of :func:`depth_plot` at ``size``: the legend's lines above, the ticks and title below."""
    return _plot_top(final_label, size[0], lang), _plot_bottom(size, lang)


def depth_axes(n: int, size: tuple[int, int], top: int = _PLOT_MARGINS[2], bottom: int = _PLOT_MARGINS[3]):
    """(x_at, y_at): the px of layer i (0-based) and of probability p."""
    W, H = size
    left, right = _PLOT_MARGINS[0], _PLOT_MARGINS[1]

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


def depth_texts(layers: Sequence[int], top1_probs: Sequence[float], top1_labels: Sequence[str],
                final_probs: Sequence[float], final_label: str, size: tuple[int, int] = (720, 360),
                lang: str = "en") -> list[PlotText]:
    """Every text of the depth plot (legend, titles, ticks, the top-1's name where it changes), none overlapping."""
    W, H = size
    n = len(layers)
    left, right = _PLOT_MARGINS[0], _PLOT_MARGINS[1]
    top, bottom = depth_margins(final_label, size, lang)
    x_at, y_at = depth_axes(n, size, top, bottom)
    texts = _frame_texts(final_label, size, top, lang)
    f = font(16, bold=False)
    for p in _probability_ticks(y_at):
        texts.append(_text((left - 8, y_at(p)), f"{p:.1f}", "rm", "tick", bold=False))
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
    room = (left, top - 10, W - right, H - bottom)  # where a name may go
    for i in dict.fromkeys([n - 1, *changes]):  # the final layer first, then each change, in order
        if any(named.get(j) == top1_labels[i] for j in range(i - 2, i + 3)):
            continue  # the same name a layer or two away says nothing new
        name = _placed_name(top1_labels[i], (x_at(i), y_at(float(top1_probs[i]))), room, placed)
        texts += name
        placed += [t.box for t in name]
        if name:
            named[i] = top1_labels[i]
    return texts


def _placed_name(label: str, point: tuple[float, float], room, placed) -> list[PlotText]:
    """A point's name at the first free spot of :func:`_label_spots` inside ``room``: one line, else two; [] if none."""
    f = font(15, bold=False)
    words = label.split(" ")
    splits = [[label]] + ([[" ".join(words[:k]), " ".join(words[k:])] for k in
                           sorted(range(1, len(words)), key=lambda k: abs(f.getlength(" ".join(words[:k]))
                                                                        - f.getlength(" ".join(words[k:]))))][:1])
    for lines in splits:
        for xy, anchor in _label_spots(*point):
            if len(lines) > 1 and anchor[1] == "m":
                continue  # two lines go above or below the point only
            step = 17 if anchor[1] == "a" else -17  # the lines stack away from the point
            order = lines if anchor[1] == "a" else lines[::-1]
            group = [_shift_into(_text((xy[0], xy[1] + k * step), t, anchor, "label", 15, bold=False, fill=LABEL_INK),
                                 room[0], room[2]) for k, t in enumerate(order)]
            if all(t.box[0] >= room[0] - 0.5 and t.box[1] >= room[1] and t.box[2] <= room[2] + 0.5
                   and t.box[3] <= room[3] and not any(_overlaps(t.box, b) for b in placed) for t in group):
                return group
    return []


def _probability_ticks(y_at) -> list[float]:
    """Every 0.2, or 0.5, or only 0 and 1: what the axis's height keeps apart."""
    span = y_at(0.0) - y_at(1.0)
    steps = next((k for k in (5, 2) if span / k >= _LEGEND_LINE), 1)
    return [k / steps for k in range(steps + 1)]


def _frame_texts(final_label: str, size: tuple[int, int], top: int, lang: str) -> list[PlotText]:
    """The depth plot's legend (:func:`_legend`) and axis titles."""
    W, H = size
    texts: list[PlotText] = []
    x, last = _LEGEND_X, 0
    for colour, text, line in _legend(final_label, W, lang):
        if line != last:  # a line of its own
            x, last = _LEGEND_X, line
        kind = "legend" if colour is not None else "legend-more"  # a swatch before it, or the line goes on
        texts.append(_text((x + 20, 20 + line * _LEGEND_LINE), text, "lm", kind, bold=False))
        x = texts[-1].box[2] + 24
    texts.append(_text((8, top - 14), i18n.text("plot-probability", lang), "ls", "axis"))
    centre = (_PLOT_MARGINS[0] + W - _PLOT_MARGINS[1]) / 2
    lines = _axis_title(size, lang)
    for i, line in enumerate(lines):
        texts.append(_text((centre, H - 10 - _LEGEND_LINE * (len(lines) - 1 - i)), line, "ms", "axis"))
    return texts


def _label_spots(x: float, y: float) -> list[tuple[tuple[float, float], str]]:
    """Where a point's name may go, best first: above, higher, below, lower, then beside it."""
    spots = []
    for dy, v in ((-9, "d"), (-26, "d"), (9, "a"), (26, "a")):
        spots += [((x, y + dy), "m" + v), ((x - 6, y + dy), "l" + v), ((x + 6, y + dy), "r" + v)]
    return spots + [((x - 9, y), "rm"), ((x + 9, y), "lm")]


def _shift_into(t: PlotText, x0: float, x1: float) -> PlotText:
    """The same text moved sideways to lie between x0 and x1."""
    dx = max(0.0, x0 - t.box[0]) - max(0.0, t.box[2] - x1)
    if not dx:
        return t
    xy = (t.xy[0] + dx, t.xy[1])
    box = (t.box[0] + dx, t.box[1], t.box[2] + dx, t.box[3])
    return PlotText(xy, t.text, t.anchor, box, t.kind, t.size, t.fill)


def depth_plot(layers: Sequence[int], top1_probs: Sequence[float], top1_labels: Sequence[str],
               final_probs: Sequence[float], final_label: str, size: tuple[int, int] = (720, 360),
               lang: str = "en") -> Image.Image:
    """Per layer, the final class's probability (circles) and the early-exit top-1's (squares), named at changes."""
    W, H = size
    left, right = _PLOT_MARGINS[0], _PLOT_MARGINS[1]
    img = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(img)
    n = len(layers)
    top, bottom = depth_margins(final_label, size, lang)
    x_at, y_at = depth_axes(n, size, top, bottom)
    for p in _probability_ticks(y_at):  # horizontal grid
        y = y_at(p)
        draw.line([(left, y), (W - right, y)], fill=(225, 225, 225), width=1)
    draw.line([(left, top), (left, H - bottom), (W - right, H - bottom)], fill=(90, 90, 90), width=2)
    for probs, colour, marker, width in ((top1_probs, ORANGE, "square", 2), (final_probs, BLUE, "circle", 3)):
        points = [(x_at(i), y_at(float(p))) for i, p in enumerate(probs)]
        if len(points) > 1:
            draw.line(points, fill=colour, width=width)
        for x, y in points:
            box = [x - 4, y - 4, x + 4, y + 4]
            (draw.ellipse if marker == "circle" else draw.rectangle)(box, fill=colour)
    texts = depth_texts(layers, top1_probs, top1_labels, final_probs, final_label, size, lang)
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


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is >= ``value`` (an axis end with round ticks)."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= value * (1 - 1e-9))


_LINE = BAR_FONT + 6  # px from one line of a plot's text to the next
_MIN_AXIS = 2 * _LINE + 4  # px: the least height of a y axis (its two end ticks apart); a lower frame grows the plot


@dataclass(frozen=True)
class Axes:
    """A plot's margins and its axis titles wrapped to its width."""

    size: tuple[int, int]  # the frame's, or taller where it leaves the axis under _MIN_AXIS px (its text would meet)
    left: int
    right: int
    top: int
    bottom: int
    y_lines: tuple[str, ...]  # the y axis's title, over its tick labels
    x_lines: tuple[str, ...]  # the x axis's title, under its ticks


def axes_layout(size: tuple[int, int], y_label: str, x_label: str, start: int, left: int = 64,
                right: int = 20) -> Axes:
    """Axes below ``start`` px (a legend above): the y title, the axis, the x ticks and the x title."""
    W, H = size
    bold = font(BAR_FONT)
    centre = (left + W - right) / 2
    y_lines = tuple(wrap_text(y_label, bold, W - 16))
    x_lines = tuple(wrap_text(x_label, bold, 2 * min(centre, W - centre) - 8))
    top = start + _LINE * len(y_lines) + 12
    bottom = 32 + _LINE * len(x_lines)
    return Axes((W, max(H, top + _MIN_AXIS + bottom)), left, right, top, bottom, y_lines, x_lines)


def _axes(draw: ImageDraw.ImageDraw, ax: Axes, y_max: float):
    """Draw the axes, a y grid up to ``y_max`` rounded up and both titles; return (x0, x1, y_at)."""
    y_max = nice_ceiling(y_max)
    W, H = ax.size
    f, bold = font(BAR_FONT, bold=False), font(BAR_FONT)
    span = H - ax.top - ax.bottom

    def y_at(v: float) -> float:
        return H - ax.bottom - span * (v / y_max if y_max > 0 else 0.0)

    steps = next((k for k in (5, 2) if span / k >= _LINE), 1)
    for k in range(steps + 1):
        y = y_at(y_max * k / steps)
        draw.line([(ax.left, y), (W - ax.right, y)], fill=(225, 225, 225), width=1)
        draw.text((ax.left - 6, y), f"{y_max * k / steps:.3g}", fill=INK, font=f, anchor="rm")
    draw.line([(ax.left, ax.top), (ax.left, H - ax.bottom), (W - ax.right, H - ax.bottom)], fill=(90, 90, 90),
              width=2)
    for i, line in enumerate(ax.y_lines):  # over the tick labels, clear of the top one
        draw.text((8, ax.top - 12 - _LINE * (len(ax.y_lines) - i)), line, fill=INK, font=bold, anchor="la")
    centre = (ax.left + W - ax.right) / 2
    for i, line in enumerate(ax.x_lines):
        draw.text((centre, H - ax.bottom + 28 + _LINE * i), line, fill=INK, font=bold, anchor="ma")
    return ax.left, W - ax.right, y_at


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
                 size: tuple[int, int] = (800, 400), short_series: Sequence[str] | None = None,
                 legend: bool = True) -> Image.Image:
    """A group of bars per row of ``values`` (n, s), a colour per series, the legend on top (short past two rows)."""
    values = np.asarray(values, dtype=np.float64)
    n, s = values.shape
    f = font(BAR_FONT, bold=False)
    rows, end = _legend_rows(series if legend else [], f, size[0])
    if short_series is not None and legend and rows and rows[-1][0][1] > 12 + _LINE:
        rows, end = _legend_rows(short_series, f, size[0])
    ax = axes_layout(size, y_label, x_label, end + 6 if rows else 4)
    img = Image.new("RGB", ax.size, "white")
    draw = ImageDraw.Draw(img)
    x0, x1, y_at = _axes(draw, ax, float(values.max()) if values.size else 1.0)
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
    for (x, y), j, lines in rows:
        draw.rectangle([x, y, x + 14, y + 14], fill=SERIES_COLOURS[j % 4])
        for k, line in enumerate(lines):
            draw.text((x + 20, y + 7 + _LINE * k), line, fill=INK, font=f, anchor="lm")
    return img


def _legend_rows(names: Sequence[str], f, width: int, x0: int = 8, mark: int = 20):
    """([((x, y), j, lines)], the y the last row ends at): entries in rows from ``x0``; ``mark``: swatch px and gap."""
    out, x, y = [], x0, 12
    room = width - 8 - x0 - mark
    for j, name in enumerate(names):
        lines = wrap_text(name, f, room)
        w = mark + max(f.getlength(t) for t in lines) + 22
        if x > x0 and (x + w - 22 > width - 8 or len(lines) > 1):
            x, y = x0, y + _LINE
        out.append(((int(x), y), j, lines))
        x, y = (width if len(lines) > 1 else x + w), y + _LINE * (len(lines) - 1)
    return out, y + _LINE


def dot_plot(xs: Sequence[float], ys: Sequence[float], x_ticks: Sequence[int], x_label: str, y_label: str,
             y_max: float, size: tuple[int, int] = (800, 400)) -> Image.Image:
    """One dot per (x, y), x among ``x_ticks`` (categories, e.g. layers), y from 0 to ``y_max``."""
    ax = axes_layout(size, y_label, x_label, 8)
    img = Image.new("RGB", ax.size, "white")
    draw = ImageDraw.Draw(img)
    x0, x1, y_at = _axes(draw, ax, y_max)
    n = len(x_ticks)
    x_of = {t: x0 + (x1 - x0) * (i + 0.5) / n for i, t in enumerate(x_ticks)}
    for x, y in zip(xs, ys):
        cx, cy = x_of[x], y_at(float(y))
        draw.ellipse([cx - 5, cy - 5, cx + 5, cy + 5], fill=BLUE, outline=(255, 255, 255))
    _x_ticks(draw, list(x_of.values()), [str(t) for t in x_ticks], y_at(0))
    return img


def _dashed(draw: ImageDraw.ImageDraw, points: Sequence[tuple[float, float]], fill, width: int,
            dash: float = 9) -> None:
    """A polyline in dashes of ``dash`` px, continuing across its corners."""
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
    short: str = ""  # in the legend where the names would take more than two rows ("": the name)


def line_plot(series: Sequence[Series], x_label: str, y_label: str, y_max: float = 1.0,
              size: tuple[int, int] = (800, 400)) -> Image.Image:
    """Lines over x in [0, 1] (per cent), y from 0 to ``y_max``, the legend on top (short names past two rows)."""
    f = font(BAR_FONT, bold=False)
    places, end = _legend_rows([s.name for s in series], f, size[0], mark=32)
    if places and places[-1][0][1] > 12 + _LINE:
        places, end = _legend_rows([s.short or s.name for s in series], f, size[0], mark=32)
    ax = axes_layout(size, y_label, x_label, end + 6, right=24)
    img = Image.new("RGB", ax.size, "white")
    draw = ImageDraw.Draw(img)
    x0, x1, y_at = _axes(draw, ax, y_max)
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
    for s, ((x, y), _, lines) in zip(series, places):
        sample = [(x, y + 7), (x + 26, y + 7)]
        if s.dashed:
            _dashed(draw, sample, s.colour, 2, dash=5)
        else:
            draw.line(sample, fill=s.colour, width=3)
        for k, line in enumerate(lines):
            draw.text((x + 32, y + 7 + _LINE * k), line, fill=INK, font=f, anchor="lm")
    return img


_ROW_ABOVE = 44  # px from a row's top (its residual path's label) down to its main line
_ROW_BELOW = 19  # px from a row's main line down to its first line of numbers
BLOCK_NARROW = 420  # px: a diagram narrower than this names its residual path once, on its first row


def block_diagram(stream: str, attention: str, mlp: str, output: str, title: str,
                  width: int = 800, short_title: str | None = None, lang: str = "en") -> Image.Image:
    """The pre-norm block, H = X + MSA(LN(X)) over Y = H + MLP(LN(H)), with the four norms where those vectors flow."""
    big = font(17)
    titles = wrap_text(title, big, width - 2 * _BLOCK_X)
    if len(titles) > 1 and short_title:
        titles = wrap_text(short_title, big, width - 2 * _BLOCK_X)
    rows = block_rows(width, 6 + 22 * len(titles) + 6, (stream, attention, mlp, output), lang)
    img = Image.new("RGB", (width, rows[-1]["bottom"] + 6), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(titles):
        draw.text((_BLOCK_X, 6 + 22 * i), line, fill=INK, font=big)
    for row in rows:
        _draw_block_row(draw, row)
    return img


def block_rows(width: int, top: int, numbers: Sequence[str], lang: str = "en") -> list[dict]:
    """Each block diagram row from ``top`` px down: line, ends, boxes; numbers as (x, y, text, anchor, colour)."""
    f, small = font(16), font(14, bold=False)
    x_in, x_out = _BLOCK_X, width - _BLOCK_X
    rows, y = [], top
    for r, (names, start, end) in enumerate(((("MSA",), "X", "H"), (("MLP",), "H", "Y"))):
        ln, pad, xs = _block_boxes(width, names[0])
        labelled = r == 0 or width >= BLOCK_NARROW  # narrow: the residual path named once
        line = y + (_ROW_ABOVE if labelled else _ROW_ABOVE - 17)
        riser = (x_in + 16 + xs[0] - _box_half(ln, pad)) / 2
        words = i18n.text("residual-path", lang)
        path = {"riser": riser, "label": labelled, "words": words,
                "label_x": _clamped((riser + xs[2]) / 2, small, words, width)}
        branch = (numbers[1 + r], SERIES_COLOURS[1 + r], (xs[1] + xs[2]) / 2, "ma")
        ends = (numbers[0], SERIES_COLOURS[0], x_in, "la") if r == 0 else (numbers[3], SERIES_COLOURS[3], x_out, "ra")
        texts = _number_lines(f, line + _ROW_BELOW, ends, branch, width)
        rows.append({"y": line, "x_in": x_in, "x_out": x_out, "xs": xs, "names": (ln, names[0]), "pad": pad,
                     "start": start,
                     "end": end, "path": path, "texts": texts, "bottom": max(t[1] for t in texts) + 22})
        y = rows[-1]["bottom"] + 4
    return rows


def _box_half(name: str, pad: float = 8) -> float:
    """Half the width of the box around ``name`` (the "+": a circle of radius 13)."""
    return 13.0 if name == "+" else font(16).getlength(name) / 2 + pad


_BLOCK_X = 8  # px: the diagram's margin; its start and end letters stand there, its line 16 px further in


def _block_boxes(width: int, branch: str) -> tuple[str, float, list[float]]:
    """(the norm box's name, padding, the three boxes' centres): "LayerNorm" where every gap keeps 10 px, else "LN"."""
    a, b = _BLOCK_X + 22, width - _BLOCK_X - 22  # between the start's and the end's letter
    widest = max(("MSA", "MLP"), key=font(16).getlength)
    for ln, pad in (("LayerNorm", 8), ("LN", 8), ("LN", 5)):
        if (b - a - 2 * sum(_box_half(n, pad) for n in (ln, widest, "+"))) / 4 >= 10:
            break
    halves = [_box_half(n, pad) for n in (ln, branch, "+")]
    gap = (b - a - 2 * sum(halves)) / 4
    xs, x = [], a + gap
    for h in halves:
        xs.append(x + h)
        x += 2 * h + gap
    return ln, pad, xs


def _clamped(x: float, f, text: str, width: int) -> float:
    """The centre of ``text`` moved as little as keeps it inside the picture."""
    half = f.getlength(text) / 2
    return min(max(x, 4 + half), width - 4 - half)


def _number_lines(f, y: float, ends, branch, width: int) -> list[tuple[float, float, str, str, tuple]]:
    """(x, y, text, anchor, colour) of a row's ``ends`` and ``branch`` numbers: on one line where they fit, else two."""
    text, colour, x, anchor = ends
    box = f.getbbox(text, anchor=anchor)
    lo, hi = (x + box[2] + 12, width - 4) if anchor == "la" else (4, x + box[0] - 12)
    b_text, b_colour, b_x, _ = branch
    half = f.getlength(b_text) / 2
    if hi - lo >= 2 * half:
        return [(x, y, text, anchor, colour), (min(max(b_x, lo + half), hi - half), y, b_text, "ma", b_colour)]
    b_x = min(max(b_x, 4 + half), width - 4 - half)
    if anchor == "la":
        return [(x, y, text, anchor, colour), (b_x, y + 22, b_text, "ma", b_colour)]
    return [(b_x, y, b_text, "ma", b_colour), (x, y + 22, text, anchor, colour)]


def _draw_block_row(draw: ImageDraw.ImageDraw, row: dict) -> None:
    """One row of the block diagram, as :func:`block_rows` laid it out."""
    f, small, big = font(16), font(14, bold=False), font(17)
    grey = (90, 90, 90)
    y, x_in, x_out, xs = row["y"], row["x_in"], row["x_out"], row["xs"]
    draw.text((x_in, y), row["start"], fill=INK, font=big, anchor="lm")
    draw.text((x_out, y), row["end"], fill=INK, font=big, anchor="rm")
    draw.line([(x_in + 16, y), (x_out - 16, y)], fill=grey, width=2)
    for x, name in zip(xs, (*row["names"], "+")):
        if name == "+":
            draw.ellipse([x - 13, y - 13, x + 13, y + 13], fill="white", outline=INK, width=2)
            draw.text((x, y), "+", fill=INK, font=big, anchor="mm")
        else:
            w = _box_half(name, row["pad"])
            draw.rounded_rectangle([x - w, y - 15, x + w, y + 15], radius=6, fill=(238, 242, 248), outline=INK)
            draw.text((x, y), name, fill=INK, font=f, anchor="mm")
    # The residual path: from the row's input over the boxes into the "+".
    path, top = row["path"], y - 26
    draw.line([(path["riser"], y), (path["riser"], top), (xs[2], top), (xs[2], y - 14)], fill=grey, width=2)
    if path["label"]:
        draw.text((path["label_x"], top - 3), path["words"], fill=grey, font=small, anchor="md")
    for x, ty, text, anchor, colour in row["texts"]:
        draw.text((x, ty), text, fill=colour, font=f, anchor=anchor)
