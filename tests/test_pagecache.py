"""The page (GET /) answered from memory: the same bytes gradio would send, per public root, nothing else kept."""

from __future__ import annotations

import asyncio

from vit.serve.pagecache import PageCache


def fake_app(calls: list, status: int = 200, headers=()):
    async def app(scope, receive, send):
        calls.append((scope["method"], scope["path"], dict(scope["headers"]).get(b"host")))
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/html"),
                                                                                 *headers]})
        await send({"type": "http.response.body", "body": b"<html>", "more_body": True})
        await send({"type": "http.response.body", "body": f"{len(calls)}</html>".encode()})
    return app


def get(app, path="/", method="GET", host=b"127.0.0.1:7860", extra=()):
    sent = []

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "root_path": "", "scheme": "http",
             "query_string": b"", "headers": [(b"host", host), *extra]}
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_the_page_is_built_once_per_public_root():
    calls = []
    cache = PageCache(fake_app(calls))
    assert get(cache) == (200, b"<html>1</html>")
    assert get(cache) == (200, b"<html>1</html>")  # from memory, gradio not called
    assert get(cache, host=b"localhost:7860") == (200, b"<html>2</html>")  # another root: its own page
    assert get(cache, extra=[(b"x-forwarded-host", b"proxy.example")]) == (200, b"<html>3</html>")
    assert get(cache, method="POST") == (200, b"<html>4</html>")
    assert get(cache, path="/config") == (200, b"<html>5</html>")
    assert get(cache, path="/config") == (200, b"<html>6</html>")  # only the page is kept
    assert len(calls) == 6


def test_errors_cookies_and_expired_pages_are_not_kept():
    calls = []
    cache = PageCache(fake_app(calls, status=500))
    get(cache), get(cache)
    assert len(calls) == 2
    calls.clear()
    cache = PageCache(fake_app(calls, headers=[(b"set-cookie", b"a=b")]))
    get(cache), get(cache)
    assert len(calls) == 2
    calls.clear()
    cache = PageCache(fake_app(calls), ttl_s=0.0)
    get(cache), get(cache)
    assert len(calls) == 2
    calls.clear()
    cache = PageCache(fake_app(calls), max_pages=2)
    for host in (b"a", b"b", b"c", b"a"):
        get(cache, host=host)
    assert len(calls) == 4  # a was evicted by c
