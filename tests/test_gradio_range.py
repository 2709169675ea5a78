"""The lowest gradio of the range requirements.txt states passes the app's tests: .ci/run installs it into
``.gradio-lowest/`` beside the installed one and runs the app's tests on it, with this file's check that the run
is on it (the ``lowest_gradio`` tier)::

    PYTHONPATH=.gradio-lowest python -m pytest -m "not browser and not soak" tests/test_gradio_range.py \
        tests/test_app.py tests/test_gradio_internals.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOWEST = ROOT / ".gradio-lowest"  # pip install --target .gradio-lowest gradio==<lowest> gradio-client==<its own>


def lowest() -> str:
    """The lowest gradio requirements.txt allows."""
    found = re.search(r"^gradio>=([\d.]+),", (ROOT / "requirements.txt").read_text(), re.M)
    assert found, "requirements.txt names no lower bound for gradio"
    return found.group(1)


@pytest.mark.lowest_gradio
@pytest.mark.skipif(not LOWEST.is_dir() and not os.environ.get("CI"),
                    reason=f"no {LOWEST.name}/ (.ci/run installs gradio's lowest tested release there)")
def test_this_run_is_on_the_lowest_gradio_of_the_range():
    import gradio

    where = Path(gradio.__file__).resolve()
    assert where.is_relative_to(LOWEST.resolve()), (f"this run's gradio is {where.parent}, not {LOWEST.name}/'s: "
                                                     f"run it with PYTHONPATH={LOWEST.name} (the command above)")
    assert gradio.__version__.startswith(lowest()), f"{LOWEST.name}/ holds gradio {gradio.__version__}, not {lowest()}"
