"""vit.serve: the upload gate, the fair model queue, memory trimming and the picture folder (issue 8)."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from vit import i18n
from vit.errors import InputError
from vit.serve.files import UPLOAD_AGAIN, PictureFolder, picture_budgets, proven_file, remove_stale_folders
from vit.serve.memory import rss_bytes, trim_memory
from vit.serve.queue import Busy, FairQueue, Replaced

pytestmark = pytest.mark.server

# --------------------------------------------------------------------------- the upload gate


@pytest.fixture
def roots(tmp_path):
    uploads, assets, private = tmp_path / "uploads", tmp_path / "assets", tmp_path / "private"
    for folder in (uploads, assets, private):
        folder.mkdir()
    (uploads / "cat.jpg").write_bytes(b"a picture")
    (assets / "dog.png").write_bytes(b"an example")
    (private / "secret.png").write_bytes(b"not yours")
    (uploads / "link.png").symlink_to(private / "secret.png")
    (uploads / "sub").mkdir()
    return uploads, assets, private


def test_files_under_the_roots_are_proven(roots):
    uploads, assets, _ = roots
    assert proven_file(str(uploads / "cat.jpg"), [uploads, assets]) == (uploads / "cat.jpg").resolve()
    assert proven_file(str(assets / "dog.png"), [uploads, assets]) == (assets / "dog.png").resolve()
    assert proven_file(str(uploads / "sub" / ".." / "cat.jpg"), [uploads]) == (uploads / "cat.jpg").resolve()


@pytest.mark.parametrize("spelling", [
    "{private}/secret.png", "{private}/missing.png", "{private}", "{uploads}/link.png", "{uploads}/sub",
    "{uploads}/../private/secret.png", "{uploads}/missing.jpg", "/etc/passwd", "/etc/shadow", "/etc",
    "file://{uploads}/cat.jpg", "http://127.0.0.1/cat.jpg", "data:image/png;base64,AAAA", "", "{uploads}/cat.jpg\0",
])
def test_everything_else_gets_one_sentence(roots, spelling):
    uploads, assets, private = roots
    path = spelling.format(uploads=uploads, private=private)
    with pytest.raises(InputError) as info:
        proven_file(path, [uploads, assets])
    assert str(info.value) == i18n.text(UPLOAD_AGAIN)


def test_relative_paths_resolve_from_the_working_directory(roots, monkeypatch):
    uploads, assets, private = roots
    monkeypatch.chdir(private)
    with pytest.raises(InputError, match="upload the image again"):
        proven_file("secret.png", [uploads, assets])
    monkeypatch.chdir(uploads)
    assert proven_file("cat.jpg", [uploads]) == (uploads / "cat.jpg").resolve()


@pytest.mark.parametrize("value", [None, 3, {"path": "x"}, b"/etc/passwd"])
def test_only_strings_are_paths(roots, value):
    with pytest.raises(InputError, match="upload the image again"):
        proven_file(value, roots[:2])


# --------------------------------------------------------------------------- the fair queue


def run_in_thread(queue: FairQueue, session: str, seconds: float, log: list, hold: threading.Event | None = None):
    """A request: waits for its turn, records when it ran, optionally holds the model until released."""
    outcome = {}

    def request():
        try:
            with queue.turn(session, seconds):
                log.append(session)
                if hold is not None:
                    hold.wait(10)
            outcome["result"] = "ran"
        except (Busy, Replaced) as exc:
            outcome["result"] = type(exc).__name__

    thread = threading.Thread(target=request)
    thread.start()
    return thread, outcome


def wait_for(predicate, timeout=10.0):
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_a_session_cannot_start_a_second_run_while_its_first_runs():
    queue, log, hold = FairQueue(), [], threading.Event()
    first, first_out = run_in_thread(queue, "tab-a", 1.0, log, hold)
    wait_for(lambda: log == ["tab-a"])
    with pytest.raises(Busy, match="still running"):
        with queue.turn("tab-a", 1.0):
            pass
    hold.set()
    first.join()
    assert first_out["result"] == "ran"
    with queue.turn("tab-a", 1.0):  # and once it is done, the tab may run again
        pass


def test_a_newer_waiting_request_replaces_the_older_one():
    queue, log, hold = FairQueue(), [], threading.Event()
    running, _ = run_in_thread(queue, "tab-a", 1.0, log, hold)
    wait_for(lambda: log == ["tab-a"])
    older, older_out = run_in_thread(queue, "tab-b", 1.0, log)
    wait_for(lambda: queue.waiting == 1)
    newer, newer_out = run_in_thread(queue, "tab-b", 2.0, log)
    older.join(5)
    assert older_out["result"] == "Replaced" and queue.waiting == 1
    hold.set()
    for t in (running, newer):
        t.join(5)
    assert newer_out["result"] == "ran" and log == ["tab-a", "tab-b"]  # tab-b ran once, the newest


def test_cheap_requests_overtake_a_line_of_expensive_ones():
    queue, log, hold = FairQueue(), [], threading.Event()
    threads = [run_in_thread(queue, "expensive-0", 12.0, log, hold)[0]]
    wait_for(lambda: log == ["expensive-0"])
    for i in range(1, 6):
        threads.append(run_in_thread(queue, f"expensive-{i}", 12.0, log)[0])
        wait_for(lambda i=i: queue.waiting == i)
    threads.append(run_in_thread(queue, "cheap", 0.4, log)[0])
    wait_for(lambda: queue.waiting == 6)
    hold.set()
    for t in threads:
        t.join(10)
    assert log[:2] == ["expensive-0", "cheap"]  # next after the one running, not after all five
    assert log[2:] == [f"expensive-{i}" for i in range(1, 6)]  # the rest in order of arrival


def test_an_expensive_request_gets_its_turn_once_it_has_waited_as_long_as_it_takes():
    queue, log, hold = FairQueue(), [], threading.Event()
    threads = [run_in_thread(queue, "running", 1.0, log, hold)[0]]
    wait_for(lambda: log == ["running"])
    threads.append(run_in_thread(queue, "old-expensive", 0.05, log)[0])
    wait_for(lambda: queue.waiting == 1)
    time.sleep(0.1)  # it has now waited longer than it will take
    threads.append(run_in_thread(queue, "new-cheap", 0.01, log)[0])
    wait_for(lambda: queue.waiting == 2)
    hold.set()
    for t in threads:
        t.join(10)
    assert log == ["running", "old-expensive", "new-cheap"]


def test_the_queue_recovers_from_an_exception_in_a_run():
    queue = FairQueue()
    with pytest.raises(RuntimeError):
        with queue.turn("tab-a", 1.0):
            raise RuntimeError("the model failed")
    with queue.turn("tab-a", 1.0):
        pass
    assert queue.waiting == 0 and queue._running == []


# --------------------------------------------------------------------------- memory and pictures


def test_trim_and_rss():
    assert rss_bytes() > 10_000_000  # this process has torch loaded: tens of MB at least
    blob = bytearray(200 * 2**20)
    del blob
    trim_memory()  # no error; where glibc exists it returns freed pages
    assert rss_bytes("999999999") == 0  # no such process


def test_picture_folder_is_pruned_in_the_background_and_removed(tmp_path):
    folder = PictureFolder(max_age_s=0.2, every_s=0.1, parent=str(tmp_path))
    assert folder.path.name.startswith(f"vit-app-{os.getpid()}-")
    path = folder.new_path()
    path.write_bytes(b"png")
    wait_for(lambda: not path.exists(), timeout=5)  # no request needed: the thread removed it
    folder.remove()
    assert not folder.path.exists()


def test_the_next_server_reads_its_own_picture_budgets(tmp_path, monkeypatch):
    """The picture folder is the server's: a server started with small budgets (the attack tests' 2 MB an address)
    leaves them behind at its end, and the next one reads the environment again. Left behind, they evicted a class's
    pictures before its 16 clients fetched them (a 403 on a loaded machine)."""
    from vit.ui import state  # noqa: PLC0415 - the app's state, made on first use

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    monkeypatch.setenv("VIT_PICTURES_ADDRESS_MB", "2")
    state.reset()
    small = state.picture_folder()
    assert small.budgets["address"] == 2_000_000
    monkeypatch.delenv("VIT_PICTURES_ADDRESS_MB")
    state.reset()
    assert not small.path.exists()  # its files went with it
    assert state.picture_folder().budgets == picture_budgets({})
    state.reset()


def test_folders_of_dead_servers_are_removed_at_start(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = tmp_path / f"vit-app-{dead.pid}-abc123"
    alive = tmp_path / f"vit-app-{os.getppid()}-def456"  # the pytest runner's parent is alive
    old = tmp_path / "vit-app-k2j4h5g6"  # an older version's, without a pid
    young = tmp_path / "vit-app-q1w2e3r4"
    other = tmp_path / "someone-else"
    for folder in (gone, alive, old, young, other):
        folder.mkdir()
        (folder / "x.png").write_bytes(b"png")
    os.utime(old, (time.time() - 2 * 3600,) * 2)
    removed = remove_stale_folders(tmp_path)
    assert sorted(removed) == sorted([gone, old])
    assert alive.exists() and young.exists() and other.exists()
    PictureFolder(parent=str(tmp_path)).remove()  # a new server cleans up on its own too
    assert not gone.exists()


def test_sigterm_removes_the_picture_folder_and_gradio_cache(tmp_path, torch_home):
    """`python app.py`, one analysis, then SIGTERM (systemd, docker stop): nothing is left behind."""
    from conftest import ROOT, start_app_process
    from gradio_client import Client, handle_file

    env = {**os.environ, "TMPDIR": str(tmp_path), "GRADIO_TEMP_DIR": str(tmp_path / "gradio")}
    server, url = start_app_process(env, tmp_path / "server.log")
    try:
        Client(url, verbose=False).predict(image=handle_file(str(ROOT / "assets" / "cat.jpg")), model="ViT-B/32",
                                           patch_size=32, depth=1, api_name="/analyze")
        # The pictures are written where gradio serves them from: in this server's folder under gradio's root.
        assert list((tmp_path / "gradio").glob("vit-app-*/vit-app-*/*.jpg")), "the app wrote no pictures"
        server.terminate()  # SIGTERM
        assert server.wait(60) == 0
    finally:
        if server.poll() is None:
            server.kill()
    assert not list(tmp_path.glob("vit-app-*")) and not list((tmp_path / "gradio").glob("vit-app-*"))
    examples = {p.name for p in (ROOT / "assets").iterdir()}
    left = [p for p in (tmp_path / "gradio").rglob("*") if p.is_file() and p.name not in examples]
    assert left == [], left  # the users' pictures are gone; gradio keeps its copies of the examples
