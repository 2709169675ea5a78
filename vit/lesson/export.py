"""The lesson to take away: a 16:9 slide per step, its text beside its picture, as a searchable PDF or as PNGs."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from vit import fonts, i18n, validate
from vit.lesson import LESSON, LessonStep, language, lesson_text
from vit.views import base, patches
from vit.views import registry as pictures
from vit.views.draw import CJK, pieces
from vit.views.patches import stage_headers, stage_note
from vit.views.registry import Display

FORMATS = ("pdf", "png")
PAGE_SIZE = (40 / 3, 7.5)  # inches (13.333 × 7.5): 16:9, PowerPoint's and Keynote's widescreen slide
PNG_DPI = 144  # 13.333 × 7.5 in -> 1920 × 1080 px
PICTURE_DPI = 220  # the picture's frame in px per inch of the page; drawn at 1/1.4 of it (projector mode)
MARGIN = 0.5  # in
COLUMN = 5.9  # in, the text's column; the picture takes the rest of the width
GAP = 0.4  # in, between the text and the picture
INK, GREY, ACCENT, WARN = "#1a1a1a", "#5c5c5c", "#1f5fa8", "#b3261e"
TEXT_SIZES = {"heading": 26.0, "quote": 19.0, "text": 19.0, "code": 16.0}  # pt; shrunk together to fit
MONO = "DejaVu Sans Mono"  # the code's font (matplotlib's own, always there)
SCRIPT = {"sup": (0.7, 0.36), "sub": (0.7, -0.16)}  # a raised or lowered run: (its size, its shift), in the text's size
LEADING = 1.32  # line height / font size
# The page's own words, by language (the step's text comes from vit.lesson, through vit.i18n).
PAGE_WORDS = {"en": {
    "kicker": "Chapter 11.4, the Transformer encoder  ·  step {n} of {total}",
    "title": "ViT Anatomy: the lesson (chapter 11.4) on {model}",
    "subject": "Vision Transformer encoder, 11.4.1 to 11.4.7, with one image's numbers",
    "footer": "ViT Anatomy · {model} ({weights}) · {H}×{W} px, P = {P}, N = {N}, L = {L}",
}, "zh": {
    "kicker": "第 11.4 节，ViT Encoder  ·  第 {n} 步，共 {total} 步",
    "title": "ViT Anatomy：本课（第 11.4 节）在 {model} 上",
    "subject": "Vision Transformer encoder，11.4.1 到 11.4.8，用一张图像的数字",  # the Chinese edition's sections
    "footer": "ViT Anatomy · {model}（{weights}）· {H}×{W} 像素，P = {P}，N = {N}，L = {L}",
}}
# What the footer says of the weights (vit.Analysis.weights): a file's path, or anything else, as it is.
WEIGHTS_WORDS = {"zh": {"trained": "已训练", "imagenet": "ImageNet 权重", "random": "随机权重"}}
# rcParams only inside the export: TrueType fonts embedded (searchable text), not Type 3 glyph drawings. The
# family is DejaVu Sans, then a CJK font where one is installed (vit.fonts), glyph by glyph.
PDF_RC = {"pdf.fonttype": 42, "font.family": "DejaVu Sans"}
_RC_LOCK = threading.Lock()  # rc_context swaps global rcParams: two exports at once would undo each other's


@dataclass(frozen=True)
class Run:
    text: str
    bold: bool = False
    script: str = ""  # "sup" or "sub": a formula's superscript or subscript (<sup>…</sup>, <sub>…</sub>)


@dataclass(frozen=True)
class Paragraph:
    kind: str  # "heading" (the step's section and title), "quote" (the chapter's words), "text", "code" (a run a line)
    runs: tuple[Run, ...]


@dataclass(frozen=True)
class Page:
    """One slide: what it says and what it shows, before any drawing."""

    number: int  # 1-based
    total: int
    lang: str
    step: LessonStep
    text: tuple[Paragraph, ...]
    view: base.View | None  # the step's picture; None where it is the table
    table: tuple[list[str], list[list[str]], str] | None  # (headers, rows, note) of the stage table
    footer: str
    warning: str  # "" for trained weights; the status otherwise (an untrained model says so on every page)


def paragraphs(markdown: str) -> tuple[Paragraph, ...]:
    """The lesson's markdown as runs of text: a first paragraph all bold is the heading, a fenced block is "code"
    (a run a line), ``<sup>``/``<sub>`` set raised and lowered."""
    out = []
    for i, block in enumerate(b.strip() for b in re.split(r"\n\s*\n", markdown) if b.strip()):
        kind = "text"
        fenced = re.fullmatch(r"```[\w-]*\n(.*?)\n?```", block, flags=re.S)
        if fenced:
            out.append(Paragraph("code", tuple(Run(line) for line in fenced.group(1).split("\n"))))
            continue
        if block.startswith(">"):
            kind, block = "quote", re.sub(r"^>\s?", "", block, flags=re.MULTILINE)
        parts = block.replace("`", "").replace("\n", " ").split("**")
        runs = tuple(r for j, t in enumerate(parts) for r in _scripts(t, bold=j % 2 == 1))
        if i == 0 and kind == "text" and len(runs) == 1 and runs[0].bold:
            kind, runs = "heading", (Run(runs[0].text, bold=True),)
        out.append(Paragraph(kind, runs))
    return tuple(out)


def _scripts(text: str, bold: bool) -> list[Run]:
    """``text`` as runs: its ``<sup>…</sup>`` and ``<sub>…</sub>`` raised and lowered, the rest as it is."""
    parts = re.split(r"<(sup|sub)>(.*?)</\1>", text)
    runs = [Run(parts[0], bold)] + [Run(t, bold, script if k == 0 else "") for n in range(1, len(parts), 3)
                                    for k, (script, t) in enumerate(((parts[n], parts[n + 1]), ("", parts[n + 2])))]
    return [r for r in runs if r.text]


def pages(a, display: Display | None = None, lang: str = "en") -> list[Page]:
    """A page per step: the pictures drawn as ``display`` says (in the page's frame), the text at the same layer."""
    lang = language(lang)
    slot = _picture_slot()
    frame = (int(slot[2] * PICTURE_DPI), int(slot[3] * PICTURE_DPI))
    display = replace(display or Display(), projector=True, frame=frame, lang=lang)  # projector: larger text
    footer = footer_words(a, lang)
    warning = a.status if a.status.startswith("UNTRAINED") else ""
    if warning and lang != "en":  # the model's own status is English: the catalogue's summary of it
        warning = f"UNTRAINED：{i18n.text('status-random', lang)}"
    out = []
    for n, step in enumerate(LESSON, 1):
        table = (stage_headers(lang), patches.stage_rows(a, lang),
                 f"{base.plain(stage_note(lang))} {i18n.text('stage-one-image', lang)}")
        is_table = step.view == "stage-table"
        view = None if is_table else pictures.draw(a, step.view, display)
        out.append(Page(n, len(LESSON), lang, step, paragraphs(lesson_text(step, a, lang, display)), view,
                        table if is_table else None, footer, warning))
    return out


def footer_words(a, lang: str = "en") -> str:
    """Every page's footer in ``lang``: the model (``model-<key>`` of vit.i18n.page where named), weights, setting."""
    page_name = i18n.PAGE.get(f"model-{a.model}", {})
    model = page_name.get(lang) or a.display_name
    weights = WEIGHTS_WORDS.get(lang, {}).get(a.weights, a.weights)
    return PAGE_WORDS[lang]["footer"].format(model=model, weights=weights, H=a.input_size[0], W=a.input_size[1],
                                             P=a.patch_size, N=a.num_patches, L=a.depth)


def file_format(value: str) -> str:
    return validate.choice("format", value, FORMATS)


def write_pdf(a, path: str | Path, display: Display | None = None, lang: str = "en") -> Path:
    """The lesson as one PDF, a 16:9 page per step; returns ``path``."""
    from matplotlib.backends.backend_pdf import PdfPages  # noqa: PLC0415 - matplotlib on first use

    path = Path(path)
    shown = pages(a, display, lang)
    words = PAGE_WORDS[language(lang)]
    meta = {"Title": words["title"].format(model=a.display_name), "Creator": "ViT Anatomy",
            "Subject": words["subject"]}
    part = path.with_name(path.name + ".part")  # a failure leaves no half-written PDF under the name asked for
    try:
        with _rc(), PdfPages(part, metadata=meta) as pdf:
            for page in shown:
                pdf.savefig(figure(page, raster=False))
        part.replace(path)
    finally:
        part.unlink(missing_ok=True)
    return path


def write_pngs(a, folder: str | Path, display: Display | None = None, lang: str = "en") -> list[Path]:
    """The lesson's pages as 1920 × 1080 PNGs in ``folder`` (``lesson-01-11.4.1.png``, ...); returns their paths."""
    folder = Path(folder)
    written = []
    with _rc():
        for page in pages(a, display, lang):
            path = folder / png_name(page)
            figure(page, raster=True).savefig(path, dpi=PNG_DPI, format="png")
            written.append(path)
    return written


def png_name(page: Page) -> str:
    return f"lesson-{page.number:02d}-{page.step.section}.png"


def _rc():
    import contextlib  # noqa: PLC0415

    import matplotlib  # noqa: PLC0415

    stack = contextlib.ExitStack()
    stack.enter_context(_RC_LOCK)
    stack.enter_context(matplotlib.rc_context({**PDF_RC, "font.family": fonts.family_list()}))
    return stack


def _picture_slot() -> tuple[float, float, float, float]:
    """(x, y, width, height) in inches of the picture's place: right of the text, under the heading."""
    x = MARGIN + COLUMN + GAP
    return x, 0.95, PAGE_SIZE[0] - MARGIN - x, PAGE_SIZE[1] - 0.95 - 1.55


def figure(page: Page, raster: bool = False):
    """One page as a matplotlib Figure, no pyplot (safe in a server's threads); ``raster``: resampled for a PNG."""
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=PAGE_SIZE, dpi=PNG_DPI, facecolor="white")
    ink = _Ink(fig)
    W, H = PAGE_SIZE
    heading = [p for p in page.text if p.kind == "heading"]
    body = [p for p in page.text if p.kind != "heading"]
    top = H - MARGIN - 0.1
    kicker = PAGE_WORDS[page.lang]["kicker"].format(n=page.number, total=page.total)
    ink.text(MARGIN, top, kicker, 13, color=ACCENT, bold=True)
    below = top - 0.28
    for p in heading:
        below = ink.flow(p.runs, MARGIN, below - 0.38, W - 2 * MARGIN, TEXT_SIZES["heading"], color=INK) - 0.1
    fig.add_artist(_rule(fig, MARGIN, below + 0.02, W - 2 * MARGIN))
    x, y0, w, h = _picture_slot()
    h = min(h, below - 0.22 - y0)
    _column(ink, body, MARGIN, below - 0.3, COLUMN, below - 0.3 - y0)
    if page.table is not None:
        _table(ink, *page.table, (x, y0, w, h))
    elif page.view is not None:
        _picture(fig, ink, page.view, (x, y0, w, h), raster)
    ink.text(MARGIN, 0.35, page.footer, 10, color=GREY)
    if page.warning:
        ink.text(MARGIN, 0.58, page.warning, 10, color=WARN, width=W - 2 * MARGIN)
    ink.text(W - MARGIN, 0.35, f"{page.number} / {page.total}", 10, color=GREY, ha="right")
    return fig


class _Ink:
    """Text placed in inches, measured with the figure's own renderer; words wrapped, bold runs kept."""

    def __init__(self, fig):
        self.fig = fig
        self._widths: dict = {}

    def font(self, size: float, bold: bool = False, italic: bool = False, mono: bool = False):
        from matplotlib.font_manager import FontProperties  # noqa: PLC0415

        family = [MONO, *fonts.family_list()[1:]] if mono else fonts.family_list()
        return FontProperties(family=family, size=size, weight="bold" if bold else "normal",
                              style="italic" if italic else "normal")

    def width(self, text: str, size: float, bold: bool = False, italic: bool = False, mono: bool = False) -> float:
        from matplotlib.textpath import text_to_path  # noqa: PLC0415

        key = (text, size, bold, italic, mono)
        if key not in self._widths:  # unhinted advances in pt, as a PDF reader sets them (a 72 dpi raster's differ)
            font = self.font(size, bold, italic, mono)
            w, _, _ = text_to_path.get_text_width_height_descent(text, font, ismath=False)
            self._widths[key] = w / 72
        return self._widths[key]

    def text(self, x, y, s, size, color=INK, bold=False, italic=False, ha="left", width=None, mono=False):
        if width is not None:  # one line, cut to fit
            while len(s) > 4 and self.width(s, size, bold, italic, mono) > width:
                s = s[: max(4, int(len(s) * width / self.width(s, size, bold, italic, mono)) - 2)] + "…"
        self.fig.text(x, y, s, fontproperties=self.font(size, bold, italic, mono), color=color, ha=ha,
                      va="baseline", transform=self.fig.dpi_scale_trans, parse_math=False)

    def piece_width(self, text: str, style: tuple[bool, str], size: float, italic: bool = False) -> float:
        """A piece's width in inches; ``style`` is (bold, script)."""
        bold, script = style
        return self.width(text, size * SCRIPT[script][0] if script else size, bold, italic)

    def lines(self, runs, width: float, size: float, italic: bool = False) -> list[list[Word]]:
        """Words greedily wrapped to ``width`` inches."""
        space = self.width(" ", size)
        out, line, used = [], [], 0.0
        for word in _words(runs):
            w = sum(self.piece_width(t, style, size, italic) for t, style in word)
            gap = 0.0 if word.tight else space
            if line and used + gap + w > width:
                out.append(line)
                line, used = [], 0.0
            used += (gap if line else 0.0) + w
            line.append(word)
        return out + ([line] if line else [])

    def flow(self, runs, x, y, width, size, color=INK, italic=False, draw=True) -> float:
        """Draw ``runs`` wrapped from baseline ``y`` down, a line's words of one style as one text (a PDF reader
        then finds phrases, not letters); returns the baseline after the last line."""
        step = size * LEADING / 72
        for line in self.lines(runs, width, size, italic):
            at = x
            for (bold, script), chunk, spaced in _chunks(line):
                scale, shift = SCRIPT.get(script, (1.0, 0.0))
                if draw:  # a superscript raised, a subscript lowered, both smaller: real text, searchable
                    self.text(at, y + shift * size / 72, chunk, size * scale, color, bold, italic)
                at += self.width(chunk, size * scale, bold, italic) + (self.width(" ", size) if spaced else 0.0)
            y -= step
        return y

    def code(self, runs, x, y, width, size, color=INK, draw=True) -> float:
        """Code a line each, monospace, smaller where the longest would not fit; returns the next baseline."""
        longest = max((self.width(r.text, size, mono=True) for r in runs), default=0.0)
        size = min(size, size * width / longest) if longest else size
        for run in runs:
            if draw:
                self.text(x, y, run.text, size, color, mono=True)
            y -= size * LEADING / 72
        return y


class Word(list):
    """[(text, (bold, script)), ...]: the pieces of one word; ``tight``: set without a space before it."""

    tight = False


def _word(parts, tight: bool = False) -> Word:
    word = Word(parts)
    word.tight = tight
    return word


def _words(runs) -> list[Word]:
    """The runs' words as the pictures split them (:func:`vit.views.draw.pieces`), also cut where a run changes."""
    text = "".join(r.text for r in runs)
    run_of = [n for n, r in enumerate(runs) for _ in r.text]  # each character's run
    words, end = [], 0
    for piece, spaced in pieces(text):
        start = text.index(piece, end)
        end = start + len(piece)
        cuts = [start, *(k for k in range(start + 1, end) if run_of[k] != run_of[k - 1]), end]
        styled = [(part, (runs[run_of[i]].bold, runs[run_of[i]].script))
                  for i, j in zip(cuts, cuts[1:]) for part in CJK.split(text[i:j]) if part]
        words.append(_word(styled, tight=not spaced))
    return words


def _chunks(line: list[Word]) -> list[tuple[tuple[bool, str], str, bool]]:
    """A line as ((bold, script), text, a space after it): neighbouring pieces of one style joined into one text."""
    out: list[list] = []  # [(bold, script), text, space after]
    for word in line:
        if out and word.tight:
            out[-1][2] = False
        for j, (text, bold) in enumerate(word):  # bold: the piece's style, (bold, script)
            if out and out[-1][0] == bold:
                out[-1][1] += (" " if out[-1][2] else "") + text
                out[-1][2] = False
            else:
                if out and j > 0:
                    out[-1][2] = False
                out.append([bold, text, False])
        out[-1][2] = True  # a word ends: a space before the next
    return [tuple(c) for c in out]


def _column(ink: _Ink, body, x: float, top: float, width: float, height: float) -> None:
    """The chapter's words (a quote, a bar beside it) and this image's numbers, shrunk together until they fit."""
    scale = next((k for k in (1.0, 0.92, 0.85, 0.78, 0.71, 0.64) if top - _set_column(ink, body, x, top, width, k,
                                                                                    draw=False) <= height), 0.58)
    _set_column(ink, body, x, top, width, scale, draw=True)


def _set_column(ink: _Ink, body, x, top, width, scale, draw) -> float:
    """Set the column from baseline ``top`` down; returns the lowest ink's height in inches."""
    from matplotlib.patches import Rectangle  # noqa: PLC0415

    y, bottom = top, top
    for p in body:
        size = TEXT_SIZES[p.kind] * scale
        quote = p.kind in ("quote", "code")  # the chapter's words: a bar beside them
        indent = 0.25 if quote else 0.0
        if p.kind == "code":  # the chapter's code: a line each, monospace, not wrapped
            end = ink.code(p.runs, x + indent, y, width - indent, size, draw=draw)
        else:
            end = ink.flow(p.runs, x + indent, y, width - indent, size, color=GREY if quote else INK, italic=quote,
                           draw=draw)
        bottom = end + size * (LEADING - 0.25) / 72  # the last line's descenders
        if quote and draw:  # from the first line's capitals to the last line's descenders
            ink.fig.add_artist(Rectangle((x, bottom), 0.06, y + size * 0.75 / 72 - bottom, color=ACCENT, lw=0,
                                         transform=ink.fig.dpi_scale_trans))
        y = end - size * (1.0 if p.kind == "code" else 0.7) / 72  # a paragraph's space
    return bottom


def _picture(fig, ink: _Ink, view, box, raster: bool) -> None:
    """The view's picture as large as the box allows, its legend and note under it in small type."""
    import numpy as np  # noqa: PLC0415

    x, y, w, h = box
    notes = [base.plain(t) for t in (view.legend, view.note) if t]
    size = 10.5
    lines = sum(len(ink.lines([Run(t)], w, size)) for t in notes)
    room = h - lines * size * LEADING / 72 - (0.12 if notes else 0)
    img = view.image
    k = min(w / img.width, room / img.height)
    pw, ph = img.width * k, img.height * k
    left, bottom = x + (w - pw) / 2, y + h - ph
    W, H = PAGE_SIZE
    ax = fig.add_axes((left / W, bottom / H, pw / W, ph / H))
    ax.imshow(np.asarray(img.convert("RGB")), interpolation="antialiased" if raster else "none")
    ax.set_axis_off()
    line = bottom - 0.12 - size / 72
    for t in notes:
        line = ink.flow([Run(t)], x, line, w, size, color=GREY)


def _table(ink: _Ink, headers: list[str], rows: list[list[str]], note: str, box) -> None:
    """The stage table as real text: columns measured, the type as large as the box allows (at most 13 pt)."""
    from matplotlib.patches import Rectangle  # noqa: PLC0415

    x, y, w, h = box
    pad = 0.14  # in, between columns
    base = 12.0
    widths = [max(ink.width(str(r[i]), base, bold=(r is headers)) for r in [headers, *rows]) + pad
              for i in range(len(headers))]
    note_size = 10.5
    note_h = 3 * note_size * LEADING / 72 + 0.15
    row_h = base * 1.75 / 72
    size = min(13.0, base * w / sum(widths), base * (h - note_h) / ((len(rows) + 1) * row_h))
    k = size / base
    widths, row_h = [c * k for c in widths], row_h * k
    top = y + h
    for r, row in enumerate([headers, *rows]):
        baseline = top - (r + 0.72) * row_h
        header, total = r == 0, r == len(rows)
        if r % 2 == 0 and not header:
            ink.fig.add_artist(Rectangle((x, top - (r + 1) * row_h), sum(widths), row_h, color="#eef2f8", lw=0,
                                         transform=ink.fig.dpi_scale_trans))
        at = x + pad / 2
        for c, cell in enumerate(row):
            ink.text(at, baseline, str(cell), size, color=INK, bold=header or total)
            at += widths[c]
        if header or r == len(rows) - 1:
            ink.fig.add_artist(_rule(ink.fig, x, top - (r + 1) * row_h, sum(widths)))
    ink.flow([Run(note)], x, top - (len(rows) + 1) * row_h - 0.12 - note_size / 72, w, note_size, color=GREY)


def _rule(fig, x: float, y: float, width: float):
    from matplotlib.lines import Line2D  # noqa: PLC0415

    return Line2D([x, x + width], [y, y], color="#b8c2d0", lw=0.8, transform=fig.dpi_scale_trans)
