"""ViT Anatomy in the browser: a Gradio shell over ``vit`` (chapter 11.4, the ViT Encoder).

    python app.py                    # http://127.0.0.1:7860
    python app.py --host 0.0.0.0     # a class on the same network can connect
    python app.py --port 8000 --share

Upload a photo and follow it through the model in the chapter's notation:
(B, C, H, W) -> (B, N, D) -> (B, N+1, D) -> L encoder blocks -> h_cls -> (B, K).
The app only lays out and wires what ``vit`` computes: the model runs once per
image and setting (``vit.api.analyze``); every view of that run (layer, head,
clicked patch, opacity, colormap, top-k, head fusion, discard ratio) is drawn
again from the :class:`vit.Analysis` kept for the browser tab, without running
the model. Nothing heavy happens at import: torch and the models load on the
first request, and no weights are downloaded until an image is analysed (on a
Hugging Face Space, where ``SPACE_ID`` is set, the default model's checkpoint
downloads in the background from the start). On a ZeroGPU Space the model work of
an analysis (:func:`run_model`) runs under ``spaces.GPU``; see README, "Put it online".
"""

from __future__ import annotations

import argparse
import atexit
import functools
import html
import logging
import math
import os
import re
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # a classroom server phones nobody

try:  # Hugging Face's ZeroGPU package: there on Spaces, needed nowhere else; imported before torch, as its docs ask
    import spaces
except ImportError:
    spaces = None

import gradio as gr  # noqa: E402

ROOT = Path(__file__).resolve().parent
ASSETS = ROOT / "assets"
EXAMPLES = sorted(p for p in ASSETS.glob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))

log = logging.getLogger("vit.app")

DEFAULT_MODEL = "ViT-B/16"
DEFAULT_OPACITY = 0.6
DEFAULT_COLORMAP = "cividis"  # reads the same to colour-blind viewers and in greyscale
CENTRE = (0.5, 0.5)  # the query patch before any click, as a fraction of (width, height)

# Throughput of the traced forward pass on a CPU core, measured with torch 2 on 2 cores:
# ViT-B/16 at 224 px (35 GFLOPs) takes 0.45 s. Used only to say what will be slow.
CPU_GFLOPS_PER_CORE = 38.0
GPU_GFLOPS = 20_000.0
# How long a run may hold a ZeroGPU GPU (zerogpu_seconds), from the setting's cost. Measured on an H200
# (benchmarks/gpu-check-h200-2026-11-30.txt): ViT-B/16 analyses take 25 ms at P=16 and 0.47 s at P=4,
# the latter mostly copying its 0.7 GB of kept attention maps, queries and keys back to host memory.
ZEROGPU_START_S = 10.0  # ZeroGPU forks its GPU worker and starts CUDA before our code runs
ZEROGPU_LOAD_BYTES_PER_S = 0.5e9  # checkpoint from the disk cache to a model on the GPU: read, resample, copy
ZEROGPU_KEPT_BYTES_PER_S = 1.0e9  # kept maps to host memory (1.5 GB/s measured), then to the server process
ZEROGPU_MARGIN = 2.0  # a slice of a shared machine: twice the estimate before ZeroGPU stops a run
SLOW_S = 2.0  # above this a setting waits for the Analyze button, and the meter says so
AUTO_DOWNLOAD_MB = 400  # larger checkpoints (ViT-L, ViT-H) download only when Analyze is pressed
STATE_TTL_S = 3600  # a tab's analysis is dropped an hour after its last update
MODEL_WAITERS = 16  # requests admitted to vit.server.FairQueue at once; the rest wait in gradio's queue (64)

NO_IMAGE = "No image yet: upload a photo, take one with the webcam, paste one, or click an example below."
SERVER_ERROR = "Something went wrong on the server (it has been logged). Try again, or another image or setting."

# How many times the model ran (tests check that display-only changes do not add to it).
RUNS: Counter = Counter()

_cache = None
_store = None
_cache_lock = threading.Lock()


def model_cache():
    """The one :class:`vit.cache.ModelCache` of this server, created on first use."""
    global _cache
    with _cache_lock:
        if _cache is None:
            from vit.cache import ModelCache  # noqa: PLC0415 - imports torch

            _cache = ModelCache()
        return _cache


# --------------------------------------------------------------------------- cost meter


def cost(model, patch_size, depth):
    """:func:`vit.cost.estimate` (torch-free): tokens, attention entries, GFLOPs and memory of a setting."""
    from vit.cost import estimate  # noqa: PLC0415

    return estimate(model, patch_size, depth)


def over_budget(c) -> bool:
    from vit import cost as costs  # noqa: PLC0415 - the budget is read at call time (tests and admins change it)

    return c.peak_bytes > costs.MEMORY_BUDGET_GB * 1e9


def hardware() -> tuple[str, float]:
    """("a 2-core CPU", GFLOP/s) for the machine this server runs on; torch is not imported for it."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return "the GPU", GPU_GFLOPS
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return f"a {cores}-core CPU", CPU_GFLOPS_PER_CORE * cores


def estimated_seconds(c) -> float:
    return c.gflops / hardware()[1]


def cost_markdown(c) -> str:
    """The cost meter: tokens, attention entries, GFLOPs, and a warning when it will be slow."""
    where, rate = hardware()
    seconds = c.gflops / rate
    lines = [
        f"**{c.display_name}** at P = {c.patch_size} (checkpoint's own: {c.native_patch_size}), "
        f"L = {c.depth}: grid {c.grid}×{c.grid} on {c.input_size}×{c.input_size} px",
        f"→ N+1 = **{c.tokens:,} tokens**; attention (N+1)² = **{c.attention_per_head:,}** entries per head, "
        f"L·h·(N+1)² = **{c.attention_total:,}** in all",
        f"→ **≈ {c.gflops:,.1f} GFLOPs**, about {seconds:.1f} s on {where}; "
        f"keeps {c.kept_bytes / 1e6:,.0f} MB of attention maps for this tab",
    ]
    if over_budget(c):
        from vit import cost as costs  # noqa: PLC0415

        lines.append(f"⚠ **Too big for this server** ({c.peak_bytes / 1e9:.1f} GB of attention; the limit is "
                     f"{costs.MEMORY_BUDGET_GB:g} GB): choose a larger patch size or fewer layers.")
    elif seconds > SLOW_S:
        lines.append(f"⚠ **Slow: will take ~{seconds:.0f} s on {where}.** It runs when you press **Analyze**.")
    return "\n\n".join(lines)


def cost_meter(model, patch_size, depth) -> str:
    """The cost meter for a setting; a bad setting is described instead of raised."""
    from vit.errors import InputError  # noqa: PLC0415

    try:
        return cost_markdown(cost(model, patch_size, depth))
    except InputError as exc:
        return f"⚠ {exc}"


# --------------------------------------------------------------------------- error handling


_pictures = None


def picture_folder():
    """The server's :class:`vit.server.PictureFolder`, created on first use (pruned in the background)."""
    global _pictures
    with _cache_lock:
        if _pictures is None:
            from vit.server import PictureFolder  # noqa: PLC0415

            _pictures = PictureFolder()
            atexit.register(_pictures.remove)
        return _pictures


def png_file(image) -> str:
    """Save a picture as PNG at zlib level 1 and return its path for gradio to serve.

    Gradio would encode a PIL image at PIL's default level 6: for a 448 px overlay that is
    ~100 ms against ~25 ms, for a file ~7% smaller; four pictures change per redraw.
    Gradio copies the file into its own cache at once; the folder is pruned in the background.
    """
    path = picture_folder().new_path(".png")
    image.save(path, format="PNG", compress_level=1)
    return str(path)


def _as_files(result):
    from PIL import Image  # noqa: PLC0415

    if isinstance(result, Image.Image):
        return png_file(result)
    if isinstance(result, tuple):
        return tuple(png_file(x) if isinstance(x, Image.Image) else x for x in result)
    return result


_fair = None


def fair_queue():
    """The server's :class:`vit.server.FairQueue`: who runs the model next."""
    global _fair
    with _cache_lock:
        if _fair is None:
            from vit.server import FairQueue  # noqa: PLC0415

            _fair = FairQueue(slots=1)
        return _fair


def session_of(request) -> str:
    """The browser tab (gradio session) a request comes from; the client's address without one."""
    session = getattr(request, "session_hash", None)
    if session:
        return f"session:{session}"
    client = getattr(request, "client", None)
    return f"client:{getattr(client, 'host', None) or 'python'}"


def release_memory() -> None:
    """After a model run: hand freed memory back to the OS and log what the caches account for."""
    from vit.cache import model_bytes  # noqa: PLC0415
    from vit.server import rss_bytes, trim_memory  # noqa: PLC0415

    trim_memory()
    with _cache_lock:
        models = sum(model_bytes(m) for m in _cache.models()) if _cache is not None else 0
        analyses = _store.nbytes if _store is not None else 0
    log.info("memory: RSS %.2f GB; model cache %.2f GB, kept analyses %.2f GB",
             rss_bytes() / 1e9, models / 1e9, analyses / 1e9)


def analysis_store():
    """The server's :class:`vit.cache.AnalysisStore`: tabs hold keys, the analyses live here, bounded."""
    global _store
    with _cache_lock:
        if _store is None:
            from vit.cache import AnalysisStore  # noqa: PLC0415

            _store = AnalysisStore()
        return _store


def kept(key):
    """The analysis a tab's key stands for; a clear message if it was dropped to make room."""
    from vit.errors import InputError  # noqa: PLC0415

    analysis = analysis_store().get(key)
    if analysis is None:
        raise InputError("This picture's analysis was dropped to make room for other users' analyses: "
                         "press Analyze to run it again.")
    return analysis


def handler(fn):
    """Turn our errors into messages a student reads; log anything else and keep serving.

    Pictures in the result go out as fast-encoded PNG files (:func:`png_file`).
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from vit.errors import InputError  # noqa: PLC0415

        try:
            return _as_files(fn(*args, **kwargs))
        except gr.Error:
            raise
        except InputError as exc:
            log.info("%s refused: %s", fn.__name__, exc)  # in full, paths included: for the server's log only
            raise gr.Error(getattr(exc, "public", str(exc)), title="Please check", print_exception=False) from None
        except Exception:
            log.exception("%s failed", fn.__name__)
            raise gr.Error(SERVER_ERROR, title="Server error", print_exception=False) from None

    return wrapper


# --------------------------------------------------------------------------- small views (pure)


def banner_html(analysis=None) -> str:
    """The weights banner: which weights run, in a colour and a word (not the colour alone)."""
    offer = ""
    if analysis is None:
        kind, head, text = "idle", "No image analysed yet", "Pick an example or upload a photo."
    else:
        from vit.config import PRESETS  # noqa: PLC0415

        native = PRESETS[analysis.model]
        text = analysis.status
        pretrained = "✔ TRAINED HERE" if analysis.weights == "trained" else "✔ PRETRAINED"
        if analysis.weights == "random":
            kind, head = "bad", "⚠ UNTRAINED"
            text = re.sub(r"^UNTRAINED:?\s*", "", text)
            offer = _trained_offer(analysis.model)
        elif (analysis.patch_size, analysis.depth) != (native.patch_size, native.num_layers):
            kind, head = "warn", f"{pretrained}, modified"
        else:
            kind, head = "ok", pretrained
    body = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text.replace("->", "→")))
    if kind == "bad":  # why a download failed is for the teacher: in smaller print
        body = re.sub(r" \([^()]{40,}\)", lambda m: f'<span class="detail">{m.group(0)}</span>', body)
    return f'<div class="banner {kind}" role="status"><b>{html.escape(head)}</b> · {body}{offer}</div>'


TRAINED_MODEL = "ViT-Tiny shapes, trained here"  # offered when ImageNet weights cannot be had


def _trained_offer(model: str) -> str:
    """The banner's line offering the model trained here, for a family whose ImageNet weights are missing."""
    from vit.families import is_trained_here  # noqa: PLC0415

    if is_trained_here(model):
        return ""
    return (f'<br><span class="offer" data-offer="{html.escape(TRAINED_MODEL)}">No ImageNet weights here? '
            f"<b>{html.escape(TRAINED_MODEL)}</b> runs with no download: real predictions on drawn shapes "
            "(press the button below, then try the shape examples).</span>")


def offer_button(banner: str):
    """Show the "try the model trained here" button while the banner offers it."""
    return gr.update(visible=isinstance(banner, str) and "data-offer=" in banner)


def use_trained_model():
    """The offer's button: switch the model dropdown to the model trained here (which then runs)."""
    return TRAINED_MODEL


def stage_rows(stages, depth: int) -> list[list[str]]:
    """The stage table; with more than 3 layers the middle ones fold into one row (same shapes)."""
    by_layer: dict[int, list] = {}
    before, after = [], []
    for s in stages:
        m = re.match(r"layer (\d+) ", s.name)
        if m:
            by_layer.setdefault(int(m.group(1)), []).append(s)
        else:
            (after if by_layer else before).append(s)

    def row(s, name=None, module=None, params=None):
        p = s.params if params is None else params
        return [name or s.name, module or s.module, s.notation, str(tuple(s.shape)), f"{p:,}" if p else "–"]

    rows = [row(s) for s in before]
    layers = sorted(by_layer)
    for n in layers:
        if len(layers) > 3 and n == layers[1]:
            middle = layers[1:-1]
            out = by_layer[middle[0]][-1]  # "layer n output": the whole block
            rows.append(row(out, f"layers {middle[0]}–{middle[-1]} (same shapes, ×{len(middle)})",
                            f"encoder.layers.{middle[0] - 1}–{middle[-1] - 1}",
                            sum(by_layer[k][-1].params for k in middle)))
        if len(layers) > 3 and n in layers[1:-1]:
            continue
        rows.extend(row(s) for s in by_layer[n])
    rows.extend(row(s) for s in after)
    return rows


STAGE_HEADERS = ["stage", "module (chapter's name)", "notation", "shape", "parameters"]


def top_k_label(analysis, k: int) -> dict[str, float]:
    """{label: probability} of the k most probable classes, from the kept probabilities."""
    if k <= len(analysis.topk):
        return {p.label: p.prob for p in analysis.topk[:k]}
    from vit.families import class_names  # noqa: PLC0415

    names = class_names(analysis.model)
    values, indices = analysis.probs.topk(min(k, len(names)))
    return {names[int(i)]: float(p) for p, i in zip(values, indices)}


def display_size(analysis) -> tuple[int, int]:
    """(width, height) of the pictures ``vit.render`` draws of the model's view."""
    from vit.render import DISPLAY_SIZE  # noqa: PLC0415

    h, w = analysis.image.shape[:2]
    scale = DISPLAY_SIZE / max(h, w)
    return round(w * scale), round(h * scale)


def query_cell(query, grid: tuple[int, int]) -> tuple[int, int]:
    """(row, col) of the patch under a point given as fractions (x, y) of the picture."""
    fx, fy = query
    rows, cols = grid
    return min(rows - 1, max(0, int(fy * rows))), min(cols - 1, max(0, int(fx * cols)))


def clicked_fraction(index, size: tuple[int, int]) -> tuple[float, float]:
    """A click at pixel (x, y) of a picture of ``size`` as fractions of its width and height."""
    from vit.errors import InputError  # noqa: PLC0415

    try:
        x, y = (float(v) for v in index)
    except (TypeError, ValueError):
        raise InputError(f"expected a click position (x, y) on the picture, got {index!r}") from None
    w, h = size
    return min(max(x / w, 0.0), 0.999999), min(max(y / h, 0.0), 0.999999)


def _colormap(value) -> str:
    from vit import render, validate  # noqa: PLC0415
    from vit.errors import InputError  # noqa: PLC0415

    if isinstance(value, str) and value.strip().lower() in render.COLORMAPS:
        return value.strip().lower()
    raise InputError(f"colormap must be one of {', '.join(map(repr, render.COLORMAPS))}, got {validate.show(value)}")


def _layer_head(analysis, layer, head) -> tuple[int, int]:
    """Validated 1-based (layer, head) for an analysis; a layer past the depth run shows the last one."""
    from vit import validate  # noqa: PLC0415
    from vit.config import PRESETS  # noqa: PLC0415

    native = PRESETS[analysis.model]
    layer = analysis.depth if layer is None else min(validate.layer(layer, native.num_layers), analysis.depth)
    return layer, validate.head(head, analysis.num_heads)


def _query(value) -> tuple[float, float]:
    try:
        fx, fy = (float(v) for v in value)
    except (TypeError, ValueError):
        return CENTRE
    return (fx, fy) if 0 <= fx < 1 and 0 <= fy < 1 else CENTRE


# --------------------------------------------------------------------------- views of an analysis


def grid_view(a, query):
    """The patch grid with the query patch outlined, and its caption."""
    from vit import render  # noqa: PLC0415

    rows, cols = a.grid
    r, c = query_cell(query, a.grid)
    h, w = a.input_size
    image = render.patch_grid(a.image, a.grid, mark=(r, c))
    caption = (
        f"**What the model sees:** {h}×{w} pixels cut into a **{rows}×{cols} grid** of "
        f"{a.patch_size}×{a.patch_size} patches → **N = {a.num_patches} patch tokens**, plus the class token: "
        f"N+1 = {a.num_tokens}. Numbers are token indices, flattened row by row (row-major): "
        f"patch (r, c) is token 1 + r·{cols} + c. **Click a patch** to ask what it attends to."
    )
    return image, caption


def query_view(a, query, layer, head, opacity, cmap):
    from vit import render  # noqa: PLC0415

    rows, cols = a.grid
    r, c = query_cell(query, a.grid)
    token = 1 + r * cols + c
    heat = a.attention_map(layer, head - 1, token).numpy()
    image = render.overlay(a.image, heat, opacity, cmap, mark=(r, c))
    caption = (
        f"**Patch (row {r}, col {c}) = token {token} as the query:** row {token} of softmax(QKᵀ/√d) "
        f"at layer {layer}, head {head} — where this patch looks (outlined)."
    )
    return image, caption


def rollout_view(a, layer, opacity, cmap):
    from vit import render  # noqa: PLC0415

    image = render.overlay(a.image, a.rollout(layer).numpy(), opacity, cmap)
    discard = f", weakest {a.discard_ratio:.0%} of each row's links dropped" if a.discard_ratio else ""
    caption = (
        f"**Attention rollout, layers 1–{layer}:** how much of each patch flows into the class token "
        f"through attention and the residual path: per layer rownorm(A + I), heads fused by "
        f"**{a.head_fusion}**{discard}, multiplied from layer 1 to {layer}."
    )
    return image, caption


def heads_view(a, layer, opacity, cmap):
    from vit import render  # noqa: PLC0415

    titles = [f"head {i + 1}" for i in range(a.num_heads)]
    image = render.small_multiples(a.image, a.head_maps(layer).numpy(), titles, columns=4, alpha=opacity, cmap=cmap)
    caption = (
        f"**Layer {layer}, one picture per head:** the class token's row of softmax(QKᵀ/√d) in each of "
        f"the h = {a.num_heads} heads; each head is free to look somewhere else."
    )
    return image, caption


def layers_view(a, opacity, cmap):
    import numpy as np  # noqa: PLC0415

    from vit import render  # noqa: PLC0415

    maps = np.stack([a.attention_map(n).numpy() for n in range(1, a.depth + 1)])  # (L, rows, cols)
    per_row = 4 if a.depth <= 8 else 6 if a.depth <= 12 else 8
    titles = [f"layer {n}" for n in range(1, a.depth + 1)]
    image = render.small_multiples(a.image, maps, titles, columns=per_row, alpha=opacity, cmap=cmap)
    caption = (
        f"**The class token in every layer** (heads fused by {a.head_fusion}), layer 1 to L = {a.depth}: "
        f"how its attention moves as the tokens exchange information."
    )
    return image, caption


def views(a, query, layer, head, opacity, cmap) -> tuple:
    """Everything the display controls change: rollout, heads, layers and query, each with its caption."""
    return (*rollout_view(a, layer, opacity, cmap), *heads_view(a, layer, opacity, cmap),
            *layers_view(a, opacity, cmap), *query_view(a, query, layer, head, opacity, cmap))


def _depth_plot(a):
    from vit import render  # noqa: PLC0415

    lp = a.layer_predictions
    return render.depth_plot([p.layer for p in lp], [p.prob for p in lp], [p.label for p in lp],
                             [p.final_class_prob for p in lp], a.topk[0].label)


def upload_roots() -> tuple[str, ...]:
    """The folders whose files a request may name: gradio's upload folder and the app's assets."""
    from gradio.utils import get_upload_folder  # noqa: PLC0415

    return get_upload_folder(), str(ASSETS)


def _image_source(image):
    """The one gate for every image that comes with a request, public event or internal.

    A gr.Image payload names a file; only a file that gradio itself received as an
    upload (or one of the app's own examples) is ever opened: the path is resolved,
    symlinks followed, and must lie under :func:`upload_roots`. Anything else (another
    path, a URL, a ``data:`` string, a dict without a path) gets one sentence that says
    nothing about the path. PIL images and arrays come only from Python callers.

    Returns:
        (what ``vit.images.load_image`` reads, the name the student knows the file by).
    """
    from vit.errors import InputError  # noqa: PLC0415
    from vit.server import proven_file  # noqa: PLC0415

    if image is None or image == "" or image == {}:
        raise InputError(NO_IMAGE)
    if isinstance(image, dict):
        path, name = image.get("path"), image.get("orig_name")
    elif isinstance(image, str):
        path, name = image, None
    elif hasattr(image, "path"):  # a gradio FileData object
        path, name = image.path, getattr(image, "orig_name", None)
    else:
        return image, None  # a PIL image or an array, from Python: nothing on disk
    real = proven_file(path, upload_roots())
    return real, (name if isinstance(name, str) and name else real.name)


def _load_image(source, name):
    """Decode the upload; messages name the file as the student knows it, not the server's path."""
    from vit.errors import InputError  # noqa: PLC0415
    from vit.images import load_image  # noqa: PLC0415

    try:
        return load_image(source)
    except InputError as exc:
        if name is None:
            raise
        raise InputError(str(exc).replace(str(source), repr(name))) from None


def _progress_reporter(progress, label: str):
    def report(done: int, total: int) -> None:
        if total:
            progress((done // 1_000_000, total // 1_000_000), desc=f"downloading the {label} weights", unit="MB")
        else:
            progress(None, desc=f"downloading the {label} weights: {done / 1e6:.0f} MB")

    return report


# --------------------------------------------------------------------------- Hugging Face Spaces


def on_space() -> bool:
    """Whether this server runs on Hugging Face Spaces, which sets ``SPACE_ID`` ("teacher/vit-anatomy")."""
    return bool(os.environ.get("SPACE_ID"))


def gpu(duration):
    """``spaces.GPU(duration=duration)`` where the ``spaces`` package is installed; elsewhere nothing.

    On a ZeroGPU Space the decorated function runs in a GPU worker process for at most
    ``duration(*args, **kwargs)`` seconds. Outside ZeroGPU ``spaces.GPU`` returns the function
    unchanged, and without the package there is nothing to apply: a CPU Space, a GPU server
    and ``python app.py`` run it as an ordinary call.
    """
    if spaces is None:
        return lambda fn: fn
    return spaces.GPU(duration=duration)


def zerogpu_seconds(c) -> int:
    """How long a run of the setting ``c`` may hold a ZeroGPU GPU: start-up, model onto the GPU, the run.

    Too short and ZeroGPU stops the run; too long and a visitor with less quota left than this
    is refused, and everyone's requests wait lower in ZeroGPU's queue (the quota itself is
    charged for the time used). So it grows with the checkpoint's size and the setting's
    FLOPs and kept bytes: ~12 s for ViT-B/16 at P=16, ~13 s at P=4, ~26 s for ViT-H/14 at P=4.
    """
    load = c.weights_bytes / ZEROGPU_LOAD_BYTES_PER_S
    run = c.gflops / GPU_GFLOPS + c.kept_bytes / ZEROGPU_KEPT_BYTES_PER_S
    return math.ceil(ZEROGPU_START_S + ZEROGPU_MARGIN * (load + run))


def gpu_seconds(name, patch_size, depth, *_, **__) -> int:
    """:func:`run_model`'s ZeroGPU duration: ``spaces.GPU`` calls it with the run's own arguments."""
    return zerogpu_seconds(cost(name, patch_size, depth))


@gpu(duration=gpu_seconds)
def run_model(name: str, patch_size: int, depth: int, image, top_k: int, head_fusion: str, discard_ratio: float):
    """The GPU work of one analysis: the model for the setting from the model cache, then the traced run.

    On a ZeroGPU Space ``spaces`` runs this in its GPU worker process: the (validated) arguments
    and the returned :class:`vit.Analysis` are pickled across, and the model is built on the CPU
    and moved to the GPU here, not at import as ZeroGPU's docs prefer, because the setting (family,
    P, depth) is only known per request and there is no GPU outside this function; the worker's
    own model cache keeps it while ZeroGPU keeps the worker. The checkpoint is in the disk cache
    already (:func:`fetch_weights`), so no quota is spent waiting on the network. Everywhere else
    this is an ordinary call in the request's thread. It runs inside the fair queue's turn, so
    one analysis at a time holds the model (and the GPU), as before.
    """
    from vit import api  # noqa: PLC0415 - imports torch
    from vit.config import DISPLAY_NAMES  # noqa: PLC0415

    loaded = model_cache().get(name, "imagenet", patch_size, depth)
    if loaded.status != loaded.status_detail:
        log.warning("%s: %s", DISPLAY_NAMES[name], loaded.status_detail)  # the whole reason, for the teacher's log
    return api.analyze(loaded, image, top_k=top_k, head_fusion=head_fusion, discard_ratio=discard_ratio)


_prefetch = None  # on a Space, the startup download of the default model's checkpoint (vit.prefetch.Prefetch)


def start_prefetch():
    """On a Space, from the start: the default model's checkpoint downloads in the background.

    A Space starts with an empty cache; this way the first student waits less (or not at all)
    for ViT-B/16's 330 MB, and every open page shows how far it is (:func:`startup_status`).
    """
    global _prefetch
    from vit import validate  # noqa: PLC0415 - torch-free
    from vit.prefetch import Prefetch  # noqa: PLC0415 - imports torch in its own thread only

    _prefetch = Prefetch(validate.model_name(DEFAULT_MODEL)).start()
    return _prefetch


def fetch_weights(name: str, report) -> None:
    """The family's checkpoint into the disk cache before :func:`run_model`, in this process.

    The startup download is waited for while it runs, so the first analysis on a Space neither
    fetches the file a second time nor gives up on it while it is merely slow. A failed download
    is remembered by :func:`vit.api.fetch_checkpoint`; the model then loads with random weights and
    the banner says UNTRAINED.

    Args:
        name: the family ("vit_b_16").
        report: ``report(bytes_done, bytes_total)`` while waiting or downloading.
    """
    from vit.api import fetch_checkpoint  # noqa: PLC0415 - imports torch
    from vit.weights import CHECKPOINTS  # noqa: PLC0415

    if name not in CHECKPOINTS:  # a family that ships its own weights: nothing to download
        return
    prefetch = _prefetch
    if prefetch is not None and prefetch.name == name:
        prefetch.wait(report)
    fetch_checkpoint(name, progress=report)


def startup_banner() -> str:
    """The banner of a page with no analysis yet on a Space: the startup download's progress, or its failure."""
    p = _prefetch
    if p is None or (p.finished and not p.error):
        return banner_html()
    from vit.config import DISPLAY_NAMES  # noqa: PLC0415

    display = DISPLAY_NAMES[p.name]
    if p.error:
        kind, head = "bad", "⚠ UNTRAINED"
        text = (f"the {display} weights could not be downloaded, so its analyses use random weights "
                "until a download succeeds (tried again a minute later).")
    else:
        size = f"{p.done / 1e6:,.0f} of {p.total / 1e6:,.0f} MB" if p.total else f"{p.done / 1e6:,.0f} MB"
        kind, head = "idle", f"Downloading the {display} weights: {size}"
        text = "Pick a photo: its analysis starts as soon as they are here."
    return f'<div class="banner {kind}" role="status"><b>{html.escape(head)}</b> · {html.escape(text)}</div>'


def startup_status(state):
    """Each tick of the banner's timer on a Space, until the startup download has finished.

    A page that shows an analysis keeps its own banner.
    """
    p = _prefetch
    return (gr.skip() if state is not None else startup_banner()), gr.Timer(active=p is not None and not p.finished)


# --------------------------------------------------------------------------- event handlers


@handler
def analyze(image, model, patch_size, depth, top_k=5, head_fusion="mean", discard_ratio=0.0,
            layer=None, head=1, opacity=DEFAULT_OPACITY, colormap=DEFAULT_COLORMAP,
            query=CENTRE, progress=gr.Progress(), request: gr.Request = None):
    """Run the ViT on one image and draw every view.

    Args:
        image: the photo (any JPEG/PNG/WebP/GIF/BMP/TIFF).
        model: "ViT-B/16", "ViT-B/32", "ViT-L/16", "ViT-L/32", "ViT-H/14" (or "vit_b_16" ...), or
            "ViT-Tiny shapes, trained here" ("vit_tiny_shapes": 64 px, drawn shapes, no download).
        patch_size: P in pixels, 4 to 64 (4 to 32 for the shapes model); the grid becomes
            round(224 / P) per side (round(64 / P) for the shapes model).
        depth: how many encoder blocks to run, 1 to L.
        top_k: how many predictions to list, 1 to 20.
        head_fusion: how rollout and the per-layer maps fuse the heads: "mean", "max" or "min".
        discard_ratio: fraction of each row's weakest attention links rollout drops, 0 to 0.99.
        layer: the layer to inspect, 1-based (a layer past ``depth`` shows the last one run).
        head: the head to inspect, 1-based.
        opacity: of the heatmaps over the image, 0 to 1.
        colormap: "cividis", "viridis", "magma" or "gray".

    Returns:
        The weights banner, the patch grid and its caption, the stage table, the rollout,
        per-head and per-layer maps and the query-patch view with their captions, the
        top-k predictions, the depth plot and the timings.
    """
    from vit import cost as costs  # noqa: PLC0415
    from vit import validate  # noqa: PLC0415
    from vit.config import PRESETS  # noqa: PLC0415

    t0 = time.perf_counter()
    source, filename = _image_source(image)
    name = validate.model_name(model)
    native = PRESETS[name]
    patch_size = validate.patch_size(patch_size, name)
    depth = validate.depth(depth, native.num_layers)
    top_k = min(validate.top_k(top_k), native.num_classes)  # the shapes model has 8 classes
    head_fusion = validate.head_fusion(head_fusion)
    discard_ratio = validate.discard_ratio(discard_ratio)
    layer = depth if layer is None else min(validate.layer(layer, native.num_layers), depth)
    head = validate.head(head, native.num_heads)
    opacity = validate.opacity(opacity)
    cmap = _colormap(colormap)
    query = _query(query)
    c = cost(name, patch_size, depth)
    costs.check_budget(c)  # before any download or model run

    pil = _load_image(source, filename)  # a bad file fails here, before any weights load
    display = c.display_name
    progress(0.02, desc="waiting for the model (one analysis at a time, the quickest first)")
    with fair_queue().turn(session_of(request), estimated_seconds(c)):
        progress(0.05, desc=f"loading {display}")
        fetch_weights(name, _progress_reporter(progress, display))
        progress(0.4, desc=f"running {display} on your image")
        t1 = time.perf_counter()
        a = run_model(name, patch_size, depth, pil, top_k, head_fusion, discard_ratio)  # on the GPU on ZeroGPU
        RUNS["model"] += 1
        t2 = time.perf_counter()
    progress(0.8, desc="drawing")
    grid_image, grid_caption = grid_view(a, query)
    drawn = views(a, query, layer, head, opacity, cmap)
    plot = _depth_plot(a)
    t3 = time.perf_counter()
    timing = (f"Time: model run {1e3 * (t2 - t1):.0f} ms (traced forward "
              f"{a.timings_ms.get('forward_traced', 0):.0f} ms) · drawing {1e3 * (t3 - t2):.0f} ms · "
              f"total {1e3 * (t3 - t0):.0f} ms")
    log.info("analysed %s P=%d L=%d: %s", display, patch_size, depth, timing)
    key = analysis_store().put(a)
    release_memory()
    return (banner_html(a), grid_image, grid_caption, stage_rows(a.stages, a.depth), *drawn,
            top_k_label(a, top_k), plot, timing, key)


ANALYSIS_OUTPUT_COUNT = 16  # banner ... timing, and the state


def _skip_all():
    return tuple(gr.skip() for _ in range(ANALYSIS_OUTPUT_COUNT))


def _auto(image, model, patch_size, depth, top_k, head_fusion, discard_ratio, layer, head, opacity, colormap,
          query, progress, request):
    """Analyse without a click when that is quick; otherwise leave it to the Analyze button."""
    if image is None:
        return _skip_all()
    from vit.errors import InputError  # noqa: PLC0415

    try:
        c = cost(model, patch_size, depth)
    except InputError:
        return analyze(image, model, patch_size, depth, top_k, head_fusion, discard_ratio, layer, head, opacity,
                       colormap, query, progress, request)  # says what is wrong
    seconds = estimated_seconds(c)
    if over_budget(c):
        gr.Info(f"{c.display_name} at P = {c.patch_size}, L = {c.depth} is too big for this server: "
                "choose a larger patch size or fewer layers.")
        return _skip_all()
    if seconds > SLOW_S:
        gr.Info(f"{c.display_name} at P = {c.patch_size}, L = {c.depth} takes ~{seconds:.0f} s here: "
                "press Analyze to run it.")
        return _skip_all()
    from vit.families import is_trained_here  # noqa: PLC0415
    from vit.weights import CHECKPOINTS, cached_path  # noqa: PLC0415

    if (not is_trained_here(c.name) and not cached_path(c.name).is_file()
            and CHECKPOINTS[c.name].file_size_mb > AUTO_DOWNLOAD_MB):
        gr.Info(f"{c.display_name} needs its {CHECKPOINTS[c.name].file_size_mb:,.0f} MB checkpoint first: "
                "press Analyze to download it.")
        return _skip_all()
    return analyze(image, model, patch_size, depth, top_k, head_fusion, discard_ratio, layer, head, opacity,
                   colormap, query, progress, request)


@handler
def auto_analyze(image, model, patch_size, depth, top_k=5, head_fusion="mean", discard_ratio=0.0,
                 layer=None, head=1, opacity=DEFAULT_OPACITY, colormap=DEFAULT_COLORMAP, query=CENTRE,
                 progress=gr.Progress(), request: gr.Request = None):
    """A new image or patch size: analyse at once if quick, keeping the layer shown."""
    return _auto(image, model, patch_size, depth, top_k, head_fusion, discard_ratio, layer, head, opacity,
                 colormap, query, progress, request)


@handler
def auto_analyze_last_layer(image, model, patch_size, depth, top_k=5, head_fusion="mean", discard_ratio=0.0,
                            layer=None, head=1, opacity=DEFAULT_OPACITY, colormap=DEFAULT_COLORMAP, query=CENTRE,
                            progress=gr.Progress(), request: gr.Request = None):
    """A new model or depth: analyse at once if quick, showing the last layer."""
    return _auto(image, model, patch_size, depth, top_k, head_fusion, discard_ratio, None, head, opacity,
                 colormap, query, progress, request)


def _redrawn(t0: float) -> str:
    return f"Time: redrawn in {1e3 * (time.perf_counter() - t0):.0f} ms, without running the model"


def _display_args(key, query, layer, head, opacity, colormap):
    """The kept analysis and the validated display settings shared by every display-only event."""
    from vit import validate  # noqa: PLC0415

    a = kept(key)
    layer, head = _layer_head(a, layer, head)
    return a, _query(query), layer, head, validate.opacity(opacity), _colormap(colormap)


@handler
def show(state, query, layer, head, opacity, colormap):
    """Another opacity or colormap: redraw every view from the kept analysis (no model run)."""
    if state is None:
        return tuple(gr.skip() for _ in range(9))
    t0 = time.perf_counter()
    return (*views(*_display_args(state, query, layer, head, opacity, colormap)), _redrawn(t0))


@handler
def show_layer(state, query, layer, head, opacity, colormap):
    """Another layer: redraw rollout, heads and the query view (no model run)."""
    if state is None:
        return tuple(gr.skip() for _ in range(7))
    t0 = time.perf_counter()
    a, query, layer, head, opacity, cmap = _display_args(state, query, layer, head, opacity, colormap)
    return (*rollout_view(a, layer, opacity, cmap), *heads_view(a, layer, opacity, cmap),
            *query_view(a, query, layer, head, opacity, cmap), _redrawn(t0))


@handler
def show_head(state, query, layer, head, opacity, colormap):
    """Another head: redraw the query view (no model run)."""
    if state is None:
        return tuple(gr.skip() for _ in range(3))
    t0 = time.perf_counter()
    return (*query_view(*_display_args(state, query, layer, head, opacity, colormap)), _redrawn(t0))


@handler
def rollout_options(state, query, layer, head, opacity, colormap, head_fusion, discard_ratio):
    """Another head fusion or discard ratio: recomputed from the kept attention, no model run."""
    if state is None:
        return tuple(gr.skip() for _ in range(10))
    state = kept(state)
    from vit import validate  # noqa: PLC0415

    t0 = time.perf_counter()
    a = state.with_options(validate.head_fusion(head_fusion), validate.discard_ratio(discard_ratio))
    layer, head = _layer_head(a, layer, head)
    drawn = views(a, _query(query), layer, head, validate.opacity(opacity), _colormap(colormap))
    key = analysis_store().put(a)
    from vit.server import trim_memory  # noqa: PLC0415

    trim_memory()  # recomputing every layer's maps at P=4 takes and frees ~0.5 GB
    return (key, *drawn, _redrawn(t0))


@handler
def select_patch(state, layer, head, opacity, colormap, evt: gr.SelectData):
    """A click on a picture of the model's view: that patch becomes the query."""
    if state is None:
        return tuple(gr.skip() for _ in range(4))
    state = kept(state)
    from vit import validate  # noqa: PLC0415

    query = clicked_fraction(evt.index, display_size(state))
    layer, head = _layer_head(state, layer, head)
    grid_image, _ = grid_view(state, query)
    query_image, query_caption = query_view(state, query, layer, head, validate.opacity(opacity),
                                            _colormap(colormap))
    return query, grid_image, query_image, query_caption


@handler
def predictions(state, top_k):
    """Another top-k: read from the kept probabilities."""
    if state is None:
        return gr.skip()
    state = kept(state)
    from vit import validate  # noqa: PLC0415

    return top_k_label(state, validate.top_k(top_k))


@handler
def model_settings(model, head):
    """A new model: its own patch size and depth, the sliders' ranges, and the cost meter."""
    from vit import validate  # noqa: PLC0415
    from vit.config import PRESETS, patch_size_range  # noqa: PLC0415
    from vit.errors import InputError  # noqa: PLC0415

    name = validate.model_name(model)
    native = PRESETS[name]
    L, h, P = native.num_layers, native.num_heads, native.patch_size
    try:
        head = min(validate.head(head, max(c.num_heads for c in PRESETS.values())), h)
    except InputError:  # not a head number at all: start from the first
        head = 1
    return (
        gr.update(value=P, maximum=patch_size_range(name)[1], info=f"checkpoint's own: {P}"),
        gr.update(maximum=L, value=L, info=f"1 to L = {L}"),
        gr.update(maximum=L, value=L),
        gr.update(maximum=h, value=head, info=f"1 to h = {h}"),
        cost_meter(model, P, L),
    )


@handler
def sync_sliders(state, layer, head):
    """After an analysis: the layer and head sliders span what was run."""
    if state is None:
        return gr.skip(), gr.skip()
    state = kept(state)
    from vit.errors import InputError  # noqa: PLC0415

    try:
        layer, head = _layer_head(state, layer, head)
    except InputError:  # the sliders were set for another model: last layer, first head
        layer, head = state.depth, 1
    return (gr.update(maximum=state.depth, value=layer, info=f"1 to {state.depth}"),
            gr.update(maximum=state.num_heads, value=head, info=f"1 to h = {state.num_heads}"))


# --------------------------------------------------------------------------- layout and wiring

CSS = """
.gradio-container { font-size: 18px; }
.gradio-container .prose { font-size: 18px; line-height: 1.45; }
#title h1 { font-size: 2.1em; margin: 0.1em 0 0 0; }
#title p { margin: 0.2em 0 0.2em 0; }
#banner .banner { font-size: 1.3em; padding: 0.5em 0.9em; border-radius: 10px; color: #fff; line-height: 1.35; }
#banner .banner b { color: #fff; }
#banner .banner code { background: rgba(255, 255, 255, 0.2); color: #fff; padding: 0 0.25em; border-radius: 4px; }
#banner .banner .detail { font-size: 0.7em; color: #fff !important; }
#banner .banner span { color: #fff !important; }  /* gradio's prose colours spans dark grey: 1.4:1 on red */
#banner .banner .offer { font-size: 0.85em; }
#banner .banner.ok { background: #1a7340; }
#banner .banner.warn { background: #8f5300; }
#banner .banner.bad { background: #b3261e; }
#banner .banner.idle { background: #3d4b5c; }
.caption, .caption p { font-size: 17px !important; line-height: 1.4; }
#cost, #cost p { font-size: 16px; line-height: 1.35; margin: 0.25em 0; }
#timing p { font-size: 15px; color: #555; }
#stages * { font-family: var(--font) !important; }
#stages [role="gridcell"], #stages [role="columnheader"] { font-size: 16px; }
#predictions * { font-family: var(--font) !important; }
@media (max-width: 640px) {
  #stages [role="gridcell"], #stages [role="columnheader"] { font-size: 14px; }
  #banner .banner { font-size: 1.1em; }
}
#analyze-btn { font-size: 1.3em; min-height: 2.6em; }
h2 { margin: 0.4em 0 0 0; }
"""

# Fonts the viewer's own machine has: nothing is fetched, so a classroom without internet looks the same.
FONTS = ("system-ui", "-apple-system", "Segoe UI", "Roboto", "DejaVu Sans", "Helvetica Neue", "Arial", "sans-serif")
MONO_FONTS = ("ui-monospace", "DejaVu Sans Mono", "Menlo", "Consolas", "monospace")


def theme():
    size = gr.themes.Size(xxs="11px", xs="13px", sm="15px", md="18px", lg="21px", xl="26px", xxl="32px")
    theme = gr.themes.Default(primary_hue="blue", secondary_hue="orange", text_size=size, font=FONTS,
                              font_mono=MONO_FONTS)
    # Gradio's pale greys vanish on a projector: labels and hints in dark grey.
    return theme.set(block_label_text_color="*neutral_700", block_title_text_color="*neutral_800",
                     block_info_text_color="*neutral_600")


def build_demo() -> gr.Blocks:
    """The app's layout and wiring; nothing runs and nothing downloads until a request comes."""
    from vit.config import DISPLAY_NAMES, MAX_PATCH_SIZE, MIN_PATCH_SIZE, PRESETS  # noqa: PLC0415 - torch-free
    from vit.render import COLORMAPS  # noqa: PLC0415 - numpy and PIL only
    from vit.validate import HEAD_FUSIONS, MAX_DISCARD_RATIO, MAX_TOP_K  # noqa: PLC0415

    native = PRESETS[next(k for k, v in DISPLAY_NAMES.items() if v == DEFAULT_MODEL)]
    pictures = dict(type="pil", format="png", interactive=False, show_label=False, buttons=["fullscreen"])

    # delete_cache: a classroom session makes ~1 MB of pictures per redraw; keep an hour of them.
    with gr.Blocks(title="ViT Anatomy", analytics_enabled=False, delete_cache=(1800, 3600)) as demo:
        state = gr.State(None, time_to_live=STATE_TTL_S)  # the key of the tab's vit.Analysis in the store
        query = gr.State(CENTRE)  # the query patch, as fractions (x, y) of the picture

        gr.Markdown(
            "# ViT Anatomy\n"
            "Follow a photo through a Vision Transformer (chapter 11.4): cut into patches, "
            "(B, C, H, W) → (B, N, D) → (B, N+1, D), through L encoder blocks of self-attention and MLP, "
            "to the class token h_cls and the logits (B, K).",
            elem_id="title",
        )
        banner = gr.HTML(banner_html(), elem_id="banner")
        ticker = gr.Timer(1.0) if on_space() else None  # the startup download's progress in the banner
        offer = gr.Button(f"Try {TRAINED_MODEL}: no download needed", visible=False, size="sm",
                          elem_id="offer-trained")

        with gr.Row(equal_height=False):
            with gr.Column(scale=4, min_width=300):
                image = gr.Image(type="pil", sources=["upload", "webcam", "clipboard"], label="Your image",
                                 height=280, elem_id="input-image")
                analyze_btn = gr.Button("Analyze", variant="primary", size="lg", elem_id="analyze-btn")
            with gr.Column(scale=4, min_width=300):
                model = gr.Dropdown(list(DISPLAY_NAMES.values()), value=DEFAULT_MODEL, label="Model",
                                    info="torchvision's five ViT checkpoints, and one trained here on drawn "
                                         "shapes (no download)", elem_id="model")
                patch_size = gr.Slider(MIN_PATCH_SIZE, MAX_PATCH_SIZE, value=native.patch_size, step=1,
                                       label="Patch size P (pixels)",
                                       info=f"checkpoint's own: {native.patch_size}", elem_id="patch-size")
                depth = gr.Slider(1, native.num_layers, value=native.num_layers, step=1,
                                  label="Depth: encoder blocks to run", info=f"1 to L = {native.num_layers}",
                                  elem_id="depth")
                cost_md = gr.Markdown(cost_meter(DEFAULT_MODEL, native.patch_size, native.num_layers),
                                      elem_id="cost")
            with gr.Column(scale=4, min_width=300):
                label = gr.Label(num_top_classes=MAX_TOP_K, label="Top-k predictions: softmax(h_cls W + b)",
                                 elem_id="predictions")
                top_k = gr.Slider(1, MAX_TOP_K, value=5, step=1, label="Top-k", elem_id="top-k")
                timing = gr.Markdown("", elem_id="timing")

        gr.Examples(examples=[[str(p)] for p in EXAMPLES], inputs=[image], label="Example photos and drawn shapes: click one",
                    examples_per_page=max(1, len(EXAMPLES)), api_visibility="private")

        gr.Markdown("## 1 · Patches and shapes")
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=300):
                grid_img = gr.Image(label="Patch grid: click a patch", elem_id="patch-grid", **pictures)
                grid_cap = gr.Markdown(elem_classes="caption", elem_id="grid-caption")
            with gr.Column(scale=2, min_width=300):
                stages = gr.Dataframe(headers=STAGE_HEADERS, label="Shapes at every stage (B = 1 image)",
                                      interactive=False, wrap=True, max_height=1000, elem_id="stages",
                                      # pixels, not %: on a phone the table scrolls sideways instead of squeezing
                                      column_widths=["150px", "215px", "135px", "165px", "130px"])

        gr.Markdown("## 2 · Attention: these controls redraw the pictures without running the model")
        with gr.Row(equal_height=False):
            with gr.Column(min_width=280):
                layer = gr.Slider(1, native.num_layers, value=native.num_layers, step=1, label="Layer",
                                  info=f"1 to {native.num_layers}", elem_id="layer")
                head = gr.Slider(1, native.num_heads, value=1, step=1, label="Head",
                                 info=f"1 to h = {native.num_heads}", elem_id="head")
            with gr.Column(min_width=280):
                opacity = gr.Slider(0.0, 1.0, value=DEFAULT_OPACITY, step=0.05, label="Heatmap opacity",
                                    elem_id="opacity")
                colormap = gr.Dropdown(list(COLORMAPS), value=DEFAULT_COLORMAP, label="Colormap",
                                       info="cividis reads the same to colour-blind eyes", elem_id="colormap")
            with gr.Column(min_width=280):
                head_fusion = gr.Radio(list(HEAD_FUSIONS), value="mean", label="Head fusion",
                                       info="how rollout and the per-layer maps merge the h heads",
                                       elem_id="head-fusion")
                discard_ratio = gr.Slider(0.0, MAX_DISCARD_RATIO, value=0.0, step=0.01, label="Discard ratio",
                                          info="rollout drops each row's weakest links", elem_id="discard-ratio")
        with gr.Row(equal_height=False):
            with gr.Column(min_width=300):
                rollout_img = gr.Image(label="Attention rollout", elem_id="rollout", **pictures)
                rollout_cap = gr.Markdown(elem_classes="caption", elem_id="rollout-caption")
            with gr.Column(min_width=300):
                query_img = gr.Image(label="What the clicked patch attends to", elem_id="query", **pictures)
                query_cap = gr.Markdown(elem_classes="caption", elem_id="query-caption")
            with gr.Column(min_width=300):
                heads_img = gr.Image(label="Class token, per head", elem_id="heads", **pictures)
                heads_cap = gr.Markdown(elem_classes="caption", elem_id="heads-caption")

        gr.Markdown("## 3 · Across depth")
        with gr.Row(equal_height=False):
            with gr.Column(min_width=300):
                layers_img = gr.Image(label="Class token, per layer", elem_id="layers", **pictures)
                layers_cap = gr.Markdown(elem_classes="caption", elem_id="layers-caption")
            with gr.Column(min_width=300):
                depth_img = gr.Image(label="How the prediction forms", elem_id="depth-plot", **pictures)
                gr.Markdown("**Early exit:** the final norm and the head applied to the class token after "
                            "each layer, h_cls = Z_l[:, 0, :]: at which layer does the final answer appear?",
                            elem_classes="caption")

        # ------------------------------------------------------------------ wiring
        view_outputs = [rollout_img, rollout_cap, heads_img, heads_cap, layers_img, layers_cap, query_img, query_cap]
        analysis_inputs = [image, model, patch_size, depth, top_k, head_fusion, discard_ratio, layer, head, opacity,
                           colormap, query]
        analysis_outputs = [banner, grid_img, grid_cap, stages, *view_outputs, label, depth_img, timing, state]
        assert len(analysis_outputs) == ANALYSIS_OUTPUT_COUNT  # noqa: S101 - internal invariant
        # Model runs wait in vit.server.FairQueue (one at a time, one per tab, the quickest first), so
        # gradio lets up to MODEL_WAITERS of them in at once rather than queueing them first come, first served.
        run = dict(inputs=analysis_inputs, outputs=analysis_outputs, preprocess=False, concurrency_id="model",
                   concurrency_limit=MODEL_WAITERS)
        display = dict(preprocess=False, trigger_mode="always_last", concurrency_limit=4, show_progress="hidden")

        def sync(after: str) -> dict:  # then the layer and head sliders span what was run
            return dict(fn=sync_sliders, inputs=[state, layer, head], outputs=[layer, head],
                        api_name=f"sync_sliders_after_{after}", api_visibility="private", queue=False)

        def auto(after: str, fn=auto_analyze) -> dict:  # analyses that start without the button
            return dict(fn=fn, api_name=f"analyze_{after}", api_visibility="private", trigger_mode="always_last", **run)

        analyze_btn.click(analyze, api_name="analyze", **run).success(**sync("analyze"))
        image.change(**auto("new_image")).success(**sync("new_image"))
        patch_size.release(**auto("new_patch_size")).success(**sync("new_patch_size"))
        depth.release(**auto("new_depth", auto_analyze_last_layer)).success(**sync("new_depth"))
        # .change, not .input: a dropdown's input event fires twice per pick in gradio 6 (and nothing else sets it)
        model.change(model_settings, [model, head], [patch_size, depth, layer, head, cost_md],
                     api_name="model_settings", preprocess=False, queue=False).success(
            **auto("new_model", auto_analyze_last_layer)).success(**sync("new_model"))
        meter = dict(fn=cost_meter, inputs=[model, patch_size, depth], outputs=cost_md, preprocess=False, queue=False,
                     show_progress="hidden")
        patch_size.change(api_name="cost_patch_size", **meter)
        banner.change(offer_button, banner, offer, api_name="offer_button", api_visibility="private", queue=False,
                      show_progress="hidden")
        offer.click(use_trained_model, None, model, api_name="use_trained_model", queue=False)
        depth.change(api_name="cost_depth", **meter)

        show_inputs = [state, query, layer, head, opacity, colormap]
        layer.input(show_layer, show_inputs, [rollout_img, rollout_cap, heads_img, heads_cap, query_img, query_cap,
                                              timing], api_name="show_layer", **display)
        head.input(show_head, show_inputs, [query_img, query_cap, timing], api_name="show_head", **display)
        opacity.input(show, show_inputs, [*view_outputs, timing], api_name="show_opacity", **display)
        colormap.change(show, show_inputs, [*view_outputs, timing], api_name="show_colormap", **display)
        rollout = dict(fn=rollout_options, inputs=[*show_inputs, head_fusion, discard_ratio],
                       outputs=[state, *view_outputs, timing], **display)
        head_fusion.change(api_name="rollout_head_fusion", **rollout)
        discard_ratio.input(api_name="rollout_discard_ratio", **rollout)
        top_k.input(predictions, [state, top_k], label, api_name="top_k", **display)
        if ticker is not None:
            ticker.tick(startup_status, [state], [banner, ticker], api_name="startup_status",
                        api_visibility="private", queue=False, show_progress="hidden")
        for name, picture in (("grid", grid_img), ("rollout", rollout_img), ("query", query_img)):
            picture.select(select_patch, [state, layer, head, opacity, colormap],
                           [query, grid_img, query_img, query_cap], api_name=f"select_patch_on_{name}",
                           api_visibility="private", **display)
    return demo


class PrivateEventGuard:
    """ASGI middleware: the app's internal events answer only the page, never a by-name HTTP call.

    gradio 6.31 routes ``/gradio_api/call/<name>`` (and ``/run/``, ``/api/``) to every event by
    its name, ``api_visibility="private"`` ones too (that setting only hides them from the docs
    and from gradio_client). The page itself calls events by number through the queue, so
    refusing the by-name routes of private events costs it nothing. Every event that takes an
    image checks it as well (:func:`_image_source`); this is the second lock.
    """

    _BY_NAME = re.compile(r"/gradio_api/(?:call/v2|call|run|api)/([^/]+)")

    def __init__(self, app, private: frozenset[str]):
        self.app, self.private = app, private

    async def __call__(self, scope, receive, send):
        match = self._BY_NAME.search(scope.get("path", "")) if scope["type"] == "http" else None
        if match and match.group(1) in self.private:
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": b'{"detail":"Not Found"}'})
            return
        await self.app(scope, receive, send)


def private_events(demo: gr.Blocks) -> frozenset[str]:
    """The names of the events that are not part of the app's API."""
    return frozenset(fn.api_name for fn in demo.fns.values() if fn.api_visibility == "private")


def launch(demo: gr.Blocks, host: str = "127.0.0.1", port: int = 7860, share: bool = False, **kwargs):
    """Start the server with the app's limits: bounded queue, 20 MB uploads, only assets/ served."""
    from starlette.middleware import Middleware  # noqa: PLC0415 - gradio's own dependency

    demo.queue(max_size=64, default_concurrency_limit=1)
    guard = Middleware(PrivateEventGuard, private=private_events(demo))
    return demo.launch(
        server_name=host, server_port=port, share=share, max_file_size="20mb", allowed_paths=[str(ASSETS)],
        enable_monitoring=False, ssr_mode=False, theme=theme(), css=CSS, footer_links=["api"],
        app_kwargs={"middleware": [guard]}, **kwargs,
    )


def _prewarm() -> None:
    """In the background: import torch and the model code, so the first analysis does not wait for
    it, and remove partial downloads left by processes that were killed."""
    try:
        import vit.api  # noqa: F401, PLC0415
        import vit.cache  # noqa: F401, PLC0415
        import vit.render  # noqa: F401, PLC0415
        from vit.weights import remove_stale_partials  # noqa: PLC0415

        for path in remove_stale_partials():
            log.info("removed the partial download %s, left by a process that is gone", path.name)
    except Exception:  # noqa: BLE001 - the first request will report it
        log.exception("pre-loading vit failed")


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _remove_leftovers() -> None:
    """Picture folders that killed servers left behind (partial downloads: :func:`_prewarm`)."""
    import tempfile  # noqa: PLC0415

    from vit.server import remove_stale_folders  # noqa: PLC0415

    for path in remove_stale_folders(tempfile.gettempdir()):
        log.info("removed %s, left by a server that is gone", path.name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="ViT Anatomy: look inside a Vision Transformer in the browser.")
    # A Space starts `python app.py` and expects 0.0.0.0:7860; gradio's own variables are honoured as gradio does.
    host = os.environ.get("GRADIO_SERVER_NAME") or ("0.0.0.0" if on_space() else "127.0.0.1")  # noqa: S104
    parser.add_argument("--host", default=host,
                        help="address to listen on (default 127.0.0.1, or $GRADIO_SERVER_NAME, or 0.0.0.0 on a "
                             "Space; 0.0.0.0 lets others on the network connect)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT") or 7860),
                        help="port (default 7860, or $GRADIO_SERVER_PORT)")
    parser.add_argument("--share", action="store_true", help="also open a temporary public gradio.live link")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # SIGTERM (systemd, docker stop, kill) ends the server as Ctrl-C does: gradio closes and
    # deletes its cache, and atexit removes the picture folder.
    signal.signal(signal.SIGTERM, _interrupt)
    _remove_leftovers()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # gradio's own start-up requests
    if on_space():  # a Space starts with an empty cache: fetch the default model's weights from the start
        start_prefetch()
    demo = build_demo()
    launch(demo, args.host, args.port, args.share, prevent_thread_lock=True)
    threading.Thread(target=_prewarm, name="prewarm", daemon=True).start()
    demo.block_thread()
    _delete_gradio_files(demo)


def _delete_gradio_files(demo: gr.Blocks) -> None:
    """The pictures gradio cached for this server's users, removed at exit.

    gradio does this in its server's shutdown, which it does not wait for when a client still holds
    a connection (``close()`` gives up after 5 s); the copies of the examples stay for the next start.
    """
    try:
        from gradio.route_utils import delete_files_created_by_app  # noqa: PLC0415

        delete_files_created_by_app(demo, age=None)
    except Exception:  # noqa: BLE001 - gradio's internals moved: its own delete_cache still bounds the cache
        log.exception("could not remove gradio's cached files")


if __name__ == "__main__":
    main()
