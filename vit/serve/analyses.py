"""The analyses a server keeps for its pages' display-only changes: bounded in bytes, with a share per address.

A page holds only a key; the analysis lives here. Room is made from the storing address's own least recently used
first, then from the address holding the most; an analysis a live page shows goes only when nothing else is left to
go (docs/reliability.md, "The analysis store's shares"). Torch-free and gradio-free.
"""

from __future__ import annotations

import functools
import os
import threading
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable

from vit.serve.files import OWNER

SHARE = 0.5  # of the store, what one address may hold before its own analyses make room for its new one


class AnalysisStore:
    """Analyses by key, least recently used first, within ``max_bytes`` and ``share_bytes`` per address.

    ``showing(key)``: whether a live page shows that analysis (kept while anything else can go).
    """

    def __init__(self, max_bytes: int | None = None, share_bytes: int | None = None,
                 showing: Callable[[str], bool] = lambda key: False):
        if max_bytes is None:
            max_bytes = int(float(os.environ.get("VIT_APP_STATE_GB", "3")) * 1e9)
        self.max_bytes, self.showing = max_bytes, showing
        self.share_bytes = int(max_bytes * SHARE) if share_bytes is None else share_bytes
        self._items: OrderedDict[str, tuple[object, str]] = OrderedDict()  # key -> (analysis, its address)
        self._lock = threading.Lock()

    def put(self, analysis, address: str | None = None) -> str:
        """Keep ``analysis`` for ``address`` (by default the handler's: vit.serve.files.OWNER); its new key."""
        key = uuid.uuid4().hex
        with self._lock:
            self._items[key] = (analysis, OWNER.get()[1] if address is None else address)
            self._make_room(key)
        return key

    def _make_room(self, new: str) -> None:
        """Drop analyses until the store and the new one's address fit (the new one stays): unshown ones first, the
        address's own, then the address holding the most's; then shown ones the same way."""
        address = self._items[new][1]
        used = Counter()
        for analysis, owner in self._items.values():
            used[owner] += analysis.nbytes
        showing = functools.cache(self.showing)  # asked once per key and put
        for shown in (False, True):
            while sum(used.values()) > self.max_bytes or used[address] > self.share_bytes:
                victim = self._victim(new, address, used, shown, showing)
                if victim is None:
                    break
                analysis, owner = self._items.pop(victim)
                used[owner] -= analysis.nbytes

    def _victim(self, new: str, address: str, used: Counter, shown: bool, showing) -> str | None:
        others = sum(used.values()) > self.max_bytes
        found: dict[str, str] = {}  # an address -> its least recently used analysis that may go
        for key, (_, owner) in self._items.items():
            if key != new and owner not in found and (owner == address or others) and \
                    (shown or not showing(key)):
                found[owner] = key
        if address in found:
            return found[address]
        return found[max(found, key=lambda o: used[o])] if found else None

    def get(self, key):
        """The analysis for ``key`` (now the most recently used), or None if it was never kept or has been dropped."""
        with self._lock:
            if not isinstance(key, str) or key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key][0]

    def drop(self, key) -> int:
        """Forget the analysis of ``key`` at once (nothing can show it any more); the bytes it held."""
        with self._lock:
            item = self._items.pop(key, None) if isinstance(key, str) else None
        return 0 if item is None else item[0].nbytes

    def keys(self) -> set[str]:
        with self._lock:
            return set(self._items)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(a.nbytes for a, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)
