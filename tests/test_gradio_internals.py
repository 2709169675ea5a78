"""gradio's private objects are used in one module only, checked at start (issue 38): take any of them away and the
server refuses to start, with one sentence naming it; nothing falls back silently.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gradio
import pytest
from conftest import free_port
from gradio import context, queueing, state_holder

from vit.ui import gradio_internals

ROOT = Path(__file__).resolve().parents[1]

# Each private object the module uses, taken away as an upgrade might: (where, its name).
TAKEN_AWAY = [
    (state_holder.StateHolder, "delete_state"),
    (state_holder.StateHolder, "set_blocks"),
    (state_holder.SessionState, "_update_config"),
    (context.LocalContext, "event_id"),
    (queueing.Queue, "clean_events"),
    (gradio.Blocks, "preprocess_data"),
]


def test_the_installed_gradio_has_everything():
    gradio_internals.check()


@pytest.mark.parametrize(("owner", "name"), TAKEN_AWAY, ids=[f"{o.__name__}.{n}" for o, n in TAKEN_AWAY])
def test_a_missing_private_object_stops_the_start_with_its_name(monkeypatch, owner, name):
    monkeypatch.delattr(owner, name)
    with pytest.raises(gradio_internals.GradioInternalsMissing, match=rf"gradio \S+ lacks .*{name.lstrip('_')}"):
        gradio_internals.check()


def test_an_attribute_gradio_no_longer_sets_or_a_page_without_change_locale_stops_it(monkeypatch):
    real = queueing.Event.__init__

    def moved(self, *args, **kwargs):
        real(self, *args, **kwargs)
        del self.enqueue_time

    monkeypatch.setattr(queueing.Event, "__init__", moved)
    with pytest.raises(gradio_internals.GradioInternalsMissing, match="Event sets no enqueue_time"):
        gradio_internals.check()
    monkeypatch.undo()
    monkeypatch.setattr(gradio_internals, "_page_exports", lambda name: gradio_internals._sets(object(), name))
    with pytest.raises(gradio_internals.GradioInternalsMissing, match="the language switch"):
        gradio_internals.check()


@pytest.fixture(scope="module")
def launched():
    """A small demo on a running server, with a private event as the app has."""
    with gradio.Blocks() as demo:
        button, text = gradio.Button(), gradio.Textbox()
        button.click(lambda: "x", None, text, api_name="shown")
        button.click(lambda: "y", None, text, api_name="hidden", api_visibility="private")
    demo.queue()
    demo.launch(server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        yield demo
    finally:
        demo.close()


def test_the_launched_server_has_the_routes_the_config_and_the_session_state_it_needs(launched):
    gradio_internals.check(launched)
    assert gradio_internals.private_events(launched) == {"hidden"}


def test_a_route_gradio_moved_stops_the_start(launched, monkeypatch):
    from vit.serve import limits

    moved = (*limits.ROUTES, ("POST", "/gradio_api/queue/enter", limits.JOBS))
    monkeypatch.setattr(gradio_internals, "ROUTES", moved)
    with pytest.raises(gradio_internals.GradioInternalsMissing, match="queue/enter.*request limits"):
        gradio_internals.check(launched)
    unread = (("POST", "/gradio_api/queue/join", limits.UPLOAD),)  # there, but the middleware would not read it
    monkeypatch.setattr(gradio_internals, "ROUTES", unread)
    with pytest.raises(gradio_internals.GradioInternalsMissing, match="no route POST /gradio_api/queue/join"):
        gradio_internals.check(launched)


def test_an_attribute_gradios_session_state_adds_or_a_config_field_it_drops_stops_the_start(launched, monkeypatch):
    real = state_holder.SessionState.__init__

    def more(self, blocks):
        real(self, blocks)
        self.new_in_gradio = {}

    monkeypatch.setattr(state_holder.SessionState, "__init__", more)
    with pytest.raises(gradio_internals.GradioInternalsMissing, match="LeanSessionState sets no new_in_gradio"):
        gradio_internals.check(launched)
    monkeypatch.undo()
    config = launched.get_config_file()
    for d in config["dependencies"]:
        d.pop("api_visibility", None)
    monkeypatch.setattr(launched, "get_config_file", lambda: config)
    with pytest.raises(gradio_internals.GradioInternalsMissing, match="sets no api_visibility.*private events"):
        gradio_internals.check(launched)


@pytest.mark.server  # a subprocess: the entry point itself
def test_app_py_refuses_to_start_in_one_sentence(tmp_path):
    """``python app.py`` with a gradio that lacks one of them: exit status 2 and the sentence, nothing listening."""
    shim = tmp_path / "sitecustomize.py"
    shim.write_text("import gradio.state_holder\ndel gradio.state_holder.StateHolder.delete_state\n")
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "--port", "0"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin",
                                                      "HOME": str(tmp_path), "GRADIO_ANALYTICS_ENABLED": "False"})
    assert done.returncode == 2, done.stderr[-2000:]
    assert "lacks StateHolder.update, .delete_state, .set_blocks" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_other_module_of_the_package_names_a_private_object_of_gradio():
    """Every ``gradio`` import outside vit/ui/gradio_internals.py is of its public surface (names without a leading
    underscore, from its top level or its documented modules), and nothing reads a private attribute of a gradio
    object (``demo._queue``, ``fn.api_visibility`` read back, ``__self__`` of a trigger)."""
    public_modules = {"gradio", "gradio.themes", "gradio.components", "gradio.exceptions"}
    found = []
    for path in sorted((ROOT / "vit").rglob("*.py")) + [ROOT / "app.py"]:
        if path.name == "gradio_internals.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gradio"):
                if node.module not in public_modules or any(a.name.startswith("_") for a in node.names):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} from {node.module} import ...")
            if isinstance(node, ast.Attribute) and node.attr in ("_queue", "fns", "__self__", "server_app"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    assert found == [], found


def test_the_page_script_reaches_gradio_only_through_the_checked_module():
    """vit/ui/page.js names nothing of gradio's page bundle; the language switch's call into it is
    gradio_internals.LOCALE_JS, checked at start with the rest, and the page the server sends carries it."""
    from vit.ui import layout

    page = (ROOT / "vit" / "ui" / "page.js").read_text()
    assert "changeLocale" not in page and "core-" not in page
    assert "changeLocale" in gradio_internals.LOCALE_JS
    assert gradio_internals.LOCALE_JS in layout.SCRIPT and "/*GRADIO_LOCALE*/" not in layout.SCRIPT

