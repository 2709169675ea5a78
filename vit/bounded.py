"""A dict that forgets: the least recently used entries go once it holds too many, or too many bytes. The one
bounded cache of the package, each owner saying how much it keeps; :class:`Kept` is one request threads share."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class BoundedDict(OrderedDict):
    """An ``OrderedDict`` in least-recently-used order, bounded by ``max_items`` and, optionally, by the total
    ``size(value)`` (bytes, say). The newest entry always stays, even alone over ``max_size``: the caller checks a
    single entry's size first. ``keep(key, value)`` is True for entries never evicted (in use elsewhere, say)."""

    def __init__(self, max_items: int, max_size: float | None = None, size: Callable[[Any], float] | None = None,
                 keep: Callable[[Hashable, Any], bool] | None = None):
        if max_items < 1:
            raise ValueError(f"max_items must be at least 1, got {max_items}")
        if max_size is not None and size is None:
            raise ValueError("max_size needs size=, the size of an entry")
        super().__init__()
        self.max_items, self.max_size, self._size, self._keep = max_items, max_size, size, keep

    def __reduce__(self):
        """Pickled with its bounds (an analysis crosses processes on ZeroGPU with its variants)."""
        return (type(self), (self.max_items, self.max_size, self._size, self._keep), None, None, iter(self.items()))

    def get(self, key, default=None):
        """The value (now the most recently used), or ``default``."""
        if key not in self:
            return default
        self.move_to_end(key)
        return super().__getitem__(key)

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        self.evict()

    def total_size(self) -> float:
        return 0 if self._size is None else sum(self._size(v) for v in self.values())

    def _over(self) -> bool:
        return len(self) > self.max_items or (self.max_size is not None and self.total_size() > self.max_size)

    def evict(self) -> list:
        """Drop the least recently used entries until the bounds hold; returns the dropped (key, value) pairs."""
        dropped = []
        for key in list(self.keys())[:-1]:  # the newest stays
            if not self._over():
                break
            value = super().__getitem__(key)
            if self._keep is not None and self._keep(key, value):
                continue
            del self[key]
            dropped.append((key, value))
        return dropped


class Kept:
    """A :class:`BoundedDict` that request threads share, each use under its own lock (explanations, interventions)."""

    def __init__(self, max_items: int):
        self._items, self._lock = BoundedDict(max_items), threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            return self._items.get(key)

    def find(self, match: Callable[[Hashable], bool]) -> Any:
        with self._lock:
            key = next((k for k in self._items if match(k)), None)
            return None if key is None else self._items.get(key)

    def __setitem__(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value

    def remember(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value kept for ``key``, else ``make()``'s, kept (made outside the lock: it may wait for the model)."""
        found = self.get(key)
        if found is None:
            found = self[key] = make()
        return found

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
