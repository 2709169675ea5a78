"""The one picture registry: every picture the app, the CLI's ``--out`` and the benchmark draw.

Each :class:`Picture` says its element id, its tab, its title, its "What is this?" text, how it is
drawn and what it depends on; :class:`Display` is what a redraw may change, with its defaults
defined here once. To add a picture: write its view (a function returning a ``View``), add one
``Picture`` to :data:`PICTURES`, and place it on its tab with ``parts.picture(c, name)`` (``vit/ui/tabs/``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from PIL import Image

from vit import validate, views
from vit.errors import InputError
from vit.views.draw import COLORBAR_ONE_LINE, COLORBAR_RESERVE, COLORBAR_WIDE

DISPLAY_SIZE = views.DISPLAY_SIZE  # px, a main picture as drawn without a screen (the CLI, the API)
TILE_SIZE = views.TILE_SIZE  # px, one small-multiples tile
PROJECTOR_SIZE = 900  # px: a main picture in projector mode without a screen
PROJECTOR_TILE = 280  # px: one small-multiples tile in projector mode, likewise
# Projector mode draws each picture at its frame's size / PROJECTOR_ENLARGE and enlarges the drawing to the frame
# (the server does, before it is sent): every text inside, at least draw.SMALLEST_TEXT = 14 px as drawn, is
# >= 19 px on the wall, and the page shows the picture as it shows any other.
PROJECTOR_ENLARGE = 1.4
MIN_FRAME = 120  # px: no picture is drawn for a smaller frame
CENTRE = (0.5, 0.5)  # the query patch before any click, as a fraction of (width, height)

# The page's screens: the page names the one it is on when it opens (vit.ui.tabs.controls: "phone" up to 640 px wide,
# "wide" from 1600 x 900 px, "laptop" between) and each tab's pictures are drawn for a fixed frame of that screen,
# in px (width, height): what the page's layout gives them at 390 x 844, 1280 x 720 and 1920 x 1080. The page
# shows a picture at its drawn size or smaller, never enlarged, so a click maps through one scale (View.cells),
# and these are the only sizes a picture is ever drawn at (tests/test_frames.py reads the text of every one).
# Keys: "" for any tab, a tab, or a picture with a frame of its own.
SCREENS: dict[str, dict[str, tuple[int, int]]] = {
    "phone": {"": (318, 360)},
    "laptop": {"": (428, 340), "why": (428, 405), "whatif": (428, 415), "inside": (872, 360), "figure7": (280, 415)},
    "wide": {"": (670, 690), "why": (670, 755), "whatif": (670, 765), "whatif-heads": (670, 518),
             "inside": (1357, 710), "figure7": (440, 765)},
}


def screen_frame(screen: str, tab: str, picture: str | None = None) -> tuple[int, int]:
    """The frame (width, height) a picture of ``tab`` is drawn for on ``screen`` (one of :data:`SCREENS`)."""
    frames = SCREENS[screen]
    return next(frames[k] for k in (picture, tab, "") if k in frames)


@dataclass(frozen=True)
class Display:
    """How the pictures of one analysis are shown: everything a redraw may change, and nothing else."""

    query: tuple[float, float] = CENTRE  # the clicked patch, as fractions (x, y) of the picture
    layer: int | None = None  # 1-based; None: the last layer run
    head: int = 1  # 1-based
    opacity: float = 0.6
    cmap: str = "cividis"  # reads the same to colour-blind viewers and in greyscale
    projector: bool = False  # drawn larger, for the back of the room
    # (width, height) px of the frame the page shows the picture in (:func:`screen_frame`); None (the CLI, the
    # API): the fixed sizes of sizes().
    frame: tuple[int, int] | None = None
    lang: str = "en"  # the language of its captions and of the words drawn in it (vit.i18n): "en" or "zh"
    # The query's patch outlined in the pictures that only mark it (Picture.marks_query); False on the page, which
    # outlines it itself in the browser, at once when a patch is clicked (vit/ui/page.js).
    marks: bool = True

    def sizes(self) -> tuple[int, int]:
        """(main picture, small-multiples tile) in pixels, as drawn when no frame is given."""
        return (PROJECTOR_SIZE, PROJECTOR_TILE) if self.projector else (DISPLAY_SIZE, TILE_SIZE)

    def target(self) -> tuple[int, int] | None:
        """(width, height) px to draw a picture at so that it fills its frame: the frame's, or in projector
        mode the frame's / PROJECTOR_ENLARGE (:func:`draw` then enlarges it); None without a frame."""
        if self.frame is None:
            return None
        k = PROJECTOR_ENLARGE if self.projector else 1.0
        return tuple(max(MIN_FRAME, int(v / k)) for v in self.frame)

    def layer_of(self, a) -> int:
        return a.depth if self.layer is None else self.layer


# A view's weights: Figure 7's filters and position similarities come from the loaded model, not the analysis.
Weights = Callable[[str], Any]  # "filters" or "similarity" -> the array view.filters_view / position_view draws


@dataclass(frozen=True)
class Picture:
    """One picture of the page: where it is, what it says, how it is drawn, what it depends on."""

    name: str  # element id; its caption is "<name>-caption"
    tab: str  # the page tab that shows it
    title: str  # the heading above it
    what_is: str  # "What is this?": two to five sentences for a newcomer
    draw: Callable[..., Any] = field(repr=False)  # (analysis, Display, size, tile, weights) -> View
    depends_on: tuple[str, ...] = ()  # the Display fields it is drawn from (besides the analysis)
    on_fusion: bool = False  # drawn from the head fusion (rollout, fused per-layer maps)
    on_discard: bool = False  # drawn from the discard ratio
    clickable: bool = False  # a click picks the query patch (What if?'s own: a patch or a head to take away)
    download: bool = True
    in_api: bool = False  # returned by /analyze and /redraw
    out_file: str = ""  # the CLI's ``--out`` writes it under this name ("": it does not)
    # How a frame sizes it (Display.frame): "square" (the model's view, ``size`` its longer side, a colour
    # bar under it), "grid" (the patch grid, numbers on margins), "sheet" (tiles: ``tile`` is the frame),
    # "plot" (``size`` is the frame's (width, height)).
    fit: str = "square"
    # How the page and the HTTP API send it: "jpeg" for pictures drawn on the photo (quality 90, no chroma
    # subsampling: ~2 ms for 640 px where PNG takes ~30, and 1/5 of the bytes); "png" for plots, code, matrices
    # and cards, whose lines and text stay exact. Download and the CLI's --out write PNG always.
    encoding: str = "jpeg"
    # The query shows in it only as an outline and a sentence: drawn without them (Display.marks False), the query
    # changes nothing in it.
    marks_query: bool = False


def _weights_needed(weights: Weights | None, name: str) -> Weights:
    if weights is None:
        raise InputError(f"the {name} picture is drawn from the model's weights: pass weights=")
    return weights


PICTURES: dict[str, Picture] = {p.name: p for p in (
    Picture(
        "patch-grid", "patches", "Patch grid: click a patch, or use ← ↑ → ↓",
        "A transformer reads a sequence of tokens, not pixels. The H×W image is cut into P×P patches and each "
        "patch is mapped to a D-dimensional token by one shared linear map (a convolution with kernel = stride = P). "
        "The N = HW/P² patch tokens are read row by row, left to right, after a learned class token (token 0): "
        "N+1 tokens in all. A smaller P gives more, finer tokens, and attention's cost grows with (N+1)².",
        lambda a, d, size, tile, w: views.grid_view(a, d.query if d.marks else None, size, d.lang),
        depends_on=("query",), fit="grid", clickable=True, in_api=True, out_file="patch_grid.png", marks_query=True),
    Picture(
        "query-view", "patches", "What the clicked patch attends to",
        "One row of softmax(QKᵀ/√d): the chosen patch's query is compared with every token's key, and the "
        "softmax turns the scores into weights that sum to 1. Bright patches are those whose values this patch "
        "mixes in most, at this layer and head. It shows where one patch looks at one depth, not what the model "
        "finally relies on.",
        lambda a, d, size, tile, w: views.query_view(a, d.query, d.layer_of(a), d.head, d.opacity, d.cmap, size,
                                                     d.lang),
        depends_on=("query", "layer", "head", "opacity", "cmap"), clickable=True, in_api=True,
        out_file="query.png"),
    Picture(
        "rollout-view", "attention", "Attention rollout: where the class token looks",
        "Attention rollout (Abnar & Zuidema, 2020) follows attention back through the layers. Each layer's "
        "attention, heads fused and the residual path added (A + I, rows renormalised), says how much each token "
        "draws from every other; multiplying these from layer 1 up estimates how much of each patch reaches the "
        "class token, which makes the prediction. It is an estimate of information flow, not a proof of what "
        "mattered.",
        lambda a, d, size, tile, w: views.rollout_view(a, d.layer_of(a), d.opacity, d.cmap, size, d.lang),
        depends_on=("layer", "opacity", "cmap"), on_fusion=True, on_discard=True, clickable=True, in_api=True,
        out_file="rollout.png"),
    Picture(
        "head-views", "attention", "Class token, per head",
        "Each layer has h attention heads working side by side, each with its own query, key and value "
        "projections. One tile per head shows where the class token looks in that head: heads are free to "
        "specialise, on the object, the background or neighbouring patches. Each tile is coloured from 0 to its "
        "own max, so compare where the tiles look, not how strongly.",
        lambda a, d, size, tile, w: views.heads_view(a, d.layer_of(a), d.opacity, d.cmap, tile, d.lang),
        depends_on=("layer", "opacity", "cmap"), fit="sheet", in_api=True, out_file="heads.png"),
    Picture(
        "layer-views", "depth", "Class token, per layer",
        "One tile per encoder layer: where the class token looks at that depth, heads fused. Early layers often "
        "look broadly or locally; later ones, after the tokens have exchanged information, often settle on what "
        "the decision rests on. Each tile is coloured from 0 to its own max.",
        lambda a, d, size, tile, w: views.layers_view(a, d.opacity, d.cmap, tile, d.lang),
        depends_on=("opacity", "cmap"), fit="sheet", on_fusion=True, in_api=True, out_file="layers.png"),
    Picture(
        "depth-plot", "depth", "How the prediction forms (early exit)",
        "After every layer the class token is sent through the final LayerNorm and the classification head, as "
        "if the model stopped there (an early exit). Blue: the probability of the final answer at each depth; "
        "orange: whichever class would win there. The head was trained on the last layer only, so early readings "
        "are rough, but they show at what depth the answer forms.",
        lambda a, d, size, tile, w: views.depth_view(a, size, d.lang), fit="plot", out_file="depth.png",
        encoding="png"),
    Picture(
        "block-view", "inside", "Inside a block: what attention and the MLP add",
        "Each encoder block is pre-norm: H = X + MSA(LN(X)), then Y = H + MLP(LN(H)). The chart gives, per "
        "layer, the average length ||·||₂ of the tokens entering the block (the residual stream), of what "
        "attention adds, of what the MLP adds, and of the tokens leaving it. The shape never changes; the "
        "content does (11.4.1).",
        lambda a, d, size, tile, w: views.block_view(a, d.layer_of(a), size, d.lang),
        depends_on=("layer",), fit="plot", encoding="png"),
    Picture(
        "block-code", "lesson", "The encoder block in code (11.4.4)",
        "The chapter's ViTEncoderLayer.forward, four lines: LayerNorm, attention, add; LayerNorm, MLP, add. Under "
        "each line, this image's numbers at the chosen layer, as the lesson's text gives them: the shape, "
        "which never changes, and how long the vectors are that attention and the MLP add to the residual stream.",
        lambda a, d, size, tile, w: views.block_code_view(a, d.layer_of(a), size, d.lang),
        depends_on=("layer",), download=False, encoding="png"),
    Picture(
        "lens-view", "inside", "Token content: each patch's own vote (chosen layer)",
        "The final norm and the classification head applied to every patch token after this layer, not only "
        "to the class token: which class each patch would vote for on its own. Early layers vote noise; "
        "later, patches on the object agree with the final answer.",
        lambda a, d, size, tile, w: views.lens_view(a, d.layer_of(a), size, lang=d.lang),
        depends_on=("layer",)),
    Picture(
        "token-norms", "inside", "Token lengths ||Y|| after the chosen layer",
        "How long each patch token's vector is after this layer. On large trained models a few background "
        "patches grow very long: they are used as scratch space (Darcet et al. 2024, 'Vision Transformers "
        "Need Registers').",
        lambda a, d, size, tile, w: views.token_norm_view(a, d.layer_of(a), d.opacity, d.cmap, size, d.lang),
        depends_on=("layer", "opacity", "cmap")),
    Picture(
        "matrix-view", "inside", "The whole matrix of the chosen layer and head, and under a causal mask",
        "The whole softmax(QKᵀ/√d) of one head: row i is where token i looks, column j who looks at token j; "
        "row 0 is the class token. Beside it, the same matrix under a causal mask, as a decoder would see "
        "it: each token only sees those before it. The ViT encoder has no such mask (11.4.2).",
        lambda a, d, size, tile, w: views.matrix_view(a, d.layer_of(a), d.head, size, d.lang),
        depends_on=("layer", "head"), encoding="png"),
    Picture(
        "filters-view", "figure7", "Patch-embedding filters: principal components",
        "The first principal components of the patch-embedding kernels (the D filters of the patch "
        "convolution), as in the ViT paper's Figure 7 (left). They show what the first layer looks for in a "
        "patch.",
        lambda a, d, size, tile, w: views.filters_view(_weights_needed(w, "filters-view")("filters"), size,
                                                       lang=d.lang), encoding="png"),
    Picture(
        "position-view", "figure7", "Position-embedding similarity",
        "Cosine similarity between the learned position embeddings: one small map per patch position, "
        "bright where another position's embedding is similar. Trained models learn rows and columns "
        "(ViT paper, Figure 7, centre); after a patch-size change these are the resampled embeddings.",
        lambda a, d, size, tile, w: views.position_view(_weights_needed(w, "position-view")("similarity"), a.grid,
                                                        size, lang=d.lang), encoding="png"),
    Picture(
        "distance-view", "figure7", "Mean attention distance per head",
        "For each head and layer, how far (in pixels) the patches look on average: the attention-weighted "
        "distance between a patch and the patches it attends to (ViT paper, Figure 7, right). Some heads "
        "look far from the first layer; others stay local until late.",
        lambda a, d, size, tile, w: views.distance_view(a, size, d.lang), fit="plot", encoding="png"),
    Picture(
        "why-map", "why", "Why this class? The map for the chosen class",
        "An explanation map answers \"which patches made the model say this class rather than that one?\". "
        "AttnLRP (Achtibat et al., 2024), the default, passes the score back through every layer by rules made for "
        "attention; asked \"why A rather than B?\" it lights what sets A apart, so on a drawing of two shapes it "
        "points at the one asked. Occlusion takes each 2×2 block of patches away and measures the fall: what the "
        "model does, not a reading of its insides. Rollout and the last layer's attention follow attention only, "
        "the same map for every class; gradient-weighted rollout and Grad-CAM weigh attention or features by the "
        "class's gradient, and on two objects often light both. A map is a claim, not a fact: test it.",
        lambda e, d, size, tile, w: views.explanation_view(e, d.opacity, d.cmap, size, d.lang),
        depends_on=("opacity", "cmap"), download=False),
    Picture(
        "why-curves", "why", "Is it right? Deletion and insertion",
        "The test (deletion and insertion, Petsiuk et al., 2018): grey out the patches the map ranks first, "
        "10% at a time, and watch the class's probability. If the map is right it falls fast (deletion: lower "
        "area is better) and, starting from a grey image and putting those patches back first, it rises fast "
        "(insertion: higher area is better). The dashed lines do the same in a random order: a map worth "
        "believing beats them.",
        lambda pair, d, size, tile, w: views.curves_view(*pair, size, d.lang), fit="plot",
        download=False, encoding="png"),
    Picture(
        "whatif-map", "whatif", "What if? Click patches to take them away",
        "A ViT can run on a subset of its tokens: the removed patches' tokens are simply left out, and every kept "
        "patch keeps its own position embedding (the idea behind MAE, He et al. 2022); a CNN would need grey "
        "squares. The prediction beside it is the model's on what is left. Colours: attention rollout over the "
        "kept patches. Tick the grey comparison to see the deletion test's way: the same patches greyed, every "
        "token kept; where the two disagree, the model reacts to the grey, not to the missing content.",
        lambda w, d, size, tile, wts: views.intervention_view(w, d.opacity, d.cmap, size, d.lang),
        depends_on=("opacity", "cmap"), clickable=True, download=False),
    Picture(
        "whatif-heads", "whatif", "The heads: click one to switch it off",
        "Every layer's h heads, one cell each (layers down, heads across). A head switched off has its output, "
        "softmax(QKᵀ/√d)V, replaced by zero (or by its mean over the tokens) before the output projection "
        "mixes the heads. \"Head importance\" switches each head off alone and measures how much the predicted "
        "class's probability drops: bright heads are the ones the answer needs. Many heads can go with little "
        "change (Michel et al. 2019, \"Are Sixteen Heads Really Better than One?\").",
        lambda g, d, size, tile, wts: views.head_grid_view(g, d.cmap, size, d.lang),
        depends_on=("cmap",), fit="plot", clickable=True, download=False, encoding="png"),
)}

TABS = ("patches", "attention", "depth", "why", "whatif", "inside", "figure7", "lesson")  # the page's tabs, in order
# Tabs that draw their own pictures: from an explanation (vit.ui.tabs.why), from an intervention (vit.ui.tabs.whatif).
OWN_PICTURES = ("why", "whatif")
API_PICTURES = tuple(n for n, p in PICTURES.items() if p.in_api)  # what /analyze and /redraw return
OUT_PICTURES = tuple(n for n, p in PICTURES.items() if p.out_file)  # what the CLI's --out writes
# Drawn from an Analysis on the tabs (the lesson's own pictures are drawn by the lesson, one per step).
ANALYSIS_PICTURES = tuple(n for n, p in PICTURES.items() if p.tab not in (*OWN_PICTURES, "lesson"))


def on_tab(tab) -> tuple[str, ...]:
    """The analysis pictures a redraw draws for the tab on screen (the first tab's for anything unknown)."""
    if tab in OWN_PICTURES or tab == "lesson":
        return ()
    tab = tab if tab in TABS else "patches"
    return tuple(n for n in ANALYSIS_PICTURES if PICTURES[n].tab == tab)


def draw(source, name: str, display: Display = Display(), weights: Weights | None = None):
    """One picture (a ``View``) of an analysis, or of an explanation for the Why tab's, as ``display`` says."""
    picture = PICTURES.get(name)
    if picture is None:
        raise InputError(f"picture must be one of {', '.join(PICTURES)}, got {validate.show(name)}")
    with views.drawing_language(display.lang):  # the words drawn into it, in its language's font
        view = _draw(picture, source, display, weights)
    from vit.views.describe import describe  # noqa: PLC0415 - its text alternative, written from the same data
    return replace(view, alt=describe(name, source, view, display, weights))


def _draw(picture: Picture, source, display: Display, weights: Weights | None):
    return as_shown(_fitted(picture, source, display, weights), display)


def as_shown(view, display: Display):
    """A view drawn for ``display`` (at :meth:`Display.target`) at the size the page shows it: in projector mode on a
    screen, enlarged :data:`PROJECTOR_ENLARGE` times; as it is otherwise."""
    return enlarged(view) if display.projector and display.frame is not None else view


def enlarged(view, k: float = PROJECTOR_ENLARGE):
    """A view drawn for projector mode, enlarged ``k`` times (its cells with it): the size it is shown at."""
    image = view.image
    size = (round(image.width * k), round(image.height * k))
    cells = view.cells.scaled(k) if view.cells is not None else None
    return replace(view, image=image.resize(size, Image.Resampling.BICUBIC), cells=cells)


def _fitted(picture: Picture, source, display: Display, weights: Weights | None):
    size, tile = frame_sizes(picture, source, display)
    view = picture.draw(source, display, size, tile, weights)
    target = display.target()
    if target is None or picture.clickable:  # a clickable picture is drawn to fit at once
        return view
    for _ in range(2):  # stacked parts (a legend under a map, a diagram over a chart) keep their own heights
        over_w, over_h = view.image.width - target[0], view.image.height - target[1]
        if max(over_w / target[0], over_h / target[1]) <= OVERFLOW or picture.fit == "sheet":
            break
        if picture.fit == "plot":
            size = (max(MIN_FRAME, size[0] - max(0, over_w)), max(MIN_FRAME, size[1] - max(0, over_h)))
        else:
            size = max(MIN_FRAME, size - max(over_w, over_h))
        view = picture.draw(source, display, size, tile, weights)
    return view


OVERFLOW = 0.02  # a picture this much larger than its frame is shown a little smaller; more is drawn again


def frame_sizes(picture: Picture, source, display: Display) -> tuple:
    """(size, tile) to draw ``picture`` at: the fixed sizes without a frame; with one, what fills it.

    A pure function of the display (a click on a clickable picture maps through the same size).
    """
    size, tile = display.sizes()
    target = display.target()
    if target is None:
        return (views.DEPTH_PLOT_SIZE if picture.fit == "plot" else size), tile
    w, h = target
    if picture.fit == "plot":
        return (w, h), tile
    if picture.fit == "sheet":
        return size, (w, h)
    if picture.fit == "grid":
        return views.grid_size_for(source, w, h), tile
    side = min(w, h - COLORBAR_RESERVE)  # a colour bar under it, on two lines when narrow
    if min(w, h - COLORBAR_ONE_LINE) >= COLORBAR_WIDE:
        side = min(w, h - COLORBAR_ONE_LINE)
    return max(MIN_FRAME, side), tile



JPEG_QUALITY = 90  # pictures drawn on the photo: no chroma subsampling, so text and outlines on them stay crisp


def encode(image, encoding: str = "png", out=None) -> None:
    """Write a picture in its :attr:`Picture.encoding` to ``out`` (a path or a file): what the page and the HTTP API
    are sent. JPEG at quality 90 for pictures drawn on the photo: ~2 ms for 640 px where PNG takes ~30 ms (a photo
    does not compress losslessly), for a fifth of the bytes. PNG at zlib level 1 for plots, code and matrices, whose
    lines and text stay exact (PIL's default level 6 would be ~4x slower for ~7% smaller files)."""
    if encoding == "jpeg":
        image.convert("RGB").save(out, format="JPEG", quality=JPEG_QUALITY, subsampling=0)
    else:
        image.save(out, format="PNG", compress_level=1)


def variant_key(key: str, name: str, head_fusion: str, discard_ratio: float) -> str:
    """The analysis's key plus the options ``name`` is drawn from: a fusion or discard change redraws only those."""
    picture = PICTURES[name]
    fusion = f"|{head_fusion}" if picture.on_fusion else ""
    discard = f"|{discard_ratio}" if picture.on_discard else ""
    return f"{key}{fusion}{discard}"


def signature(key: str, name: str, display: Display, cell=None) -> tuple:
    """What a picture depends on: it is redrawn only when this changes (``cell``: the query's patch, not its point)."""
    values = {"query": cell if cell is not None else display.query, "layer": display.layer, "head": display.head,
              "opacity": display.opacity, "cmap": display.cmap}
    picture = PICTURES[name]
    unmarked = picture.marks_query and not display.marks  # the query is not drawn in it
    return (key, *(values[f] for f in picture.depends_on if not (unmarked and f == "query")), display.projector,
            display.frame, display.lang)
