"""A stand-in for Hugging Face's ``spaces`` package (0.51.3): ``spaces.GPU`` as ZeroGPU applies it, recorded.

Tests put this folder first on an app process's ``sys.path``. As on a ZeroGPU Space, the
decorated function's duration callable is called with the call's own arguments before it
runs; the arguments and the result cross a process boundary (ZeroGPU pickles them to and
from its GPU worker; here: a pickle round trip); and a real device exists only inside the
call (``inside.active`` is True there, in that thread, for tests that watch CUDA).
"""

from __future__ import annotations

import functools
import pickle
import threading
from datetime import timedelta

applied: list[dict] = []  # one per decorated function: {"function": name, "duration": what was given}
calls: list[dict] = []  # one per call: {"function": name, "seconds": what the duration gave}
inside = threading.local()  # .active: this thread is inside a decorated call


def GPU(task=None, *, duration=None, size=None):  # the real package's name
    """``@spaces.GPU``, ``@spaces.GPU(duration=60)`` or ``@spaces.GPU(duration=callable)``, as in spaces 0.51."""
    if size not in (None, "large", "xlarge"):
        raise ValueError(f"size must be 'large' or 'xlarge', got {size!r}")
    if task is None:
        return functools.partial(_wrap, duration=duration)
    return _wrap(task, duration)


def _wrap(task, duration):
    applied.append({"function": task.__name__, "duration": duration})

    @functools.wraps(task)
    def on_the_gpu(*args, **kwargs):
        seconds = duration(*args, **kwargs) if callable(duration) else duration
        if not isinstance(seconds, (int, timedelta, type(None))) or isinstance(seconds, bool):
            raise TypeError(f"a duration must be int seconds or a timedelta, got {seconds!r}")
        calls.append({"function": task.__name__, "seconds": seconds})
        args, kwargs = pickle.loads(pickle.dumps((args, kwargs)))  # to the GPU worker
        inside.active = True
        try:
            result = task(*args, **kwargs)
        finally:
            inside.active = False
        return pickle.loads(pickle.dumps(result))  # and back

    return on_the_gpu
