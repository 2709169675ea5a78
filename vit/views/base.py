"""What every view shares: the :class:`View` record, picture sizes, clicks to patches and tokens (:class:`Cells`,
:func:`query_cell`), the note on the input's fit, the heat view and the picture to keep."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from PIL import Image

from vit import i18n
from vit.views import draw

DISPLAY_SIZE = draw.DISPLAY_SIZE  # px, main pictures: drawn at the size the page shows them
TILE_SIZE = 200  # px, one small-multiples tile: 4 per row make a sheet ~830 px wide
DEPTH_PLOT_SIZE = (800, 400)  # px (width, height) of the early-exit plot


@dataclass(frozen=True)
class Cells:
    """Where a picture takes clicks: ``rows`` x ``cols`` cells in the box (x0, y0, w, h) of its own pixels; the page
    maps a click through it (one scale, one offset: vit/ui/page.js)."""

    x0: float
    y0: float
    w: float
    h: float
    rows: int
    cols: int

    def scaled(self, k: float) -> Cells:
        """The same cells in a picture enlarged ``k`` times."""
        return Cells(self.x0 * k, self.y0 * k, self.w * k, self.h * k, self.rows, self.cols)


@dataclass(frozen=True)
class View:
    """One picture and the words that make it readable."""

    image: Image.Image  # the picture, colour bar included where it is a heatmap
    caption: str  # markdown: what this picture is, in the chapter's notation
    legend: str = ""  # one line: what brightness means and how it is scaled
    title: str = ""  # short, for headers and download file names
    scale: tuple[float, float] | None = None  # numbers at the colour bar's (left, right) ends; None: no bar / per tile
    note: str = ""  # honesty about the input (crop, enlargement); "" if nothing to say
    alt: str = ""  # the page's <img alt>: what it shows and the numbers to read off it, from its data, in its language
    cells: Cells | None = None  # a picture that takes clicks: where its cells are (None: it takes none)


# --------------------------------------------------------------------------- patches and clicks


def query_cell(query: tuple[float, float], grid: tuple[int, int]) -> tuple[int, int]:
    """(row, col) of the patch under a point given as fractions (x, y) of the picture."""
    fx, fy = query
    rows, cols = grid
    return min(rows - 1, max(0, int(fy * rows))), min(cols - 1, max(0, int(fx * cols)))


token_index = draw.token_index  # the one formula, P + r·cols + c: the patch grid numbers its cells with it


def display_size(a, size: int = DISPLAY_SIZE) -> tuple[int, int]:
    """(width, height) of the model's view as drawn, without margins or colour bar."""
    return draw.fit_size(a.image.shape, size)


def patch_cells(a, size: int = DISPLAY_SIZE) -> Cells:
    """The patches of a picture drawn on the model's view at (0, 0) (an overlay, its colour bar under it)."""
    return Cells(0, 0, *display_size(a, size), *a.grid)


def picture_box(a, size: int = DISPLAY_SIZE) -> tuple[int, int, int, int]:
    """(x0, y0, w, h) of the image inside the patch grid's picture (past its margins, on fine grids)."""
    return draw.grid_layout(a.grid, display_size(a, size), a.num_prefix_tokens).box


def grid_size_for(a, width: int, height: int) -> int:
    """The ``size`` at which the patch grid, margins included, fits width x height."""
    size = max(16, min(width, height))
    x0, y0, _, _ = picture_box(a, size)
    if x0 or y0:  # numbers on margins: the picture gives them their room
        size = max(16, min(width - x0, height - y0))
    return size


# --------------------------------------------------------------------------- honest about the input

_CROP_NOTE_BELOW = 0.6  # a centre crop keeping less of the upload than this is worth a sentence (16:9 keeps 56%)
_ENLARGED_ABOVE = 2.0  # so is an upload enlarged more than this


def fit_note(a, lang: str = "en") -> str:
    """A sentence where the centre square (``vit.preprocess``) cuts a long strip's ends or blows a tiny image up into
    blocks, else "" (torchvision's thin crop border, 224 of 256 px, is every image's and not counted)."""
    if a.source_size is None:
        return ""
    w, h = a.source_size
    short, long = min(w, h), max(w, h)
    side = a.input_size[0]
    notes = []
    if short / long < _CROP_NOTE_BELOW:
        notes.append(i18n.text("fit-cropped", lang, w=w, h=h, share=short / long))
    factor = side / short
    if factor > _ENLARGED_ABOVE:
        times = f"{factor:.0f}" if factor >= 10 else f"{factor:.1f}".removesuffix(".0")
        notes.append(i18n.text("fit-enlarged", lang, w=w, h=h, times=times, side=side))
    return " ".join(notes)


# --------------------------------------------------------------------------- shared by the views


def bar_number(x: float) -> str:
    """A colour-bar number: 0 as "0", else three significant digits ("0.0312")."""
    return "0" if x == 0 else f"{x:.3g}"


def no_classifier_view(a, title: str, size, lang: str = "en") -> View:
    """In place of a picture that reads classes: a card saying that this model has none (a backbone)."""
    width = size[0] if isinstance(size, tuple) else size
    words = i18n.text("no-classifier-card", lang)
    card = draw.message_card(i18n.text("no-classifier-title", lang, title=title), words, max(240, int(width)))
    return View(card, f"**{title}:** {words}", title=f"{title} (no classifier)",
                alt=i18n.text("alt-no-classifier", lang, title=title))


def heat_view(a, heat: np.ndarray, opacity: float, cmap: str, size: int, mark=None, label: str | None = None,
              lang: str = "en"):
    """(picture with colour bar, scale, legend) of a (rows, cols) map scaled min to max."""
    label = i18n.text("heat-label", lang) if label is None else label
    lo, hi = float(heat.min()), float(heat.max())
    picture = draw.overlay(a.image, heat, opacity, cmap, size, mark=mark)
    image = draw.with_colorbar(picture, cmap, bar_number(lo), bar_number(hi), label)
    legend = i18n.text("heat-legend", lang, label=label, lo=bar_number(lo), hi=bar_number(hi))
    return image, (lo, hi), legend


def class_token_share(heat: np.ndarray, lang: str = "en") -> str:
    """What a row gives the class token itself, which a map over the patches cannot show."""
    share = max(0.0, 1.0 - float(heat.sum()))  # rows of softmax and of rollout sum to 1 over N+1 tokens
    return i18n.text("class-token-share", lang, share=share) if share >= 0.005 else ""


def every_kth(k: int, what: str, lang: str = "en") -> str:
    """"every row", "every 2nd row", "every 3rd row", "every 4th row" (``what``: "row" or "column")."""
    suffix = {2: "nd", 3: "rd"}.get(k, "th")
    if what not in ("row", "column"):  # Figure 7's "row and column": English only
        return f"every {what}" if k == 1 else f"every {k}{suffix} {what}"
    if k == 1:
        return i18n.text(f"every-{what}", lang)
    return i18n.text(f"every-kth-{what}", lang, k=k, suffix=suffix)


# --------------------------------------------------------------------------- to keep


def plain(markdown: str) -> str:
    """Caption text without markdown's ** and ` (for text drawn into a picture)."""
    return re.sub(r"\*\*|`", "", markdown)


def captioned(view: View, width: int | None = None) -> Image.Image:
    """The view as one picture to download: title above, caption, legend and note below (>= 18 px text)."""
    paragraphs = [plain(view.caption), plain(view.legend), plain(view.note)]
    return draw.captioned(view.image, view.title, paragraphs, width)
