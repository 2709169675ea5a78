"""ViT Anatomy in the browser: a Gradio shell over ``vit`` (chapter 11.4, the ViT Encoder).

    python app.py                    # http://127.0.0.1:7860
    python app.py --host 0.0.0.0     # a class on the same network can connect
    python app.py --port 8000 --share

This file only starts the server; the page is ``vit/ui`` (docs/layout.md). Nothing heavy happens at import."""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # a classroom server phones nobody

try:  # Hugging Face's ZeroGPU package: there on Spaces, needed nowhere else; imported before torch, as its docs ask
    import spaces
except ImportError:
    spaces = None

import gradio as gr
from starlette.middleware import Middleware  # gradio's own dependency

from vit.errors import InputError
from vit.model.families import ASSETS
from vit.serve.files import picture_budgets, remove_stale_folders
from vit.serve.limits import LOOPBACK, PrivateEventGuard, RequestLimits, Streams, trusts_forwarded
from vit.serve.pagecache import PageCache
from vit.serve.prefetch import FETCHES
from vit.serve.sessions import SessionLedger, positive_int
from vit.serve.uploads import server_folder
from vit.ui import gradio_internals, lang, layout, models, startup, state
from vit.ui.runs import max_run_s
from vit.ui.tabs import lesson

log = logging.getLogger("vit.app")

# Requests gradio's queue holds waiting (all addresses); vit.ui.tabs.parts.MODEL_WAITERS more may wait for the model.
# One address's JOBS_PER_CLIENT leave 64 places (the whole queue before 2026-12-04) to every other address.
QUEUE_SIZE = 256
MAX_FILE = "20mb"  # one upload's file; a request carries one (vit.serve.limits)
MAX_FILE_BYTES = 20 * 2**20
# Jobs one address may have queued or running: a class of 30 behind one NAT needs 180 (docs/reliability.md).
JOBS_PER_CLIENT = 192
JOBS_ENV, HOSTS_ENV = "VIT_JOBS_PER_CLIENT", "VIT_ALLOWED_HOSTS"

build_demo = layout.build_demo


class LimitError(ValueError):
    """A limit's environment variable (VIT_MAX_SESSIONS, VIT_UPLOAD_GB, ...) is not a valid number."""


def private_hosts(host: str, share: bool) -> list[str] | None:
    """The host names a request may name: a loopback server only loopback names (no DNS rebinding), plus
    ``$VIT_ALLOWED_HOSTS``; a public one (0.0.0.0, --share) any unless ``$VIT_ALLOWED_HOSTS`` names them."""
    allowed = [h.strip() for h in os.environ.get(HOSTS_ENV, "").split(",") if h.strip()]
    if share:
        return allowed or None
    if host in LOOPBACK:
        return [*LOOPBACK, *allowed]
    return allowed or None


def launch(demo: gr.Blocks, host: str = "127.0.0.1", port: int = 7860, share: bool = False, **kwargs):
    """Start the server with the app's limits (queue, sessions, uploads, files served, the page from memory)."""
    try:
        ledger = SessionLedger.from_environment()
        state.upload_space.forget()  # this server's folder and shares (VIT_UPLOAD_GB, VIT_UPLOAD_ADDRESS_GB)
        uploads = state.upload_space()  # the drawings' too; never a file a live page shows removed
        max_jobs = positive_int(os.environ, JOBS_ENV, JOBS_PER_CLIENT)
        picture_budgets()  # VIT_PICTURES_*_MB: checked at start (the picture folder reads them when first used)
        max_run_s()  # VIT_MAX_RUN_S
        state.dtype_setting()  # VIT_DTYPE
    except ValueError as exc:
        raise LimitError(str(exc)) from None
    gradio_internals.check()  # before anything listens: what the server's protections use is there
    trust = trusts_forwarded()
    streams = Streams()
    ledger.live = streams.page_open  # an open page is never forgotten for its address's other pages
    state.SESSIONS.resize(ledger.max_sessions)  # the app's sessions and gradio's: the same number
    demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=1)
    limits = Middleware(RequestLimits, ledger=ledger, forget=lambda session: _forget(demo, session),
                        private_hosts=private_hosts(host, share), uploads=uploads, max_upload=MAX_FILE_BYTES,
                        jobs_of=gradio_internals.jobs_of(demo, trust),
                        max_jobs=max_jobs, trust_forwarded=trust,
                        streams=streams, pending=gradio_internals.pending(demo),
                        background=[lambda: gradio_internals.reap_unread(demo, streams)])
    guard = Middleware(PrivateEventGuard, private=gradio_internals.private_events(demo))
    block = not kwargs.pop("prevent_thread_lock", False)
    launched = demo.launch(
        server_name=host, server_port=port, share=share, max_file_size=MAX_FILE, allowed_paths=[str(ASSETS)],
        enable_monitoring=False, ssr_mode=False, theme=layout.theme(), css=layout.CSS, js=layout.SCRIPT,
        i18n=lang.I18N,
        footer_links=["api"], state_session_capacity=ledger.max_sessions, prevent_thread_lock=True,
        app_kwargs={"middleware": [limits, guard, Middleware(PageCache)]}, **kwargs,
    )
    gradio_internals.check(demo)  # on the running server too; a refusal names what is missing
    gradio_internals.install(demo, ledger.max_sessions)
    gradio_internals.refuse_quietly(demo)  # a refused payload: one log line, not gradio's traceback
    gradio_internals.watch(demo, streams, trust)  # a job's handler asks whether anyone reads its stream
    state.fair_queue().crowded = gradio_internals.waiting_elsewhere(demo, trust)  # an address's share of model handlers
    lesson.EXPORTS.crowded = gradio_internals.waiting_elsewhere(demo, trust, "lesson-export")  # and of PDF exports
    waiting = gradio_internals.waiting_elsewhere(demo, trust)
    FETCHES.crowded = lambda: waiting(None)  # any request waits for a model handler: downloads hold few of them
    uploads.sweep_forever()
    if block:
        demo.block_thread()
    return launched


def _forget(demo: gr.Blocks, session_hash: str) -> None:
    """An evicted session (idle, or its client opened too many): gradio's state and the app's Session go."""
    gradio_internals.forget(demo, session_hash)
    state.end_session(f"session:{session_hash}")


def _prewarm() -> None:
    """In the background: import torch and the model code, so the first analysis does not wait for
    it, and remove partial downloads left by processes that were killed."""
    try:
        import vit.model.load  # noqa: PLC0415
        import vit.serve.cache  # noqa: PLC0415
        import vit.views.draw  # noqa: F401, PLC0415
        from vit.model import precision  # noqa: PLC0415
        from vit.model.checkpoints import remove_stale_partials  # noqa: PLC0415

        chosen, device = state.dtype_setting(), vit.model.load.default_device()
        if chosen == "auto" and device.type == "cuda":  # asking the GPU starts CUDA: not here on a ZeroGPU Space
            log.info("models run in auto: bfloat16 where the GPU supports it (asked at the first run)")
        else:
            log.info("models run in %s (%s)", precision.name(precision.resolve(chosen, device)),
                     "auto: this processor's bfloat16 support" if chosen == "auto" else "as asked")
        for path in remove_stale_partials():
            log.info("removed the partial download %s, left by a process that is gone", path.name)
    except Exception:  # the first request will report it
        log.exception("pre-loading vit failed")


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _remove_leftovers() -> None:
    """Picture folders that killed servers left behind (partial downloads: :func:`_prewarm`)."""
    for path in remove_stale_folders(tempfile.gettempdir()):
        log.info("removed %s, left by a server that is gone", path.name)


def _own_upload_folder() -> None:
    """This server's uploads and gradio's copies of its pictures in a folder of its own under gradio's root,
    removed at exit (those of servers that are gone first)."""
    root = os.environ.get("GRADIO_TEMP_DIR") or str(Path(tempfile.gettempdir()) / "gradio")
    folder = server_folder(root)
    os.environ["GRADIO_TEMP_DIR"] = str(folder)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="ViT Anatomy: look inside a Vision Transformer in the browser.")
    # A Space starts `python app.py` and expects 0.0.0.0:7860; gradio's own variables are honoured as gradio does.
    host = os.environ.get("GRADIO_SERVER_NAME") or ("0.0.0.0" if startup.on_space() else "127.0.0.1")  # noqa: S104
    parser.add_argument("--host", default=host,
                        help="address to listen on (default 127.0.0.1, or $GRADIO_SERVER_NAME, or 0.0.0.0 on a "
                             "Space; 0.0.0.0 lets others on the network connect)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT") or 7860),
                        help="port (default 7860, or $GRADIO_SERVER_PORT)")
    parser.add_argument("--share", action="store_true", help="also open a temporary public gradio.live link")
    parser.add_argument("--models", default=None, metavar="ID[,ID...]",
                        help="Hugging Face Hub ViTs (repository ids or local folders) to add to the model menu "
                             "(default $VIT_MODELS); visitors pick from the menu, they never name a repository")
    parser.add_argument("--dtype", default=None, choices=("auto", "float32", "bfloat16"),
                        help="the models' precision: auto (default, or $VIT_DTYPE: bfloat16 where the processor "
                             "has bfloat16 matmuls, else float32), float32 (the reference) or bfloat16")
    args = parser.parse_args(argv)
    if args.dtype is not None:
        os.environ[state.DTYPE_ENV] = args.dtype  # the model cache reads it (and a ZeroGPU worker, its copy)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # SIGTERM (systemd, docker stop, kill) ends the server as Ctrl-C does: gradio closes and
    # deletes its cache, and atexit removes the picture folder.
    signal.signal(signal.SIGTERM, _interrupt)
    _remove_leftovers()
    _own_upload_folder()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # gradio's own start-up requests
    logging.getLogger("fontTools").setLevel(logging.WARNING)  # ~250 lines per lesson PDF (its font subsets)
    if startup.on_space():  # a Space starts with an empty cache: fetch the default model's weights from the start
        startup.start_prefetch()
    try:
        models.register(models.operator_models(args.models))  # before the page is built: its menu lists them
    except InputError as exc:
        parser.error(f"--models: {exc}")  # a sentence and exit status 2, before anything listens
    demo = build_demo()
    try:
        launch(demo, args.host, args.port, args.share, prevent_thread_lock=True)
    except (LimitError, gradio_internals.GradioInternalsMissing) as exc:  # a limit's variable, another gradio
        parser.error(str(exc))
    try:
        threading.Thread(target=_prewarm, name="prewarm", daemon=True).start()
        demo.block_thread()  # closes the server at Ctrl-C or SIGTERM
    except KeyboardInterrupt:  # one that came before block_thread (seen beside two CPU burners)
        demo.close()


if __name__ == "__main__":
    main()
