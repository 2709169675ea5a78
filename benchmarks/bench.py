"""Issues 5, 13 and 23: the explanation costs little more than the forward pass, at every patch size,
and every display-only change (head fusion and discard ratio included) redraws without the model.

    python benchmarks/bench.py                       # everything (several minutes on 2 cores)
    python benchmarks/bench.py --configs b16-p16,b32 --repeat 9 --no-app
    python benchmarks/bench.py --tiny --json /tmp/r.json   # the smoke test's configuration

One process, interleaved repetitions (bare, analyze, app, display, fusion, discard,
peer, bare, analyze, ...), medians, and for every repetition the ratio to the bare forward
of that same repetition (median of those ratios): shared machines drift, and a
ratio taken within one repetition cancels most of the drift.

* ``bare``: our model with the fused attention kernel, no hooks: the floor;
* ``analyze``: ``vit.analyze`` (tracing, rollout, early-exit predictions);
* ``app``: what the app's /analyze handler does minus the network: the analysis,
  every picture and table the app shows, drawn by ``vit.views`` (as the app and
  the CLI draw them), and each picture encoded as the app serves it (JPEG on the photo, PNG for plots);
* ``page``: the page's response to a new analysis: the analysis, the depth plot, stage
  table and top-k, and the pictures of the tab on screen (the first), encoded;
* ``display``: a display-only change on a kept analysis (another layer, head,
  opacity and clicked patch): the views that change are redrawn and encoded;
* ``fusion``: another head fusion on a kept analysis (none of its variants remembered):
  the rollout and the per-layer tiles redrawn and encoded;
* ``discard``: another discard ratio, likewise: the rollout redrawn and encoded;
* ``peer``: what a user would otherwise write: torchvision's ViT with every
  attention map kept (``need_weights=True``) and jacobgil-style rollout with
  full (T, T) matrix products.

Peak RSS is measured in a fresh subprocess per (config, bare/analyze/peer), so
one measurement's allocations do not hide in another's peak. Unless ``--no-app`` or
``--no-burst``, the served app's settled RSS after 20 mixed analyses (5 tabs at once, each
P = 4, 8, 16, 16) is measured by ``memory_burst.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import hashlib
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from served import PageClient, free_port, offline_env, start_app, stop_app, wait_http_200

import vit  # after the path is set
from vit.config import PRESETS
from vit.views import attention as attention_views
from vit.views import base, patches
from vit.views import registry as pictures

IMAGE = ROOT / "assets" / "cat.jpg"
METHODS = ("bare", "analyze", "app", "page", "display", "fusion", "discard", "peer", "bare_bf16", "analyze_bf16",
           "page_bf16")  # *_bf16: the model in bfloat16 (load_model(..., dtype="bfloat16")), against float32's bare
DISPLAY_METHODS = ("display", "fusion", "discard")  # display-only changes: no model call
CONFIGS: dict[str, tuple[str, int]] = {  # name -> (family, patch size)
    "b16-p16": ("vit_b_16", 16),
    "b16-p8": ("vit_b_16", 8),
    "b16-p4": ("vit_b_16", 4),
    "b32": ("vit_b_32", 32),
}
SLOW_CONFIGS = {"b16-p4": 3}  # default repetitions where one forward takes ~10 s on 2 cores
TARGETS = {  # what issue 23 asks, checked at the end: (config, method, most x bare)
    "analyze_x_bare_p32": ("b32", "analyze", 1.3),
    "analyze_x_bare_p16": ("b16-p16", "analyze", 1.3),
    "analyze_x_bare_p8": ("b16-p8", "analyze", 1.3),
    "analyze_x_bare_p4": ("b16-p4", "analyze", 1.3),
    "page_x_bare_p16": ("b16-p16", "page", 1.3),  # the app's response: analysis + the tab on screen
    # issue 39: bfloat16 against torch's float32 forward of the same model
    "analyze_bf16_x_bare_p16": ("b16-p16", "analyze_bf16", 0.5),
    "analyze_bf16_x_bare_p4": ("b16-p4", "analyze_bf16", 0.8),
    "page_bf16_x_bare_p16": ("b16-p16", "page_bf16", 0.7),
}
# Issue 23: every display-only change (layer/head/opacity/click, head fusion, discard ratio), pictures encoded, in ms.
DISPLAY_TARGETS_MS = {"b16-p16": 30.0, "b16-p4": 300.0}
KEPT_TARGET_GB = 0.6  # what one tab's analysis keeps at P = 4 (Analysis.nbytes, its rollout drawn)
HTTP_TARGETS = {"redraw": 0.3, "analyze": 2.0}  # /redraw and /analyze through HTTP at P = 16, x the bare forward
HTTP_ROUNDS = 7
BURST_CLIENTS, BURST_SEQUENCE = 5, (4, 8, 16, 16)  # 20 mixed analyses for the settled RSS (memory_burst.py)
RSS_TARGET_GB = 2.0  # vit.analyze at patch 4 (the peer was measured at 7.0 GB)
STARTUP_TARGET_S = 10.0
DISPLAY = pictures.Display()  # the app's defaults (defined once, in vit.views.registry)
QUERY, OPACITY, CMAP, TOP_K = DISPLAY.query, DISPLAY.opacity, DISPLAY.cmap, 5


# --------------------------------------------------------------------------- where we run


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def device_name() -> str:
    if torch.cuda.is_available():
        return f"cuda: {torch.cuda.get_device_name(0)}"
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"cpu: {model}, {cores} cores"


def sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed(fn) -> tuple[float, object]:
    """(milliseconds, result) of ``fn()``, with the GPU drained on both sides."""
    sync()
    t0 = time.perf_counter()
    out = fn()
    sync()
    return (time.perf_counter() - t0) * 1e3, out


# --------------------------------------------------------------------------- the app's pictures


def page_views(a: vit.Analysis) -> list:
    """What the page shows for a new analysis with its first tab on screen (``vit.ui.events.page_analyze``
    then ``page_redraw``): the depth plot, stage table and top-k, then the tab's pictures (patch grid
    and query view), drawn by ``vit.views.registry.draw`` as the page draws them. (name, drawn) pairs."""
    from vit.ui import pictures as page  # noqa: PLC0415 - the page's own stage table, torch-free

    first = [("depth-plot", pictures.draw(a, "depth-plot")), ("stage-table", page.stage_table(a)),
             ("predictions", patches.top_k(a, TOP_K))]
    return first + [(name, pictures.draw(a, name, DISPLAY)) for name in pictures.on_tab("patches")]


def render_views(a: vit.Analysis) -> list:
    """Every picture and table the app's ``/analyze`` returns for a new analysis, drawn by ``vit.views.registry``.

    The app, the CLI and this benchmark draw through the same registry, so what is
    timed is what a visitor sees: patch grid, stage table, rollout, per-head and
    per-layer sheets, query-patch view, top-k and the early-exit plot. (name, drawn) pairs.
    """
    drawn = [(name, pictures.draw(a, name, DISPLAY)) for name in (*pictures.API_PICTURES, "depth-plot")]
    return drawn + [("stage-table", patches.stage_rows(a)), ("predictions", patches.top_k(a, TOP_K))]


def fusion_change(a: vit.Analysis, rep: int) -> list:
    """Another head fusion (max, then min): the app redraws the rollout and the per-layer tiles.

    ``a`` should be ``Analysis.untried()``: the new fusion's rollout rows are computed, nothing recalled.
    """
    b = a.with_options(("max", "min")[rep % 2], a.discard_ratio)
    return [("rollout-view", attention_views.rollout_view(b, b.depth, OPACITY, CMAP)),
            ("layer-views", attention_views.layers_view(b, OPACITY, CMAP))]


def discard_change(a: vit.Analysis, rep: int) -> list:
    """Another discard ratio (0.5, then 0.9), likewise: the app redraws the rollout (``a`` should be
    ``Analysis.untried()``)."""
    b = a.with_options(a.head_fusion, (0.5, 0.9)[rep % 2])
    return [("rollout-view", attention_views.rollout_view(b, b.depth, OPACITY, CMAP))]


def display_change(a: vit.Analysis, rep: int) -> list:
    """Another layer, head, opacity and clicked patch: redraw rollout, per-head and query views (the page
    redraws only the tab on screen: the Attention tab's two for a layer, the query view for a click; this is both).

    The layer alternates between the last two (near the worst case: rollout
    through every layer), so every repetition is a real change.
    """
    layer = max(1, a.depth - rep % 2)
    head = 1 + rep % a.num_heads
    opacity = (0.5, 0.7)[rep % 2]
    query = ((0.3, 0.6), (0.7, 0.2))[rep % 2]
    return [
        ("rollout-view", attention_views.rollout_view(a, layer, opacity, CMAP)),
        ("head-views", attention_views.heads_view(a, layer, opacity, CMAP)),
        ("query-view", patches.query_view(a, query, layer, head, opacity, CMAP)),
    ]


ENCODING = ("each picture in its registry's encoding (vit.views.registry.encode, as the app serves it: JPEG quality "
            f"{pictures.JPEG_QUALITY} for pictures on the photo, PNG zlib level 1 for plots)")


def encode_pictures(outputs: list) -> int:
    """Encode every view's picture as the served app does (:data:`ENCODING`); pictures encoded."""
    count = 0
    for name, out in outputs:
        if not isinstance(out, base.View):
            continue
        count += 1
        buf = io.BytesIO()
        pictures.encode(out.image, pictures.PICTURES[name].encoding, buf)
        hashlib.sha256(buf.getbuffer()).hexdigest()  # gradio hashes what it serves
    return count


# --------------------------------------------------------------------------- the peer


def peer_model(family: str, patch_size: int, depth: int, grid: int) -> torch.nn.Module:
    """torchvision's ViT at this patch size and depth (vit_b_16()/vit_b_32() when native), random init."""
    from torchvision.models.vision_transformer import VisionTransformer  # noqa: PLC0415

    cfg = PRESETS[family]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = VisionTransformer(image_size=grid * patch_size, patch_size=patch_size, num_layers=depth,
                                  num_heads=cfg.num_heads, hidden_dim=cfg.embed_dim, mlp_dim=cfg.mlp_dim)
    return model.eval().to(device())


def keep_all_attention(model: torch.nn.Module) -> list[torch.Tensor]:
    """Make every encoder block's attention return and store its per-head weights, (B, h, T, T) each."""
    kept: list[torch.Tensor] = []
    for block in model.encoder.layers:
        mha = block.self_attention
        original = type(mha).forward

        def forward(query, key, value, *args, _mha=mha, _original=original, **kwargs):
            kwargs.update(need_weights=True, average_attn_weights=False)
            out, weights = _original(_mha, query, key, value, *args, **kwargs)
            kept.append(weights)
            return out, weights

        mha.forward = forward  # the instance attribute wins over the class's method
    return kept


def peer_rollout(attentions: list[torch.Tensor]) -> torch.Tensor:
    """jacobgil/vit-explain's rollout (row normalisation fixed): full (T, T) products. -> (N,)"""
    T = attentions[0].shape[-1]
    eye = torch.eye(T, device=attentions[0].device)
    result = eye.clone()
    for attention in attentions:
        fused = attention.mean(dim=1)  # (B, h, T, T) -> (B, T, T)
        a = fused + eye
        a = a / a.sum(dim=-1, keepdim=True)
        result = a @ result  # O(T^3) per layer
    return result[0, 0, 1:]


def run_peer(model, kept: list, x: torch.Tensor) -> torch.Tensor:
    kept.clear()
    with torch.inference_mode():
        logits = model(x)
        mask = peer_rollout(kept)
    kept.clear()
    return logits, mask


# --------------------------------------------------------------------------- one configuration


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def bench_config(name: str, family: str, patch_size: int, depth: int | None, repeat: int) -> dict:
    """Interleaved timings of every method for one configuration, with their medians and ratios to bare."""
    raw, parts, cfg, kept = interleaved(name, family, patch_size, depth, repeat)
    gc.collect()  # the models and the kept analysis are gone with interleaved()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    ratios = {m: [v / b for v, b in zip(raw[m], raw["bare"])] for m in METHODS if m != "bare"}
    return {
        "model": family,
        "patch_size": patch_size,
        "depth": cfg.num_layers,
        "grid": cfg.grid_size,
        "tokens": cfg.num_tokens,
        "input_size": cfg.image_size,
        "repeat": repeat,
        "raw_ms": raw,
        "median_ms": {m: median(v) for m, v in raw.items()},
        "ratio_to_bare": ratios,
        "median_ratio": {m: median(v) for m, v in ratios.items()},
        "parts_raw_ms": parts,
        "parts_median_ms": {k: median(v) for k, v in parts.items() if v},
        "kept_gb": kept / 1e9,  # what the analysis keeps (a tab's memory), its rollout drawn
    }


def interleaved(name: str, family: str, patch_size: int, depth: int | None, repeat: int):
    """(raw ms per method, parts ms, config): every method once per repetition, in turn."""
    from vit.images import load_image  # noqa: PLC0415

    model = vit.load_model(family, weights="random", patch_size=patch_size, depth=depth, device=device())
    narrow = vit.load_model(family, weights="random", patch_size=patch_size, depth=depth, device=device(),
                            dtype="bfloat16")
    cfg = model.config
    image = load_image(IMAGE)
    x = model.preprocess(image).to(device())  # (1, C, H, W)
    peer = peer_model(family, patch_size, cfg.num_layers, cfg.grid_size)
    kept = keep_all_attention(peer)
    cached = vit.analyze(model, image)  # what the display-only changes redraw from

    def bare():
        with torch.inference_mode():
            return model(x)

    parts: dict[str, list[float]] = {k: [] for k in
                                     ("preprocess", "forward_traced", "explain",
                                      *(f"{m}_{p}" for m in ("app", "page") for p in ("analyze", "render", "encode")),
                                      *(f"{m}_{p}" for m in DISPLAY_METHODS for p in ("render", "encode")))}

    def bare_bf16():
        with torch.inference_mode():
            return narrow(x)

    def response(draw, model=model):
        def run():
            t0 = time.perf_counter()
            a = vit.analyze(model, image)
            t1 = time.perf_counter()
            outputs = draw(a)
            t2 = time.perf_counter()
            encode_pictures(outputs)
            t3 = time.perf_counter()
            return a, (t1 - t0, t2 - t1, t3 - t2)

        return run

    rep_counter = [0]
    fresh = [cached.untried()]  # renewed before each fusion or discard change, outside the timing

    def redraw(change, a):
        def run():
            t0 = time.perf_counter()
            outputs = change(a(), rep_counter[0])
            t1 = time.perf_counter()
            encode_pictures(outputs)
            return t1 - t0, time.perf_counter() - t1

        return run

    calls = {
        "bare": bare,
        "analyze": lambda: vit.analyze(model, image),
        "app": response(render_views),
        "page": response(page_views),
        "display": redraw(display_change, lambda: cached),
        "fusion": redraw(fusion_change, lambda: fresh[0]),
        "discard": redraw(discard_change, lambda: fresh[0]),
        "peer": lambda: run_peer(peer, kept, x),
        "bare_bf16": bare_bf16,
        "analyze_bf16": lambda: vit.analyze(narrow, image),
        "page_bf16": response(page_views, narrow),
    }
    for fn in calls.values():  # warm-up: kernels, allocator, matplotlib, fonts
        fresh[0] = cached.untried()
        fn()
    gc.collect()

    raw: dict[str, list[float]] = {m: [] for m in METHODS}
    for rep in range(repeat):
        rep_counter[0] = rep
        for method in METHODS:
            fresh[0] = cached.untried()
            ms, out = timed(calls[method])
            raw[method].append(ms)
            if method == "analyze":
                for k in ("preprocess", "forward_traced", "explain"):
                    parts[k].append(out.timings_ms[k])
            elif method in ("app", "page"):  # (page_bf16's parts are not kept: its total is what is compared)
                for k, s in zip((f"{method}_analyze", f"{method}_render", f"{method}_encode"), out[1]):
                    parts[k].append(s * 1e3)
            elif method in DISPLAY_METHODS:
                parts[f"{method}_render"].append(out[0] * 1e3)
                parts[f"{method}_encode"].append(out[1] * 1e3)
            del out
            gc.collect()
        print(f"  {name} rep {rep + 1}/{repeat}: " + ", ".join(f"{m} {raw[m][-1]:.0f}" for m in METHODS) + " ms",
              flush=True)

    cached.rollout()
    return raw, parts, cfg, cached.nbytes


# --------------------------------------------------------------------------- peak memory, one process each


def peak_rss_bytes() -> int:
    """This process's peak resident set size.

    ``VmHWM`` where Linux has it: ``ru_maxrss`` carries the parent's peak over
    fork and exec (a child of this 1 GB benchmark would report at least 1 GB),
    while ``VmHWM`` belongs to the process's own address space.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, kB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def rss_child(mode: str, config: str, depth: int | None) -> None:
    """Run one forward of ``mode`` and print this process's peak RSS as JSON (the --_rss entry point)."""
    from vit.images import load_image  # noqa: PLC0415

    family, patch_size = CONFIGS[config]
    image = load_image(IMAGE)
    if mode == "peer":  # our model is never built in this process
        from vit.config import grid_for_patch_size  # noqa: PLC0415
        from vit.model.preprocess import preprocess_for  # noqa: PLC0415

        native = PRESETS[family]
        grid = grid_for_patch_size(native.image_size, patch_size)
        peer = peer_model(family, patch_size, depth or native.num_layers, grid)
        kept = keep_all_attention(peer)
        x = preprocess_for(family, grid * patch_size)(image).to(device())
    else:
        model = vit.load_model(family, weights="random", patch_size=patch_size, depth=depth, device=device())
    before = peak_rss_bytes()
    if mode == "bare":
        x = model.preprocess(image).to(device())
        with torch.inference_mode():
            out = model(x)
    elif mode == "analyze":
        out = vit.analyze(model, image)
    else:
        out = run_peer(peer, kept, x)
    sync()
    peak = peak_rss_bytes()
    gpu = torch.cuda.max_memory_allocated() / 1e9 if torch.cuda.is_available() else None
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux
    print(json.dumps({"mode": mode, "config": config, "rss_gb": peak / 1e9, "rss_before_gb": before / 1e9,
                      "ru_maxrss_gb": maxrss / 1e9, "cuda_peak_gb": gpu}))
    del out


def measure_rss(config: str, depth: int | None) -> dict:
    """Peak RSS of bare/analyze/peer for one config, each in a fresh process."""
    out: dict = {}
    for mode in ("bare", "analyze", "peer"):
        cmd = [sys.executable, str(Path(__file__).resolve()), "--_rss", mode, config]
        if depth is not None:
            cmd += ["--depth", str(depth)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            print(f"  peak RSS of {mode} at {config} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
            out[mode] = None
            continue
        record = json.loads(proc.stdout.strip().splitlines()[-1])
        out[mode] = record
        print(f"  {config} peak RSS {mode}: {record['rss_gb']:.2f} GB", flush=True)
    return out


# --------------------------------------------------------------------------- the running app


def measure_startup(tmp: Path, times: int = 3) -> dict:
    """``python app.py`` to the first HTTP 200 of its page, ``times`` times."""
    raw = []
    for i in range(times):
        port = free_port()
        proc = start_app(port, offline_env(tmp), tmp / f"startup{i}.log")
        t0 = time.perf_counter()
        try:
            wait_http_200(f"http://127.0.0.1:{port}/", proc)
            raw.append(time.perf_counter() - t0)
        finally:
            stop_app(proc)
        print(f"  startup {i + 1}/{times}: {raw[-1]:.1f} s", flush=True)
    return {"raw_s": raw, "median_s": median(raw)}


def measure_concurrency(tmp: Path, users: int = 8, per_user: int = 5) -> dict:
    """``users`` gradio_client users doing ``per_user`` analyses each, against one user doing the same."""
    from gradio_client import Client, handle_file  # noqa: PLC0415

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    proc = start_app(port, offline_env(tmp), tmp / "concurrency.log")
    params = dict(model="ViT-B/16", patch_size=16, depth=12, api_name="/analyze")

    def one_user(results: list, failures: list, barrier: threading.Barrier | None):
        try:
            client = Client(url, verbose=False)
        except Exception as exc:  # noqa: BLE001
            failures.append(repr(exc))
            return
        if barrier is not None:
            barrier.wait()
        for _ in range(per_user):
            t0 = time.perf_counter()
            try:
                out = client.predict(image=handle_file(str(IMAGE)), **params)
                if not isinstance(out, (tuple, list)) or len(out) < 10:
                    raise RuntimeError(f"expected the /analyze outputs, got {type(out).__name__}")
                results.append(time.perf_counter() - t0)
            except Exception as exc:  # noqa: BLE001 - counted, not raised
                failures.append(repr(exc))

    def run(n: int) -> dict:
        results, failures = [], []
        barrier = threading.Barrier(n + 1)
        threads = [threading.Thread(target=one_user, args=(results, failures, barrier)) for _ in range(n)]
        for t in threads:
            t.start()
        barrier.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        lat = sorted(results)
        return {
            "users": n, "analyses_each": per_user, "done": len(results), "failures": len(failures),
            "failure_messages": failures[:5], "wall_s": wall, "latency_s": lat,
            "p50_s": median(lat) if lat else None,
            "p95_s": lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))] if lat else None,
            "throughput_per_s": len(results) / wall,
        }

    try:
        wait_http_200(url, proc)
        warm: list = []
        one_user(warm, warm, None)  # loads the model (the offline fallback to random weights) once
        single = run(1)
        print(f"  1 user x {per_user}: p50 {single['p50_s']:.2f} s, {single['throughput_per_s']:.2f}/s", flush=True)
        many = run(users)
        print(f"  {users} users x {per_user}: p50 {many['p50_s']:.2f} s, p95 {many['p95_s']:.2f} s, "
              f"{many['throughput_per_s']:.2f}/s, failures {many['failures']}", flush=True)
    finally:
        stop_app(proc)
    return {"single": single, "concurrent": many}


def measure_http(tmp: Path, rounds: int = HTTP_ROUNDS) -> dict:
    """``/redraw`` and ``/analyze`` through HTTP as the page sends them (:class:`served.PageClient`: the queue, the
    session's event stream, every picture fetched), interleaved with the bare forward of the same model in this
    process: ViT-B/16 at P = 16, random weights (the app falls back to them offline). Medians of the per-round
    ratios to the bare forward. Beside them, gradio_client's ``/redraw`` (what a notebook uses: its own threads
    and polling on top) and its ``/top_k``, an event that draws nothing: that client's floor."""
    from gradio_client import Client, handle_file  # noqa: PLC0415

    from vit.images import load_image  # noqa: PLC0415

    model = vit.load_model("vit_b_16", weights="random", device=device())
    x = model.preprocess(load_image(IMAGE)).to(device())

    def bare():
        with torch.inference_mode():
            return model(x)

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    proc = start_app(port, offline_env(tmp), tmp / "http.log")
    try:
        wait_http_200(url, proc)
        page, notebook = PageClient(url), Client(url, verbose=False)
        image = page.upload(IMAGE)
        analyze = ("/analyze", image, "ViT-B/16", 16, 12)
        for _ in range(2):  # warm-up: the model loaded (its offline fallback), kernels, fonts
            bare()
            page.call(*analyze)
            page.call("/redraw")
        notebook.predict(image=handle_file(str(IMAGE)), model="ViT-B/16", patch_size=16, depth=12,
                         api_name="/analyze")
        raw: dict[str, list[float]] = {"bare": [], "redraw": [], "analyze": [], "notebook_redraw": [],
                                       "notebook_top_k": []}
        for i in range(rounds):
            layer, head = 12 - i % 2, 1 + i % 12
            raw["bare"].append(timed(bare)[0])
            raw["redraw"].append(timed(lambda l=layer, h=head: page.call("/redraw", 0.5, 0.5, l, h, 0.5))[0])
            raw["analyze"].append(timed(lambda: page.call(*analyze))[0])
            raw["notebook_redraw"].append(timed(lambda l=layer, h=head: notebook.predict(layer=l, head=h,
                                                                                         api_name="/redraw"))[0])
            raw["notebook_top_k"].append(timed(lambda: notebook.predict(api_name="/top_k"))[0])
            print(f"  HTTP round {i + 1}/{rounds}: " + ", ".join(f"{k} {v[-1]:.0f}" for k, v in raw.items()) + " ms",
                  flush=True)
        page.close()
    finally:
        stop_app(proc)
    ratios = {k: [v / b for v, b in zip(raw[k], raw["bare"])] for k in raw if k != "bare"}
    return {"rounds": rounds, "raw_ms": raw, "median_ms": {k: median(v) for k, v in raw.items()},
            "median_ratio": {k: median(v) for k, v in ratios.items()}}


def measure_burst(tmp: Path) -> dict:
    """The served app's RSS before, at peak and settled after 20 mixed analyses: ``memory_burst.py``'s own run."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from memory_burst import run_variant  # noqa: PLC0415 - it imports this module's app helpers

    r = run_variant("app", BURST_CLIENTS, list(BURST_SEQUENCE), tmp)
    print(f"  burst of {r['analyses']}: settled {r['settled_gb']:.2f} GB, caches {r['accounted_gb']:.2f} GB",
          flush=True)
    return r


# --------------------------------------------------------------------------- report


def gb(record) -> str:
    return f"{record['rss_gb']:.2f}" if record else "–"


def table(results: dict) -> str:
    lines = [
        "| config | bare ms | analyze ms (× bare) | app ms (× bare) | page ms (× bare) | display ms | fusion ms "
        "| discard ms | peer ms (× bare) | bfloat16: bare / analyze / page ms (× float32 bare) "
        "| peak RSS bare/analyze/peer GB | kept GB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results["configs"].items():
        m, x = r["median_ms"], r["median_ratio"]
        rss = r.get("rss")
        mem = "/".join(gb(rss.get(k)) for k in ("bare", "analyze", "peer")) if rss else "–"
        label = f"{name} (T={r['tokens']}, L={r['depth']})"
        lines.append(
            f"| {label} | {m['bare']:.0f} | {m['analyze']:.0f} ({x['analyze']:.2f}×) | {m['app']:.0f} "
            f"({x['app']:.2f}×) | {m['page']:.0f} ({x['page']:.2f}×) | {m['display']:.0f} | {m['fusion']:.0f} "
            f"| {m['discard']:.0f} "
            f"| {m['peer']:.0f} ({x['peer']:.2f}×) | {m['bare_bf16']:.0f} ({x['bare_bf16']:.2f}×) / "
            f"{m['analyze_bf16']:.0f} ({x['analyze_bf16']:.2f}×) / {m['page_bf16']:.0f} ({x['page_bf16']:.2f}×) "
            f"| {mem} | {r['kept_gb']:.3f} |"
        )
    lines += ["", "Where the time goes (medians, ms): analyze = preprocess + traced forward + explain; "
              "app, page = analyze + render + encode; display, fusion, discard = render + encode", ""]
    for name, r in results["configs"].items():
        p = r["parts_median_ms"]
        lines.append(f"- {name}: analyze {p['preprocess']:.0f} + {p['forward_traced']:.0f} + {p['explain']:.0f}; "
                     f"app {p['app_analyze']:.0f} + {p['app_render']:.0f} + {p['app_encode']:.0f}; "
                     f"page {p['page_analyze']:.0f} + {p['page_render']:.0f} + {p['page_encode']:.0f}; "
                     + "; ".join(f"{m} {p[f'{m}_render']:.0f} + {p[f'{m}_encode']:.0f}" for m in DISPLAY_METHODS))
    return "\n".join(lines)


def check_targets(results: dict) -> dict:
    out = {}
    cfgs = results["configs"]
    for key, (cfg, method, limit) in TARGETS.items():
        if cfg in cfgs:
            got = cfgs[cfg]["median_ratio"][method]
            out[key] = {"target": limit, "measured": got, "met": got <= limit}
    for cfg, limit in DISPLAY_TARGETS_MS.items():
        for method in DISPLAY_METHODS if cfg in cfgs else ():
            got = cfgs[cfg]["median_ms"][method]
            out[f"{method}_ms_{cfg.split('-')[-1]}"] = {"target": limit, "measured": got, "met": got <= limit}
    if "b16-p4" in cfgs:
        got = cfgs["b16-p4"]["kept_gb"]
        out["kept_gb_p4"] = {"target": KEPT_TARGET_GB, "measured": got, "met": got <= KEPT_TARGET_GB}
    if results.get("http"):
        for method, limit in HTTP_TARGETS.items():
            got = results["http"]["median_ratio"][method]
            out[f"http_{method}_x_bare_p16"] = {"target": limit, "measured": got, "met": got <= limit}
    rss = cfgs.get("b16-p4", {}).get("rss") or {}
    if rss.get("analyze"):
        got = rss["analyze"]["rss_gb"]
        out["analyze_rss_gb_p4"] = {"target": RSS_TARGET_GB, "measured": got, "met": got <= RSS_TARGET_GB}
    if results.get("startup"):
        got = results["startup"]["median_s"]
        out["startup_s"] = {"target": STARTUP_TARGET_S, "measured": got, "met": got <= STARTUP_TARGET_S}
    if results.get("concurrency"):
        got = results["concurrency"]["concurrent"]["failures"]
        out["concurrency_failures"] = {"target": 0, "measured": got, "met": got == 0}
    return out


def extras(results: dict) -> str:
    lines = []
    s = results.get("startup")
    if s:
        lines.append(f"- `python app.py` to first HTTP 200: median {s['median_s']:.1f} s "
                     f"({', '.join(f'{v:.1f}' for v in s['raw_s'])})")
    h = results.get("http")
    if h:
        m, x = h["median_ms"], h["median_ratio"]
        lines.append(f"- through HTTP as the page sends it (B/16, P=16, every picture fetched, medians of "
                     f"{h['rounds']} interleaved rounds): bare forward {m['bare']:.0f} ms, "
                     f"/redraw {m['redraw']:.0f} ms ({x['redraw']:.2f}×), /analyze {m['analyze']:.0f} ms "
                     f"({x['analyze']:.2f}×); through gradio_client (a notebook): /redraw {m['notebook_redraw']:.0f} "
                     f"ms ({x['notebook_redraw']:.2f}×), /top_k, which draws nothing, {m['notebook_top_k']:.0f} ms")
    c = results.get("concurrency")
    if c:
        one, many = c["single"], c["concurrent"]
        lines.append(
            f"- {many['users']} concurrent gradio_client users × {many['analyses_each']} analyses (B/16, P=16): "
            f"{many['failures']} failures, p50 {many['p50_s']:.2f} s, p95 {many['p95_s']:.2f} s, "
            f"{many['throughput_per_s']:.2f} analyses/s; one user alone: p50 {one['p50_s']:.2f} s, "
            f"{one['throughput_per_s']:.2f} analyses/s")
    b = results.get("burst")
    if b:
        lines.append(
            f"- served app after {b['analyses']} mixed analyses ({BURST_CLIENTS} tabs at once, each P = "
            f"{', '.join(map(str, BURST_SEQUENCE))}; memory_burst.py): RSS before {b['before_gb']:.2f} GB, peak "
            f"{b['peak_gb']:.2f} GB, settled 10 s after {b['settled_gb']:.2f} GB, of which the caches account for "
            f"{b['accounted_gb']:.2f} GB ({b['above_accounted_gb']:.2f} GB above)")
    for key, t in results.get("targets", {}).items():
        lines.append(f"- target {key}: {t['measured']:.2f} vs ≤ {t['target']} — {'met' if t['met'] else 'NOT met'}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Issues 5, 13 and 23: analysis and display cost vs the bare forward.")
    p.add_argument("--configs", default="b16-p16,b16-p8,b16-p4,b32",
                   help=f"comma-separated, from {', '.join(CONFIGS)}")
    p.add_argument("--repeat", type=int, default=None, help="repetitions per config (default 5; 3 at patch 4)")
    p.add_argument("--depth", type=int, default=None, help="encoder layers to run (default: all)")
    p.add_argument("--json", default=str(ROOT / "benchmarks" / "results.json"), help="where to write the results")
    p.add_argument("--no-app", action="store_true", help="skip the running app's startup and concurrency measurements")
    p.add_argument("--no-rss", action="store_true", help="skip the peak-RSS subprocesses")
    p.add_argument("--no-explain", action="store_true", help="skip the explanations' costs (bench_explain.py)")
    p.add_argument("--no-burst", action="store_true", help="skip the served app's settled RSS after a burst")
    p.add_argument("--tiny", action="store_true", help="smoke test: b32 at depth 1, repeat 1, no app")
    p.add_argument("--_rss", nargs=2, metavar=("MODE", "CONFIG"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.tiny:
        args.configs, args.depth, args.repeat, args.no_app = "b32", args.depth or 1, args.repeat or 1, True
    args.configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in args.configs if c not in CONFIGS]
    if unknown:
        p.error(f"--configs must be from {', '.join(CONFIGS)}, got {', '.join(unknown)}")
    if args.repeat is not None and args.repeat < 1:
        p.error(f"--repeat must be at least 1, got {args.repeat}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args._rss:
        rss_child(args._rss[0], args._rss[1], args.depth)
        return 0

    results: dict = {
        "device": device_name(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "image": str(IMAGE.relative_to(ROOT)),
        "weights": "random",
        "views_from": "vit.views (grid, stage rows, rollout, heads, layers, query, top-k, depth; as the app)",
        "encoding": ENCODING,
        "configs": {},
    }
    print(f"# ViT Anatomy benchmark — {results['device']}, torch {results['torch']}, "
          f"{results['threads']} threads, views from {results['views_from']}, encoded by {results['encoding']}",
          flush=True)
    for name in args.configs:
        family, patch_size = CONFIGS[name]
        repeat = args.repeat or SLOW_CONFIGS.get(name, 5)
        print(f"{name}: {family} at P={patch_size}, {repeat} repetitions", flush=True)
        r = bench_config(name, family, patch_size, args.depth, repeat)
        if not args.no_rss:
            r["rss"] = measure_rss(name, args.depth)
        results["configs"][name] = r

    if not args.no_app and (ROOT / "app.py").is_file():
        measures = [("startup", measure_startup), ("http", measure_http), ("concurrency", measure_concurrency)]
        if not args.no_burst:
            measures.append(("burst", measure_burst))
        with tempfile.TemporaryDirectory(prefix="vit-bench-") as tmp:
            for key, fn in measures:
                try:
                    results[key] = fn(Path(tmp))
                except Exception as exc:  # noqa: BLE001 - reported, the rest still printed
                    print(f"{key} failed: {exc!r}", file=sys.stderr)
                    results[key] = None
                    results[f"{key}_error"] = repr(exc)

    if not args.no_explain:  # issue 11: "Why this class?" against the bare forward, at P = 16 (B/32 when tiny)
        import bench_explain  # noqa: PLC0415 - beside this file

        family, patch_size = ("vit_b_32", 32) if args.tiny else ("vit_b_16", 16)
        results["explanations"] = bench_explain.run(family, patch_size, args.depth, args.repeat or 5, device())

    results["targets"] = check_targets(results)
    print()
    print(f"Device: {results['device']}; torch {results['torch']}; {results['date']}")
    print()
    print(table(results))
    if results.get("explanations"):
        import bench_explain  # noqa: PLC0415

        print()
        print("Why this class? (vit.explain and a 10-step deletion curve, × the bare forward):")
        print()
        print(bench_explain.table(results["explanations"]))
    more = extras(results)
    if more:
        print()
        print(more)
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1))
    print(f"\nJSON: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
