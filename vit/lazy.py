"""Names a package exports but imports only on first use (PEP 562), so its torch-free parts stay torch-free."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module


def exports(package: str, names: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: ``names`` maps each exported name to the submodule holding it."""

    def attribute(name: str) -> object:
        if name in names:
            return getattr(import_module(f"{package}.{names[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return attribute
