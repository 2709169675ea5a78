"""One client on the network against the running app (issue 26): memory, decoding, disk and queue.

Each test mounts an attack from the security review of 2026-12-01 over loopback with a raw HTTP client,
bounded in count and time, and measures what it cost: RSS from /proc, files on disk, a probe's latency,
who was served. Clients are told apart by ``X-Forwarded-For`` (the server trusts it here, as behind a
Space's proxy), so one loopback test can be an attacker and a student at once.
"""

from __future__ import annotations

import io
import json
import os
import socket
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
from conftest import ROOT, running_app
from gradio.utils import get_upload_folder
from PIL import Image

from vit.serve import uploads as upload_space
from vit.ui import state

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:gradio.queueing")

CAT = ROOT / "assets" / "cat.jpg"
ANALYZE = ["ViT-B/32", 32, 1, 5, "mean", 0.0, 1, 1, 0.6, "cividis"]  # /analyze after the image
LIMITS = {"VIT_TRUST_FORWARDED": "1", "VIT_MAX_SESSIONS": "200", "VIT_SESSIONS_PER_CLIENT": "32",
          "VIT_JOBS_PER_CLIENT": "3", "VIT_UPLOAD_GB": "0.05"}


def status_bytes(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    return 0


@pytest.fixture(scope="module")
def server(torch_home, tmp_path_factory):
    """The app with small limits, and an upload folder of its own (other suites share /tmp/gradio)."""
    limits = {**LIMITS, "GRADIO_TEMP_DIR": str(tmp_path_factory.mktemp("gradio"))}
    old = {k: os.environ.get(k) for k in limits}
    os.environ.update(limits)
    try:
        with running_app() as url:
            yield url
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def client(url: str, address: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=120, headers={"X-Forwarded-For": address})


def fn_index(http: httpx.Client, name: str) -> int:
    return next(d["id"] for d in http.get("/config").json()["dependencies"] if d["api_name"] == name)


def upload(http: httpx.Client, path: Path | bytes, name: str = "photo.png") -> dict:
    data = path.read_bytes() if isinstance(path, Path) else path
    response = http.post("/gradio_api/upload", files={"files": (name, data, "application/octet-stream")})
    assert response.status_code == 200, response.text
    return {"path": response.json()[0], "orig_name": name, "meta": {"_type": "gradio.FileData"}}


def call(http: httpx.Client, name: str, data: list) -> tuple[str, object]:
    """POST /gradio_api/call/<name>, read its stream: ("complete" | "error" | "http <code>", payload)."""
    response = http.post(f"/gradio_api/call/{name}", json={"data": data})
    if response.status_code != 200:
        return f"http {response.status_code}", response.text
    event_id, kind = response.json()["event_id"], "none"
    with http.stream("GET", f"/gradio_api/call/{name}/{event_id}") as stream:
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kind = line[len("event: "):]
            elif line.startswith("data: ") and kind in ("complete", "error"):
                return kind, json.loads(line[len("data: "):])
    return kind, None


# --------------------------------------------------------------------------- 1. sessions


def test_minted_sessions_cost_bounded_memory_and_a_students_state_stays(server):
    """The review: every minted session kept ~0.45 MB (10,000: +4.5 GB), the client chose its size, and after
    ~2,900 other sessions a student's Why and Download had lost their state. Here: 400 minted sessions (twice
    the server's VIT_MAX_SESSIONS of 200) from one address, while a student's analysis is kept."""
    from gradio_client import Client, handle_file

    attacker = client(server, "10.0.0.66")
    student = Client(server, verbose=False, headers={"X-Forwarded-For": "10.0.0.2"})  # one session, as a page
    student.predict(handle_file(str(CAT)), *ANALYZE, api_name="/analyze")
    session = uuid.uuid4().hex
    fn = fn_index(attacker, "model_settings")

    def mint(hash_: str, model="ViT-B/32") -> httpx.Response:
        return attacker.post("/gradio_api/run/predict", json={"data": [model, 32], "fn_index": fn,
                                                               "session_hash": hash_, "event_data": None})

    assert mint(session).status_code == 200
    before = status_bytes("VmRSS:")
    started = time.monotonic()
    for _ in range(400):
        assert mint(uuid.uuid4().hex).status_code == 200
    grown = status_bytes("VmRSS:") - before
    print(f"400 minted sessions in {time.monotonic() - started:.1f} s: RSS +{grown / 1e6:.1f} MB")
    assert grown < 60e6, grown  # before: ~0.45 MB each, +180 MB for 400
    holder = _holder()
    assert len(holder.session_data) <= 200 + 1 and len(state.SESSIONS._sessions) <= 200
    # The client's sizes are refused before anything is kept.
    assert mint("h" * 65).status_code == 400
    assert mint("x" * 50_000_000).status_code in (400, 413)
    assert mint(uuid.uuid4().hex, "m" * 5_000_000).status_code == 413
    assert attacker.get("/gradio_api/queue/data", params={"session_hash": "<script>"}).status_code == 400
    # The student's analysis is still theirs: /redraw draws it again (its key lives in the student's session).
    redrawn = student.predict(api_name="/redraw")
    assert redrawn and any(isinstance(v, str) and v.endswith(".png") for v in redrawn), redrawn


def _holder():
    from vit.ui.sessions import LeanStateHolder

    holders = [o for o in _live_demos() if isinstance(getattr(o, "state_holder", None), LeanStateHolder)]
    assert holders, "the server does not use the lean session state"
    return holders[-1].state_holder


def _live_demos() -> list:
    import gc

    import gradio as gr

    return [o for o in gc.get_objects() if isinstance(o, gr.Blocks) and getattr(o, "server_app", None) is not None
            and getattr(o, "is_running", False)]


def test_a_students_session_survives_another_clients_flood_of_sessions():
    """The ledger alone, at the review's scale: 10,000 sessions minted by one address do not evict a
    student who was active half an hour ago."""
    from vit.serve.sessions import SessionLedger

    now = [0.0]
    ledger = SessionLedger(max_sessions=2000, per_client=64, idle_s=3600, clock=lambda: now[0])
    assert ledger.seen("student", "10.0.0.2") == []
    evicted = []
    for i in range(10_000):
        now[0] = 1800 * i / 10_000
        evicted += ledger.seen(f"m{i}", "10.0.0.66")
    assert "student" in ledger and len(ledger) == 65 and len(evicted) == 10_000 - 64
    now[0] = 3601
    assert ledger.seen("someone", "10.0.0.3") and "student" not in ledger  # idle for an hour: gone


# --------------------------------------------------------------------------- 2. decoding


def _progressive_with_scans(scans: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1000, 1000), "red").save(out, "JPEG", progressive=True)
    data = out.getvalue()
    last = data.rfind(b"\xff\xda")
    return data[:-2] + data[last:-2] * scans + data[-2:]


@pytest.fixture(scope="module")
def review_files(tmp_path_factory) -> dict[str, Path]:
    """The review's table at 8000 x 8000 where it costs memory (made once: ~8 s)."""
    folder = tmp_path_factory.mktemp("review")
    make = {
        "rgba-lossless.webp": lambda p: Image.new("RGBA", (8000, 8000), (10, 200, 30, 128)).save(
            p, "WEBP", lossless=True, method=0),
        "rgba.png": lambda p: Image.new("RGBA", (8000, 8000), (10, 200, 30, 128)).save(p, "PNG", compress_level=1),
        "mode-i.tiff": lambda p: Image.new("I", (8000, 8000), 70000).save(p, "TIFF", compression="tiff_adobe_deflate"),
        "red.j2k": lambda p: Image.new("RGB", (2000, 2000), "red").save(p, "JPEG2000"),
        "scans.jpg": lambda p: p.write_bytes(_progressive_with_scans(1000)),
    }
    paths = {}
    for name, write in make.items():
        paths[name] = folder / name
        write(paths[name])
    return paths


class Probe:
    """GET / every 50 ms in a thread; the longest answer seen."""

    def __init__(self, url: str):
        self.url, self.longest, self._stop = url, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        with httpx.Client(base_url=self.url, timeout=30) as http:
            while not self._stop.is_set():
                t = time.perf_counter()
                http.get("/")
                self.longest = max(self.longest, time.perf_counter() - t)
                self._stop.wait(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)


def test_hostile_images_cost_bounded_memory_and_freeze_nothing(server, review_files):
    """The review: a 38-byte WebP +2.0 GB, a 372 KB TIFF +3.2 GB, PNG RGBA +1.5 GB, a 730-byte JPEG 2000 froze
    the server 3.7 s, 1,000 repeated scans took 42 s of CPU. Each file here through /analyze with the peak
    RSS (VmHWM, reset before) and a probe of / throughout."""
    http = client(server, "10.0.0.7")
    results = {}
    with Probe(server) as probe:
        for name, path in review_files.items():
            payload = upload(http, path, name)
            Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
            base, t = status_bytes("VmRSS:"), time.perf_counter()
            kind, answer = call(http, "analyze", [payload, *ANALYZE])
            results[name] = (kind, (status_bytes("VmHWM:") - base) / 1e9, time.perf_counter() - t, answer)
    for name, (kind, peak_gb, seconds, _) in results.items():
        print(f"{name}: {kind}, peak +{peak_gb:.2f} GB, {seconds:.2f} s")
    print(f"the probe's longest answer: {probe.longest:.3f} s")
    for name, (_, peak_gb, seconds, _) in results.items():
        assert peak_gb < 0.45, (name, peak_gb)  # target 0.3; before: up to +3.2 GB
        assert seconds < 20, (name, seconds)  # target 1 s on a quiet machine; before: 42 s for the scans
    for refused in ("red.j2k", "scans.jpg", "rgba-lossless.webp"):
        kind, answer = results[refused][0], results[refused][3]
        assert kind == "error" and answer and len(answer["error"]) < 400, (refused, answer)
    assert "JPEG 2000" in results["red.j2k"][3]["error"]
    assert results["mode-i.tiff"][0] == "complete" and results["rgba.png"][0] == "complete"
    assert probe.longest < 1.5, probe.longest  # target 0.2 s; before: 3.7 s frozen per JPEG 2000


# --------------------------------------------------------------------------- 4. disk


def _files_under(folder: str) -> dict[Path, int]:
    return {p: p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()}


def test_one_image_per_upload_and_unused_routes_are_closed(server):
    """The review: 1,000 files in one request (1.14 GB in 6.6 s), deep links writing ~220 KB per session,
    the development reload route answering in production."""
    http = client(server, "10.0.0.8")
    before = _files_under(get_upload_folder())
    small = CAT.read_bytes()
    many = http.post("/gradio_api/upload", files=[("files", (f"{i}.jpg", small, "image/jpeg")) for i in range(5)])
    assert many.status_code == 413 and "one image" in many.json()["detail"]
    new = set(_files_under(get_upload_folder())) - set(before)
    assert not [p for p in new if p.parent != Path(get_upload_folder())], new  # nothing stored (a partial is swept)
    assert http.get("/gradio_api/deep_link", params={"session_hash": uuid.uuid4().hex}).status_code == 404
    assert http.get("/gradio_api/dev/reload").status_code == 404
    host, port = server.split("//")[1].strip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:  # a 30 MB body declared, none sent
        raw.sendall(f"POST /gradio_api/upload HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: multipart/form-data; "
                    f"boundary=b\r\nContent-Length: {30 * 2**20}\r\n\r\n".encode())
        assert raw.recv(100).startswith(b"HTTP/1.1 413"), "refused before the body"


def test_the_upload_folder_stays_under_its_cap(server):
    """VIT_UPLOAD_GB=0.05 here: 12 uploads of 8 MB from one client, as fast as it can; the folder never holds
    more than the cap (before: 20 requests x 3 x 19 MB = 1.14 GB in 6.6 s)."""
    http = client(server, "10.0.0.9")
    blob = os.urandom(8 * 10**6)
    codes, most = [], 0
    for i in range(12):
        codes.append(http.post("/gradio_api/upload", files={"files": (f"{i}.png", blob, "image/png")}).status_code)
        most = max(most, sum(_files_under(get_upload_folder()).values()))
    print(f"uploads: {codes}; the folder held at most {most / 1e6:.0f} MB")
    assert most <= 0.05e9 + 8.1e6, most  # the cap, and the last upload being moved into place
    assert 507 in codes and codes[0] == 200
    assert http.post("/gradio_api/upload", files={"files": ("x.png", blob, "image/png")}).json()["detail"] == \
        upload_space.FULL
    for path in _files_under(get_upload_folder()):  # the next tests upload again
        if path.stat().st_size == len(blob):
            path.unlink()


def test_an_aborted_upload_leaves_nothing_after_the_sweep(server, monkeypatch):
    """The review: 30 uploads that sent 2 MB of a declared 19 MB left 30 partial files, for good."""
    host, port = server.split("//")[1].strip("/").split(":")
    before = set(_files_under(get_upload_folder()))
    for _ in range(3):
        with socket.create_connection((host, int(port))) as raw:
            head = (f"POST /gradio_api/upload HTTP/1.1\r\nHost: {host}:{port}\r\n"
                    "Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: 19000000\r\n\r\n"
                    '--zz\r\nContent-Disposition: form-data; name="files"; filename="a.png"\r\n\r\n')
            raw.sendall(head.encode() + b"\0" * 2_000_000)
            time.sleep(0.3)
    time.sleep(1.0)
    left = set(_files_under(get_upload_folder())) - before
    monkeypatch.setattr(upload_space, "PARTIAL_AGE_S", 0.0)
    upload_space.UploadSpace(get_upload_folder()).sweep()
    print(f"aborted uploads: {len(left)} partial files, {len(set(_files_under(get_upload_folder())) & left)} after")
    assert not set(_files_under(get_upload_folder())) & left


# --------------------------------------------------------------------------- 3. the queue


def test_one_client_cannot_fill_the_queue(server):
    """The review: one client minting a session per job filled gradio's queue of 64 (10 of 10 students refused,
    then a 170 s wait). VIT_JOBS_PER_CLIENT=3 here: the flood gets 3 places, a student is served."""
    attacker, student = client(server, "10.0.0.66"), client(server, "10.0.0.2")
    photo = upload(attacker, CAT, "cat.jpg")
    fn = fn_index(attacker, "analyze_now")
    codes = []
    for _ in range(10):
        codes.append(attacker.post("/gradio_api/queue/join", json={
            "data": [photo, "ViT-B/16", 16, 2, 5, "mean", 0, 2, 1], "fn_index": fn,
            "session_hash": uuid.uuid4().hex, "event_data": None}).status_code)
    assert codes.count(429) >= 7 and codes.count(200) <= 3, codes
    started = time.monotonic()
    kind, payload = call(student, "analyze", [upload(student, CAT, "cat.jpg"), *ANALYZE])
    print(f"flood: {codes.count(200)} accepted, {codes.count(429)} refused; the student served in "
          f"{time.monotonic() - started:.1f} s")
    assert kind == "complete", payload


# --------------------------------------------------------------------------- also


def test_a_foreign_host_or_origin_is_refused_on_a_loopback_server(server):
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 must not reach a loopback server."""
    http = client(server, "10.0.0.10")
    assert http.get("/config", headers={"Host": "evil.example:7860"}).status_code == 403
    assert http.get("/config", headers={"Origin": "http://evil.example"}).status_code == 403
    refused = http.post("/gradio_api/upload", headers={"Origin": "http://evil.example"},
                        files={"files": ("cat.jpg", CAT.read_bytes(), "image/jpeg")})
    assert refused.status_code == 403
    port = server.rstrip("/").rsplit(":", 1)[1]
    assert http.get("/config", headers={"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}) \
        .status_code == 200


def test_each_server_has_its_own_upload_folder_and_removes_the_dead_ones(tmp_path):
    """The review: after kill -9, 300 MB of a dead server's uploads and pictures stayed for good. `python app.py`
    removes the folders of servers that are gone, keeps its uploads in its own, and removes that at SIGTERM."""
    import subprocess

    from conftest import start_app_process

    root = tmp_path / "gradio"
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = root / f"vit-app-{dead.pid}-killed"
    (left / "abc").mkdir(parents=True)
    (left / "abc" / "photo.png").write_bytes(b"\0" * 1000)
    env = {**os.environ, "TMPDIR": str(tmp_path), "GRADIO_TEMP_DIR": str(root)}
    server, url = start_app_process(env, tmp_path / "server.log")
    try:
        assert not left.exists(), "the dead server's folder is still there"
        with httpx.Client(base_url=url, timeout=60) as http:
            stored = Path(upload(http, CAT, "cat.jpg")["path"])
        own = [p for p in root.iterdir() if p.name.startswith(f"vit-app-{server.pid}-")]
        assert len(own) == 1 and stored.is_relative_to(own[0]), (own, stored.parent)
        deadline = time.monotonic() + 60  # gradio's launch() ends with requests of its own: let it finish
        while "public link" not in (tmp_path / "server.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        server.terminate()
        assert server.wait(60) == 0
    finally:
        if server.poll() is None:
            server.kill()
    assert not own[0].exists() and not [p for p in root.rglob("*") if p.is_file()]  # gradio's empty folders stay
