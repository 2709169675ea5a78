"""An attacker on the same network, with a raw HTTP client (httpx), not gradio_client (issue 8).

A private image lies outside gradio's upload folder. Crafted payloads name it in
every way a path can be written (absolute, relative, with ``..`` from the upload
folder, through a symlink placed in the upload folder, with and without ``meta``,
as a URL) and go to every endpoint ``/gradio_api/info`` lists, to the internal
events by name, and to the internal events the way the page calls them (the queue,
by number). None may return an analysis or a picture, and the messages for an
existing and a missing path must be the same. A genuine upload through the same
client is analysed, so the harness can tell success from refusal.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import uuid
from pathlib import Path

import httpx
import numpy as np
import pytest
from conftest import ROOT, running_app
from gradio.utils import get_upload_folder
from PIL import Image, ImageDraw

from vit.errors import InputError
from vit.ui import inputs

pytestmark = [pytest.mark.server, pytest.mark.filterwarnings("ignore::DeprecationWarning:gradio.queueing")]

SETTINGS = ["ViT-B/32", 32, 1, 5, "mean", 0.0, 1, 1, 0.6, "cividis"]  # /analyze after the image
LEAKS = ("not found", "directory", "exist", " mb", "shadow", "could not read", "decode", "permission")


@pytest.fixture(scope="module")
def server(torch_home):
    with running_app() as url, httpx.Client(base_url=url, timeout=120) as client:
        yield client


TARGETS = ("image", "missing", "folder", "text", "big")


@pytest.fixture(scope="module")
def secrets(tmp_path_factory):
    """A private image outside the upload folder, a missing sibling, a folder, a text file, a big file."""
    folder = tmp_path_factory.mktemp("private")
    image = folder / "private.png"
    Image.new("RGB", (64, 64), (255, 0, 255)).save(image)
    (folder / "notes.txt").write_text("root:x:0:0\n")
    (folder / "big.bin").write_bytes(b"\0" * (21 * 2**20))
    links = Path(get_upload_folder()) / f"attacker-{uuid.uuid4().hex}"
    links.mkdir(parents=True)
    yield {"image": image, "missing": folder / "missing.png", "folder": folder, "text": folder / "notes.txt",
           "big": folder / "big.bin", "links": links}
    shutil.rmtree(links)


def spellings(path: Path, links: Path) -> list[str]:
    """One file named every way an attacker might write it."""
    uploads = Path(get_upload_folder())
    link = links / f"{uuid.uuid4().hex}{path.suffix}"
    link.symlink_to(path)  # a symlink inside the upload folder, leading out of it
    return [
        str(path),
        os.path.relpath(path, os.getcwd()),
        str(uploads) + "/.." * len(uploads.parts) + str(path),
        str(link),
        f"file://{path}",
    ]


def payloads(path: Path, links: Path) -> list:
    """gr.Image payloads naming ``path``: bare dicts, with meta, tagged as gradio's FileData, strings, URLs."""
    out = []
    for spelled in spellings(path, links):
        out += [
            {"path": spelled},
            {"path": spelled, "meta": {}},
            {"path": spelled, "meta": {"_type": "x"}},
            {"path": spelled, "meta": {"_type": "gradio.FileData"}},
            {"path": spelled, "orig_name": "cat.jpg", "meta": {"_type": "gradio.FileData"}},
            {"url": spelled},
            spelled,
        ]
    return out


def events(client: httpx.Client) -> tuple[dict[str, int], dict[str, int]]:
    """(public endpoints -> number of API parameters, internal event names -> fn index)."""
    info = client.get("/gradio_api/info").json()["named_endpoints"]
    public = {name.strip("/"): len(spec["parameters"]) for name, spec in info.items()}
    config = client.get("/config").json()
    private = {d["api_name"]: d["id"] for d in config["dependencies"] if d.get("api_visibility") == "private"}
    return public, private


def call(client: httpx.Client, name: str, data: list) -> tuple[str, object]:
    """POST /gradio_api/call/<name>, then read its event stream: ("complete"|"error"|"http <code>", payload)."""
    response = client.post(f"/gradio_api/call/{name}", json={"data": data})
    if response.status_code != 200:
        return f"http {response.status_code}", response.text
    event_id = response.json()["event_id"]
    kind, payload = "none", None
    with client.stream("GET", f"/gradio_api/call/{name}/{event_id}") as stream:
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kind = line[len("event: "):]
            elif line.startswith("data: ") and kind in ("complete", "error"):
                payload = json.loads(line[len("data: "):])
                break
    return kind, payload


def join(client: httpx.Client, fn_index: int, data: list) -> tuple[bool, object, list[str]]:
    """What the page does: join the queue with an event's number, read the session's stream: whether the event
    succeeded, its output, and the toasts it raised on the way (gr.Warning/gr.Info come as "log" messages)."""
    session = uuid.uuid4().hex
    response = client.post("/gradio_api/queue/join", json={"data": data, "fn_index": fn_index,
                                                            "session_hash": session, "event_data": None})
    response.raise_for_status()
    toasts = []
    with client.stream("GET", "/gradio_api/queue/data", params={"session_hash": session}) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                message = json.loads(line[len("data: "):])
                if message.get("msg") == "log":
                    toasts.append(str(message.get("log")))
                if message.get("msg") == "process_completed":
                    return bool(message.get("success")), message.get("output"), toasts
    raise AssertionError("the queue never answered")


def nothing_changed(output: dict) -> bool:
    """Every output of the event left as it was: gr.skip() (an update that sets nothing), or a state not sent."""
    def unchanged(value) -> bool:
        if isinstance(value, dict):
            return set(value) <= {"__type__", "props"} and all(unchanged(v) for v in value.values())
        return value is None or value == "update"

    return all(unchanged(value) for value in output["data"])


def files_in(value) -> list:
    """Every file (picture) a response carries."""
    if isinstance(value, dict):
        if "path" in value or "url" in value:
            return [value]
        return [f for v in value.values() for f in files_in(v)]
    if isinstance(value, list):
        return [f for v in value for f in files_in(v)]
    return []


def message(kind: str, payload) -> str:
    return json.dumps(payload, sort_keys=True) if not isinstance(payload, str) else payload


def assert_refused_alike(results: dict[str, tuple[str, object]], secrets) -> None:
    """Nothing came back, and what was said does not depend on what the path is."""
    for label, (kind, payload) in results.items():
        assert kind != "complete" or not files_in(payload), (label, payload)
        text = message(kind, payload).lower()
        assert str(secrets["folder"]).lower() not in text, (label, text)
        assert not any(word in text for word in LEAKS), (label, text)
    said = {message(*result) for result in results.values()}
    assert len(said) == 1, said  # existing file, missing file, folder, text, big file: one answer


def test_a_genuine_upload_is_analysed(server):
    """The control: the same raw client, a real upload, a full analysis with pictures."""
    with open(ROOT / "assets" / "cat.jpg", "rb") as f:
        uploaded = server.post("/gradio_api/upload", files={"files": ("cat.jpg", f, "image/jpeg")}).json()[0]
    kind, payload = call(server, "analyze", [{"path": uploaded, "meta": {"_type": "gradio.FileData"}}, *SETTINGS])
    assert kind == "complete" and len(files_in(payload)) >= 5, (kind, payload)
    kind, payload = call(server, "analyze", [{"path": str(ROOT / "assets" / "cat.jpg")}, *SETTINGS])
    assert kind == "complete", (kind, payload)  # the app's own examples may be named


def test_analyze_reads_no_file_outside_the_uploads(server, secrets):
    crafted = {t: payloads(secrets[t], secrets["links"]) for t in TARGETS}
    assert len(crafted["image"]) == 35
    for i in range(len(crafted["image"])):
        # The same spelling, five different truths about the path: no analysis, one identical answer.
        results = {t: call(server, "analyze", [crafted[t][i], *SETTINGS]) for t in TARGETS}
        for target, (kind, payload) in results.items():
            assert kind != "complete", (target, crafted[target][i], payload)
        assert_refused_alike(results, secrets)


def test_data_and_web_urls_are_refused(server, secrets):
    png = base64.b64encode(secrets["image"].read_bytes()).decode()
    for crafted in (f"data:image/png;base64,{png}", {"path": f"data:image/png;base64,{png}"},
                    {"path": "http://127.0.0.1:9/cat.jpg"}, {"url": "http://127.0.0.1:9/cat.jpg"},
                    {"path": "https://example.com/cat.jpg", "meta": {"_type": "gradio.FileData"}}):
        kind, payload = call(server, "analyze", [crafted, *SETTINGS])
        assert kind != "complete", (crafted, payload)


def test_every_listed_endpoint_refuses_crafted_paths(server, secrets):
    """Whatever a listed endpoint takes, a path in it never comes back as a picture."""
    public, _ = events(server)
    assert "analyze" in public
    for name, count in public.items():
        for crafted in payloads(secrets["image"], secrets["links"])[:7]:
            for position in range(count):
                data = [None] * count
                data[position] = crafted
                kind, payload = call(server, name, data)
                assert not files_in(payload) or name != "analyze", (name, position, crafted, payload)
                assert not any(str(f.get("path", "")).endswith(".png") and "private" in str(f) for f in
                               files_in(payload)), (name, crafted, payload)
                assert not any(word in message(kind, payload).lower() for word in LEAKS[:3]), (name, payload)


def test_internal_events_cannot_be_called_by_name(server, secrets):
    _, private = events(server)
    assert {"analyze_new_image", "analyze_new_model", "analyze_now", "click_patch_grid", "redraw_page"} <= set(private)
    for name in private:
        for route in (f"/gradio_api/call/{name}", f"/gradio_api/call/v2/{name}", f"/gradio_api/run/{name}",
                      f"/gradio_api/api/{name}"):
            response = server.post(route, json={"data": [{"path": str(secrets["image"])}, *SETTINGS]})
            assert response.status_code == 404, (route, response.text)


def test_internal_events_as_the_page_calls_them_refuse_crafted_paths(server, secrets):
    """The page joins the queue by number; that cannot be closed, so the gate must hold there too."""
    _, private = events(server)
    auto = [private[n] for n in ("analyze_new_image", "analyze_new_patch_size", "analyze_new_depth",
                                 "analyze_new_model", "analyze_now")]
    page_settings = [*SETTINGS[:8], None]  # the image, then model ... head, then the chain's gr.State (explicit)
    success, output, toasts = join(server, private["analyze_now"], [{"path": str(ROOT / "assets" / "cat.jpg")},
                                                                    *page_settings])
    assert success and not toasts and not nothing_changed(output), output  # the control: an analysis is told apart
    for fn_index in auto:
        for i in range(5):
            results = {}
            for target in TARGETS:
                crafted = payloads(secrets[target], secrets["links"])[i]
                success, output, toasts = join(server, fn_index, [crafted, *page_settings])
                # gradio refuses a FileData it did not upload before our handler runs (the event fails); what reaches
                # the page's analyses is refused by them with a toast that changes nothing, and the event succeeds
                # (events.page_event: gradio's page never runs a failed always_last event again).
                if success:
                    assert nothing_changed(output) and len(toasts) == 1, (fn_index, crafted, output, toasts)
                    results[target] = ("refused", toasts[0])
                else:
                    assert not files_in(output) and not toasts, (fn_index, crafted, output, toasts)
                    results[target] = ("refused", output["error"])
            assert_refused_alike(results, secrets)


def test_messages_never_show_server_paths(server, tmp_path):
    """A broken upload is named as the student named it, never by the server's path."""
    broken = tmp_path / "holiday.jpg"
    broken.write_text("not a picture")
    with open(broken, "rb") as f:
        uploaded = server.post("/gradio_api/upload", files={"files": ("holiday.jpg", f, "image/jpeg")}).json()[0]
    kind, payload = call(server, "analyze", [{"path": uploaded, "orig_name": "holiday.jpg",
                                              "meta": {"_type": "gradio.FileData"}}, *SETTINGS])
    assert kind == "error" and "'holiday.jpg'" in payload["error"], payload
    assert get_upload_folder() not in payload["error"] and "/tmp" not in payload["error"]


def test_a_missing_file_is_one_sentence_that_names_no_server_path(server, secrets, tmp_path):
    """The review (Low 13): an evicted or pruned picture answered ``403 File not allowed: <the server's absolute
    path>``. Now a file that was uploaded and is gone, one that never was, and one gradio does not serve (a private
    image, a folder) get one answer, the same for each, that names no path; in the page's language."""
    from vit import i18n

    picture = tmp_path / "evicted.png"
    Image.new("RGB", (8, 8)).save(picture)
    with open(picture, "rb") as f:
        uploaded = Path(server.post("/gradio_api/upload", files={"files": ("evicted.png", f, "image/png")}).json()[0])
    assert server.get(f"/gradio_api/file={uploaded}").status_code == 200  # the control: served while it is there
    uploaded.unlink()  # evicted, as the upload folder's cap or the picture folder's pruning does
    folders = {str(uploaded.parent), str(uploaded.parent.parent), get_upload_folder(), os.environ["GRADIO_TEMP_DIR"],
               str(secrets["folder"]), "/tmp"}
    asked = [f"/gradio_api/file={uploaded}", f"/gradio_api/file={uploaded.parent / uuid.uuid4().hex}.png",
             f"/gradio_api/file={secrets['image']}", f"/gradio_api/file={secrets['folder']}",
             f"/gradio_api/file/{uploaded}"]
    answers = {(r.status_code, r.text) for r in (server.get(path) for path in asked)}
    assert answers == {(403, json.dumps({"detail": i18n.text("refusal-file-gone")}))}, answers
    assert not any(folder in text for _, text in answers for folder in folders), answers
    zh = server.get(asked[0], headers={"cookie": "vit_lang=zh"})
    assert zh.status_code == 403 and zh.json()["detail"] == i18n.text("refusal-file-gone", "zh")
    assert server.head(asked[0]).status_code == 403


def test_an_uploads_own_name_is_escaped_and_cut_in_messages(tmp_path):
    """The review: a broken upload's name reached the toast as HTML (gradio renders toasts as sanitized HTML,
    so <img src=...> fetched another origin) and in full (a 10 MB name, 10 MB into the reply and the log)."""
    from vit.errors import InputError
    from vit.ui import inputs

    broken = tmp_path / "upload.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    name = "<img src=\\\\127.0.0.1:9\\leak onerror=alert(1)>.png" + "x" * 10_000_000
    with pytest.raises(InputError) as err:
        inputs.load_image(str(broken), name)
    message = str(err.value)
    assert "<img" not in message and "&lt;img" in message
    assert len(message) < 400 and str(tmp_path) not in message


def data_url(image: Image.Image, fmt: str = "PNG") -> str:
    buffer = io.BytesIO()
    image.save(buffer, fmt)
    return f"data:image/{fmt.lower()};base64," + base64.b64encode(buffer.getvalue()).decode()


def a_drawing(size: int = inputs.DRAWING_PX) -> Image.Image:
    image = Image.new("RGB", (size, size), "white")
    ImageDraw.Draw(image).ellipse((60, 60, 190, 190), outline="black", width=8)
    return image


def test_the_canvas_is_a_drawing_or_a_clear_refusal():
    """Issue 40: the page's canvas comes as a data: URL; only a PNG or JPEG of the canvas's size is decoded (its
    size read from the header first), a blank one is 'empty', and nothing else is read as a drawing."""
    drawn = a_drawing()
    assert np.array_equal(np.asarray(inputs.drawing(data_url(drawn))), np.asarray(drawn))
    assert inputs.drawing(data_url(drawn, "JPEG")).size == drawn.size
    for empty in ("", None, data_url(Image.new("RGB", drawn.size, "white")),
                  data_url(Image.new("RGB", drawn.size, "white"), "JPEG")):
        with pytest.raises(InputError) as refused:
            inputs.drawing(empty)
        assert refused.value.key == "refusal-empty-canvas"
    huge = []
    for side in (5_000, 16_000):  # under the pixel limits (the size stops it), over it (a bomb): neither decoded
        bomb = io.BytesIO()
        Image.new("1", (side, side)).save(bomb, "PNG")
        huge.append("data:image/png;base64," + base64.b64encode(bomb.getvalue()).decode())
        assert len(huge[-1]) < inputs.MAX_DRAWING_CHARS
    for crafted in (data_url(a_drawing(255)), *huge, data_url(drawn).replace("image/png", "image/svg+xml"),
                    "data:image/png;base64,not base64!", "data:image/png;base64," + "A" * inputs.MAX_DRAWING_CHARS,
                    str(ROOT / "assets" / "cat.jpg"), {"path": str(ROOT / "assets" / "cat.jpg")}, 12):
        with pytest.raises(InputError) as refused:
            inputs.drawing(crafted)
        assert refused.value.key in ("refusal-not-a-drawing", "refusal-bomb"), (str(crafted)[:40], refused.value)


def test_the_drawn_event_as_the_page_calls_it_returns_the_drawing_and_refuses_paths(server, secrets):
    """The page's drawn event by number: a drawing comes back as the image; a path, in any spelling, never opens."""
    _, private = events(server)
    success, output, _ = join(server, private["drawn"], [data_url(a_drawing())])
    assert success and len(files_in(output)) == 1, output  # the control: the drawing, as the image's new file
    results = {}
    for target in TARGETS:
        for crafted in payloads(secrets[target], secrets["links"])[:7]:
            success, output, _ = join(server, private["drawn"], [crafted])
            assert not success and not files_in(output), (crafted, output)
            results.setdefault(target, ("error", output["error"]))
    assert_refused_alike(results, secrets)
