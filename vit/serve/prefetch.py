"""A checkpoint fetched in the background while a server starts, for requests to wait on.

A Hugging Face Space starts with an empty torch hub cache: without this the first
student would wait for ViT-B/16's 330 MB, or, on a slow connection, see a model on
random weights. :class:`Prefetch` downloads one family's checkpoint in a thread (through
:func:`vit.model.load.fetch_checkpoint`, so a failure is remembered there like any other), counts
the bytes for a progress banner, and lets a request wait for it instead of starting a
second download of the same file or giving up while it is merely slow.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("vit.prefetch")


class Prefetch:
    """One checkpoint's background download: ``Prefetch("vit_b_16").start()``.

    Attributes:
        name: the family (a key of ``vit.model.checkpoints.CHECKPOINTS``).
        done, total: bytes received so far and the file's size (0 until the server says).
        error: why the download failed, for a web page ("" while running and after success).
    """

    def __init__(self, name: str):
        self.name = name
        self.done = 0
        self.total = 0
        self.error = ""
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"prefetch-{name}", daemon=True)

    def start(self) -> Prefetch:
        self._thread.start()
        return self

    @property
    def in_flight(self) -> bool:
        """Started and not finished yet."""
        return self._thread.is_alive() and not self._finished.is_set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def wait(self, report: Callable[[int, int], None] | None = None, poll_s: float = 0.25) -> bool:
        """Block until the download has finished, calling ``report(done, total)`` meanwhile.

        Returns:
            Whether the checkpoint is now in the cache.
        """
        if self._thread.ident is None:  # never started: nothing to wait for
            return False
        while not self._finished.wait(poll_s):
            if report is not None:
                report(self.done, self.total)
        return not self.error

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def _run(self) -> None:
        try:
            from vit.model.checkpoints import CHECKPOINTS  # noqa: PLC0415
            from vit.model.load import fetch_checkpoint  # noqa: PLC0415 - imports torch: in this thread, not the caller's

            if self.name not in CHECKPOINTS:  # a family that ships its own weights: nothing to download
                return
            path, public, detail = fetch_checkpoint(self.name, progress=self._progress)
            if path is None:
                self.error = public
                log.warning("prefetch of %s failed: %s", self.name, detail)
            else:
                self.done = self.total = path.stat().st_size
                log.info("prefetch of %s: %s is in the cache (%.0f MB)", self.name, path.name, self.done / 1e6)
        except Exception as exc:  # a request will try again and report it
            self.error = f"the download of the {self.name} weights failed ({type(exc).__name__})"
            log.exception("prefetch of %s failed", self.name)
        finally:
            self._finished.set()
