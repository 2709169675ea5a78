"""Memory a server hands back: :func:`trim_memory` returns the heap pages an analysis freed to the
operating system (glibc keeps freed heap pages otherwise), and :func:`rss_bytes` reads what is resident."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

_libc = None
if os.name == "posix":
    try:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        _libc = None


def trim_memory() -> bool:
    """Give the heap pages an analysis freed back to the OS (glibc ``malloc_trim``; else False): glibc keeps them for
    reuse, and a server would stay at its peak for good."""
    return bool(_libc and _libc.malloc_trim(0))


def rss_bytes(pid: int | str = "self") -> int:
    """Resident memory of a process (Linux ``/proc``; 0 elsewhere)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


