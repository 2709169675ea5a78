"""The page itself (``GET /``) answered from memory: an ASGI middleware, gradio-free.

gradio builds the page anew for every visitor (a deep copy of the whole config, tens of ms, far more under load); it
depends only on the URL and the headers gradio reads for the public root, and this app has no login. So a complete
``200`` without cookies is kept for a while per such key."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from importlib.metadata import version

KEY_HEADERS = (b"host", b"x-forwarded-host", b"x-forwarded-proto", b"x-gradio-server")
GRADIO = version("gradio")  # a page is gradio's: another gradio, another page (the key says which)
MAX_PAGES = 8  # a server reached by a handful of names (localhost, its address, a proxy's)
MAX_PAGE_BYTES = 4 * 1024 * 1024
TTL_S = 60.0


class PageCache:
    """Answers ``GET``/``HEAD /`` from a bounded, short-lived store of gradio's own answers."""

    def __init__(self, app: Callable[..., Awaitable[None]], ttl_s: float = TTL_S, max_pages: int = MAX_PAGES):
        self.app, self.ttl_s, self.max_pages = app, ttl_s, max_pages
        self._pages: OrderedDict[tuple, tuple[float, dict, bytes]] = OrderedDict()

    async def __call__(self, scope, receive, send) -> None:
        key = self._key(scope)
        if key is None:
            await self.app(scope, receive, send)
            return
        kept = self._pages.get(key)
        if kept is not None and time.monotonic() - kept[0] < self.ttl_s:
            self._pages.move_to_end(key)
            await send(kept[1])
            await send({"type": "http.response.body", "body": kept[2], "more_body": False})
            return
        await self.app(scope, receive, self._keeping(key, send))

    @staticmethod
    def _key(scope) -> tuple | None:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            return None
        root = scope.get("root_path", "")
        if scope.get("path", "") not in ("/", f"{root}/", root):
            return None
        headers = dict(scope.get("headers", ()))
        if b"authorization" in headers or b"cookie" in headers and b"access-token" in headers[b"cookie"]:
            return None  # never share a page that could depend on who asks
        # Every line of a repeated header: gradio may read another line than the last (its public root).
        return (GRADIO, scope["method"], scope.get("scheme"), root, scope.get("path"), scope.get("query_string", b""),
                *(tuple(v for k, v in scope.get("headers", ()) if k == name) for name in KEY_HEADERS))

    def _keeping(self, key: tuple, send):
        start: list[dict] = []
        chunks: list[bytes] = []
        size = [0]

        async def keeping(message) -> None:
            if message["type"] == "http.response.start":
                start.append(message)
            elif message["type"] == "http.response.body" and start:
                chunks.append(message.get("body", b""))
                size[0] += len(chunks[-1])
                if not message.get("more_body", False):
                    self._keep(key, start[0], chunks, size[0])
            await send(message)

        return keeping

    def _keep(self, key: tuple, start: dict, chunks: list[bytes], size: int) -> None:
        headers = dict(start.get("headers", ()))
        if start.get("status") != 200 or b"set-cookie" in headers or size > MAX_PAGE_BYTES:
            return
        self._pages[key] = (time.monotonic(), start, b"".join(chunks))
        self._pages.move_to_end(key)
        while len(self._pages) > self.max_pages:
            self._pages.popitem(last=False)
