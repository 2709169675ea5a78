"""The lowest gradio of the range requirements.txt states (issue 38) passes the app's tests: .ci/run installs it into
``.gradio-lowest/`` beside the installed one, and the app tests run on it in a process of their own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOWEST = ROOT / ".gradio-lowest"  # pip install --target .gradio-lowest gradio==<lowest> gradio-client==<its own>


def lowest() -> str:
    """The lowest gradio requirements.txt allows."""
    found = re.search(r"^gradio>=([\d.]+),", (ROOT / "requirements.txt").read_text(), re.M)
    assert found, "requirements.txt names no lower bound for gradio"
    return found.group(1)


@pytest.mark.skipif(not LOWEST.is_dir() and not os.environ.get("CI"),
                    reason=f"no {LOWEST.name}/ (.ci/run installs gradio's lowest tested release there)")
def test_the_app_tests_pass_on_the_lowest_gradio_of_the_range():
    version = subprocess.run([sys.executable, "-c", "import gradio; print(gradio.__version__)"], capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(LOWEST)}, cwd=ROOT).stdout.strip()
    assert version.startswith(lowest()), f"{LOWEST.name}/ holds gradio {version}, not {lowest()}"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_app.py",
                           "tests/test_gradio_internals.py"], capture_output=True, text=True, cwd=ROOT, timeout=1200,
                          env={**os.environ, "PYTHONPATH": str(LOWEST)})
    assert done.returncode == 0, done.stdout[-3000:]
