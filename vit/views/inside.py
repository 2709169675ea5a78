"""The Inside tab's views (chapter 11.4.3-11.4.6): what attention and the MLP add to the residual stream, the block's
code, a lens on every patch token, the token norms (Darcet et al., 2024) and one head's whole attention matrix."""

from __future__ import annotations

import re

import numpy as np
from PIL import Image, ImageDraw

from vit import i18n
from vit.i18n.names import class_name
from vit.model.families import class_names, is_trained_here
from vit.views import base, describe, draw, plots
from vit.views.base import DEPTH_PLOT_SIZE, DISPLAY_SIZE, View, fit_note

MIN_CHART = 170  # px: the least height of the block view's chart under its diagram; lower, it goes beside
MIN_DIAGRAM = 210  # px: the least width of the diagram beside the chart
MAX_DIAGRAM = 560  # px: the diagram is drawn no wider (its boxes would stand far apart)


def block_view(a, layer: int | None = None, size: tuple[int, int] = DEPTH_PLOT_SIZE, lang: str = "en") -> View:
    """The chosen layer's block with its norms on the arrows, beside every layer's (a stacked chart, no legend)."""
    res = a.residual()
    values = np.array([[r.stream, r.attention, r.mlp, r.output] for r in res])  # (L, 4)
    series = tuple(i18n.text("block-series", lang).split("|"))
    short = tuple(re.sub(r"\(.*\)", "", s.split(" ")[0]) for s in series)  # "‖MSA(LN(X))‖ attention" -> "‖MSA‖"
    r = res[(a.depth if layer is None else min(max(layer, 1), a.depth)) - 1]

    def diagram(width: int):
        return plots.block_diagram(f"‖X‖ = {r.stream:.1f}", i18n.text("block-adds", lang, v=r.attention),
                                   i18n.text("block-adds", lang, v=r.mlp), f"‖Y‖ = {r.output:.1f}",
                                   i18n.text("block-diagram", lang, layer=r.layer, module=r.layer - 1, T=a.num_tokens),
                                   width, i18n.text("block-diagram-short", lang, layer=r.layer, module=r.layer - 1),
                                   lang)

    def chart(chart_size: tuple[int, int], legend: bool = True):
        return plots.grouped_bars(values, series, [str(r.layer) for r in res], i18n.text("layer-axis", lang),
                                  i18n.text("block-axis", lang, T=a.num_tokens), chart_size, short, legend)

    W, H = size
    top = diagram(min(W, MAX_DIAGRAM))
    if W < 2 * MIN_DIAGRAM or (H - top.height >= MIN_CHART and W < 1.6 * H):
        image = draw.stack(top, chart((W, max(MIN_CHART // 2, H - top.height)), H - top.height >= MIN_CHART))
    else:  # a wide frame, or one too low for both: side by side
        side = diagram(max(MIN_DIAGRAM, min(W // 2, MAX_DIAGRAM)))
        image = draw.beside(side, chart((W - side.width, H)))
    last = res[-1]
    caption = i18n.text("block-caption", lang, T=a.num_tokens, L=a.depth, layer=last.layer, stream=last.stream,
                        attention=last.attention, mlp=last.mlp, output=last.output)
    legend = i18n.text("block-legend", lang, series=", ".join(series))
    alt = i18n.text("alt-block", lang, layer=r.layer, L=a.depth, stream=r.stream, attention=r.attention, mlp=r.mlp,
                    output=r.output, outputs=describe.series([f"{x.output:.1f}" for x in res], lang))
    return View(image, caption, legend, i18n.text("block-title", lang, L=a.depth), alt=alt)


CODE_FONT = 17  # px: code and its numbers, readable on a projector at the size the page shows them
CODE_INK, NUMBER_INK = (30, 30, 30), (0, 114, 178)  # code black, this image's numbers blue


def block_code_lines(a, layer: int, lang: str = "en") -> list[tuple[str, str]]:
    """(a line of the chapter's ``ViTEncoderLayer.forward``, this image's numbers for it at ``layer``)."""
    r = a.residual()[layer - 1]
    T, D, h = a.num_tokens, int(a.queries[0].shape[-1]), a.num_heads
    x = f"(1, {T}, {D})"
    return [
        ("def forward(self, x):", f"x = X: {x}, ‖X‖ = {r.stream:.1f}"),
        ("    attn_input = self.norm1(x)", f"LN(X): {x}"),
        ("    attn_output, _ = self.attn(", i18n.text("code-heads", lang, h=h, d=D // h, T=T)),
        ("        attn_input, attn_input, attn_input)", f"MSA(LN(X)): {x}, ‖·‖ = {r.attention:.1f}"),
        ("    x = x + self.dropout1(attn_output)", f"H = X + MSA(LN(X)): {x}"),
        ("    x = x + self.mlp(self.norm2(x))", i18n.text("code-mlp", lang, T=T, hidden=4 * D, mlp=r.mlp)),
        ("    return x", f"Y: {x}, ‖Y‖ = {r.output:.1f}"),
    ]


def block_code_view(a, layer: int | None = None, size: int = DISPLAY_SIZE, lang: str = "en") -> View:
    """11.4.4: the chapter's ``ViTEncoderLayer.forward``, each line with this image's shapes and norms at one layer."""
    layer = a.depth if layer is None else min(max(layer, 1), a.depth)
    lines = block_code_lines(a, layer, lang)
    code, numbers = draw.mono_font(CODE_FONT), draw.font(CODE_FONT - 1, bold=False)
    step = CODE_FONT + 8
    width = max(size, 24 + int(max(code.getlength(c) for c, _ in lines)))
    placed = []  # (code line, its indent, its note's lines): a note too long for its line goes on under it
    for line, note in lines:
        indent = 12 + code.getlength(" " * max(4, len(line) - len(line.lstrip())))  # under its line's code
        placed.append((line, indent, draw.wrap_text("# " + note, numbers, width - indent - 12)))
    image = Image.new("RGB", (width, 12 + step * sum(1 + len(notes) for _, _, notes in placed)), "white")
    pen = ImageDraw.Draw(image)
    y = 8
    for line, indent, notes in placed:
        pen.text((12, y), line, fill=CODE_INK, font=code)
        for k, note in enumerate(notes):
            pen.text((indent, y + (k + 1) * step - 2), note, fill=NUMBER_INK, font=numbers)
        y += (1 + len(notes)) * step
    D, h, r = int(a.queries[0].shape[-1]), a.num_heads, a.residual()[layer - 1]
    caption = i18n.text("code-caption", lang, layer=layer, module=layer - 1, T=a.num_tokens, D=D)
    alt = i18n.text("alt-code", lang, layer=layer, L=a.depth, T=a.num_tokens, D=D, h=h, d=D // h, hidden=4 * D,
                    stream=r.stream, attention=r.attention, mlp=r.mlp, output=r.output)
    return View(image, caption, i18n.text("code-legend", lang), i18n.text("code-title", lang, layer=layer), alt=alt)


LENS_CLASSES = len(draw.PALETTE)  # the classes of the final prediction's top that get a colour; the rest are grey


def lens_classes(indices: np.ndarray, k: int = LENS_CLASSES) -> list[tuple[int, int]]:
    """(class index, patch count) of the ``k`` most frequent classes, most frequent first (ties: lower index)."""
    values, counts = np.unique(np.asarray(indices).ravel(), return_counts=True)
    order = sorted(zip(values.tolist(), counts.tolist()), key=lambda vc: (-vc[1], vc[0]))
    return order[:k]


def lens_palette(a, k: int = LENS_CLASSES) -> list[int]:
    """The final prediction's ``k`` most probable classes, in palette order: a class keeps its colour at every layer."""
    probs = a.probs.numpy()
    return [int(i) for i in np.argsort(-probs, kind="stable")[:k]]


def lens_colours(indices: np.ndarray, classes: list[int]) -> np.ndarray:
    """(rows, cols) class indices -> (rows, cols, 3) uint8: the palette's i-th colour for ``classes[i]``, else grey."""
    indices = np.asarray(indices)
    out = np.empty((*indices.shape, 3), dtype=np.uint8)
    out[:] = draw.OTHER
    for colour, c in zip(draw.PALETTE, classes):
        out[indices == c] = colour
    return out


def lens_training_words(model: str, lang: str = "en") -> str:
    """How the head met patch tokens in training, which decides what the lens reads."""
    return i18n.text("lens-trained-here" if is_trained_here(model) else "lens-class-only", lang)


def lens_view(a, layer: int, size: int = DISPLAY_SIZE, opacity: float = 0.7, lang: str = "en") -> View:
    """Token content: the final norm and head applied to every patch token at ``layer``, top-1 class per patch."""
    if not a.has_classifier:
        return base.no_classifier_view(a, i18n.text("token-content", lang), size, lang)
    names = class_names(a.model)
    indices, probs = (t.numpy() for t in a.patch_lens(layer))
    classes = lens_palette(a)
    colour_of = dict(zip(classes, draw.PALETTE))
    picture = draw.category_overlay(a.image, lens_colours(indices, classes), opacity, size)
    top = [(c, n) for c, n in lens_classes(indices, len(names)) if c in colour_of]  # most frequent first
    entries = [(colour_of[c], f"{class_name(names[c], lang)} ({n})") for c, n in top]
    others = int(indices.size - sum(n for _, n in top))
    if others:
        entries.append((draw.OTHER, i18n.text("lens-other", lang, n=others)))
    image = draw.stack(picture, draw.swatch_legend(picture.width, entries))
    final = a.topk[0]
    agree = int((indices == final.index).sum())
    caption = i18n.text("lens-caption", lang, layer=layer, mean=float(probs.mean()), agree=agree, n=indices.size,
                        label=class_name(final.label, lang), training=lens_training_words(a.model, lang))
    voted = lens_classes(indices, describe.TOP)
    said = [i18n.text("alt-votes", lang, count=n, label=class_name(names[c], lang)) for c, n in voted]
    if indices.size > sum(n for _, n in voted):
        said.append(i18n.text("alt-votes-other", lang, count=int(indices.size - sum(n for _, n in voted))))
    alt = i18n.text("alt-lens", lang, layer=layer, L=a.depth, votes=describe.join(said, lang), agree=agree,
                    n=indices.size, label=class_name(final.label, lang), mean=float(probs.mean()))
    return View(image, caption, i18n.text("lens-legend", lang), i18n.text("lens-title", lang, layer=layer),
                note=fit_note(a, lang), alt=alt)


def prefix_norms(names, norms, lang: str = "en") -> str:
    """The prefix tokens' norms in words: "the class token's is 41.2", or each of them (registers)."""
    if len(names) == 1:
        return i18n.text("norms-one", lang, name=names[0], v=float(norms[0]))
    return i18n.text("norms-many", lang, values=", ".join(f"{n} {float(v):.1f}" for n, v in zip(names, norms)))


def token_norm_view(a, layer: int, opacity: float, cmap: str, size: int = DISPLAY_SIZE, lang: str = "en") -> View:
    """‖Y_l,i‖ of every patch token after block ``layer``, as a heatmap; the class token's in the caption."""
    norms = a.token_norms[layer - 1].numpy()  # (T,): the prefix tokens first
    p = a.num_prefix_tokens
    heat = norms[p:].reshape(a.grid)  # (rows, cols): patches in row-major order
    image, (lo, hi), legend = base.heat_view(a, heat, opacity, cmap, size, label=i18n.text("norms-label", lang),
                                             lang=lang)
    median = float(np.median(heat))
    registers = sum(n.startswith("register") for n in a.prefix_token_names)
    caption = (i18n.text("norms-caption", lang, layer=layer, D=a.queries[0].shape[-1], lo=lo, hi=hi, median=median,
                         prefix=prefix_norms(a.prefix_token_names, norms[:p], lang))
               + (i18n.text("norms-registers", lang, n=registers) if registers else ""))
    over = int((heat > 2 * median).sum())
    alt = i18n.text("alt-norms", lang, layer=layer, L=a.depth, lo=float(heat.min()), hi=float(heat.max()),
                    median=median, top=describe.top(heat, p, lang, number=lambda v: f"{v:.1f}"),
                    over=i18n.text("alt-norms-over", lang, k=over) if over else "",
                    prefix=prefix_norms(a.prefix_token_names, norms[:p], lang))
    return View(image, caption, legend, i18n.text("norms-title", lang, layer=layer), (lo, hi), fit_note(a, lang),
                alt)


MATRIX_CMAP = "magma"
MATRIX_DECADES = 3  # the log colour scale spans max/1000 .. max: a uniform row of N+1 weights sits mid-scale
MASKED = (120, 190, 230)  # the causal mask's removed triangle: sky blue, a colour magma never takes


def matrix_factor(tokens: int, panel: int) -> int:
    """Patch tokens per displayed row/column so that a matrix of ``tokens`` fits ``panel`` px at >= 1 px each."""
    return max(1, -(-(tokens - 1) // panel))


def log_scale(hi: float, decades: int = MATRIX_DECADES) -> tuple[float, float]:
    """(lo, hi) of a log colour scale ``decades`` decades below the largest weight ``hi`` (> 0)."""
    hi = max(hi, 1e-12)
    return hi / 10**decades, hi


def log_matrix_picture(m: np.ndarray, masked: np.ndarray, panel: int, scale: tuple[float, float]):
    """A (rows, cols) matrix drawn ``panel`` px square on a log colour scale, ``masked`` cells in :data:`MASKED`."""
    lo, hi = scale
    heat = np.log10(np.clip(m, lo, hi))
    rgb = draw.heat_rgb(heat, (panel, panel), MATRIX_CMAP, (np.log10(lo), np.log10(hi)))
    cells = Image.fromarray(masked.astype(np.uint8) * 255).resize((panel, panel), Image.Resampling.NEAREST)
    rgb[np.asarray(cells) > 0] = MASKED
    return Image.fromarray(rgb)


def matrix_view(a, layer: int, head: int, size: int = DISPLAY_SIZE, lang: str = "en") -> View:
    """One head's (N+1)x(N+1) attention matrix beside the same under a causal mask (11.4.2), on one log scale (a
    row's typical 1/(N+1) is black on a linear one); drawn smaller where its words overrun a narrow frame."""
    from vit.analysis import rollout  # noqa: PLC0415 - torch is loaded already: the analysis holds tensors

    full = a.attention_matrix(layer, head)  # (N+1, N+1), head 1-based
    masked = rollout.causal(full)
    panel = (size - 12) // 2
    for _ in range(2):
        factor = matrix_factor(a.num_tokens, panel)
        p = a.num_prefix_tokens
        shown = [rollout.downsample_matrix(m, factor, p).numpy() for m in (full, masked)]
        removed = rollout.downsample_matrix(full.new_ones(full.shape).tril(), factor, p).numpy() == 0  # all masked
        lo, hi = log_scale(float(shown[0].max()))  # the encoder's own range; the renormalised causal rows go above
        pictures = []
        for m, gone in zip(shown, (np.zeros_like(removed), removed)):
            pictures.append(log_matrix_picture(m, gone, panel, (lo, hi)))
            draw.outline_row(pictures[-1], m.shape[0])
        image = _matrix_sheet(pictures, (lo, hi), size, lang)  # titles over columns of the first panel's width
        over = image.height - (size + draw.COLORBAR_RESERVE)
        if over <= 0 or panel <= 24:
            break
        panel = max(24, panel - over)
    T, label = a.num_tokens, i18n.text("matrix-label", lang)
    shrink = i18n.text("matrix-shrink", lang, n=shown[0].shape[0], f=factor) if factor > 1 else ""
    caption = i18n.text("matrix-caption", lang, layer=layer, head=head, T=T, shrink=shrink)
    legend = i18n.text("matrix-legend", lang, label=label, decades=MATRIX_DECADES, lo=base.bar_number(lo),
                       hi=base.bar_number(hi))
    m = full.numpy().astype(np.float64)
    i, j = np.unravel_index(int(np.argmax(m)), m.shape)
    columns = m.mean(axis=0)  # what each key token gets from a row, on average
    col = int(np.argmax(columns))
    alt = i18n.text("alt-matrix", lang, T=T, layer=layer, L=a.depth, head=head, h=a.num_heads,
                    top=base.bar_number(m[i, j]), i=int(i), j=int(j), col=col, colmean=base.bar_number(columns[col]),
                    diag=base.bar_number(float(np.diag(m).mean())))
    return View(image, caption, legend, i18n.text("matrix-title", lang, layer=layer, head=head), (lo, hi), alt=alt)


def _matrix_sheet(pictures, scale: tuple[float, float], width: int, lang: str = "en"):
    """The two matrices under their titles (short ones past two lines), the colour bar and the mask's swatch."""
    words = [i18n.text(k, lang) for k in ("matrix-encoder", "matrix-causal")]
    short = [i18n.text(k, lang) for k in ("matrix-encoder-short", "matrix-causal-short")]
    sheet = draw.panels(pictures, words, short_titles=short, column=(width - 12) // 2)
    width = max(width, sheet.width)
    lo, hi = f"≤ {base.bar_number(scale[0])}", f"≥ {base.bar_number(scale[1])}"
    label = i18n.text("matrix-label", lang)
    if len(draw.colorbar_lines(width, lo, hi, label)[1]) > 2:
        label = i18n.text("matrix-bar", lang)
    image = draw.with_colorbar(sheet, MATRIX_CMAP, lo, hi, label, width)
    masked = i18n.text("matrix-masked", lang)
    if len(draw.wrap_text(masked, draw.font(draw.BAR_FONT, bold=False), image.width - 52)) > 1:
        masked = i18n.text("matrix-masked-short", lang)
    return draw.stack(image, draw.swatch_legend(image.width, [(MASKED, masked)]))
