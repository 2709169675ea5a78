"""ViT Anatomy in the browser: a Gradio shell over ``vit`` (chapter 11.4, the ViT Encoder).

    python app.py                    # http://127.0.0.1:7860
    python app.py --host 0.0.0.0     # a class on the same network can connect
    python app.py --port 8000 --share

Upload a photo and follow it through the model in the chapter's notation:
(B, C, H, W) -> (B, N, D) -> (B, N+1, D) -> L encoder blocks -> h_cls -> (B, K).
This file only starts the server. The page is ``vit/ui``:

    layout.py     composes the page: shared states, then each section's build(c) and wire(c)
    tabs/         one module per section, its components, events and own handlers: controls (sidebar,
                  view controls, the API's events), patches, attention, depth, why, inside, figure7, lesson;
                  parts.py: a picture with its buttons, the pinned copy, the redraw event
    events.py     the handlers several sections share (analyze, redraw, click, move, download, settings),
                  outputs by name
    runs.py       a model run: its turn in the fair queue, the weights, progress layer by layer
    gpu.py        ZeroGPU's spaces.GPU around the model work
    startup.py    a Space's startup download and its banner
    inputs.py     the controls as the page shows them, and the one gate for images
    meter.py      cost meter, banners, out-of-date notice
    pictures.py   captions, the grid's geometry, the stage table, Figure 7's weights
    state.py      model cache, kept analyses, the model's queue, picture folder, sessions

The pictures themselves are ``vit.views`` and their registry ``vit.views.pictures``, shared with
the CLI and the benchmark. Nothing heavy happens at import: torch and the models load on the
first request.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import tempfile
import threading

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # a classroom server phones nobody

try:  # Hugging Face's ZeroGPU package: there on Spaces, needed nowhere else; imported before torch, as its docs ask
    import spaces
except ImportError:
    spaces = None

import gradio as gr
from starlette.middleware import Middleware  # gradio's own dependency

from vit.errors import InputError
from vit.model.families import ASSETS
from vit.serve.files import remove_stale_folders
from vit.ui import layout, models, startup

log = logging.getLogger("vit.app")

QUEUE_SIZE = 64  # requests gradio's queue holds; vit.ui.tabs.parts.MODEL_WAITERS of them may wait for the model

build_demo = layout.build_demo


class PrivateEventGuard:
    """ASGI middleware: the app's internal events answer only the page, never a by-name HTTP call.

    gradio 6.31 routes ``/gradio_api/call/<name>`` (and ``/run/``, ``/api/``) to every event by
    its name, ``api_visibility="private"`` ones too (that setting only hides them from the docs
    and from gradio_client). The page itself calls events by number through the queue, so
    refusing the by-name routes of private events costs it nothing. Every event that takes an
    image checks it as well (:func:`vit.ui.inputs.image_source`); this is the second lock.
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
    demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=1)
    guard = Middleware(PrivateEventGuard, private=private_events(demo))
    return demo.launch(
        server_name=host, server_port=port, share=share, max_file_size="20mb", allowed_paths=[str(ASSETS)],
        enable_monitoring=False, ssr_mode=False, theme=layout.theme(), css=layout.CSS, js=layout.SCRIPT,
        footer_links=["api"],
        app_kwargs={"middleware": [guard]}, **kwargs,
    )


def _prewarm() -> None:
    """In the background: import torch and the model code, so the first analysis does not wait for
    it, and remove partial downloads left by processes that were killed."""
    try:
        import vit.model.load  # noqa: PLC0415
        import vit.serve.cache  # noqa: PLC0415
        import vit.views.draw  # noqa: F401, PLC0415
        from vit.model.checkpoints import remove_stale_partials  # noqa: PLC0415

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
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # SIGTERM (systemd, docker stop, kill) ends the server as Ctrl-C does: gradio closes and
    # deletes its cache, and atexit removes the picture folder.
    signal.signal(signal.SIGTERM, _interrupt)
    _remove_leftovers()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # gradio's own start-up requests
    if startup.on_space():  # a Space starts with an empty cache: fetch the default model's weights from the start
        startup.start_prefetch()
    try:
        models.register(models.operator_models(args.models))  # before the page is built: its menu lists them
    except InputError as exc:
        parser.error(f"--models: {exc}")  # a sentence and exit status 2, before anything listens
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
    except Exception:  # gradio's internals moved: its own delete_cache still bounds the cache
        log.exception("could not remove gradio's cached files")


if __name__ == "__main__":
    main()
