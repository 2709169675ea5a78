"""The house's shape (issue 19): the package's imports have no cycle, no function is over 80 lines, the torch
boundary is where the layout says it is, and docs/layout.md names every subpackage."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "vit"
MAX_FUNCTION_LINES = 80


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _target(name: str, imported: str | None) -> str | None:
    """The module an import names: a submodule when ``from pkg import sub`` names one, else the package."""
    if imported and f"{name}.{imported}" in MODULES:
        return f"{name}.{imported}"
    return name if name in MODULES else None


def imports_of(module: str, path: Path) -> set[str]:
    """Every project module ``module`` imports, at module level or inside functions (absolute or relative)."""
    out = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(t for a in node.names if (t := _target(a.name, None)))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            out.update(t for a in node.names if (t := _target(base, a.name)))
    out.discard(module)
    return out


def test_the_import_graph_has_no_cycle():
    graph = {m: imports_of(m, p) for m, p in MODULES.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycle = path[path.index(n):] + [n]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_cycle_check_finds_a_cycle(tmp_path, monkeypatch):
    """The check above can fail: two modules importing each other are reported."""
    (tmp_path / "a.py").write_text("from vit import b\n")
    (tmp_path / "b.py").write_text("import vit.a\n")
    monkeypatch.setitem(MODULES, "vit.a", tmp_path / "a.py")
    monkeypatch.setitem(MODULES, "vit.b", tmp_path / "b.py")
    assert imports_of("vit.a", tmp_path / "a.py") == {"vit.b"}
    assert imports_of("vit.b", tmp_path / "b.py") == {"vit.a"}


def long_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    return [f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def test_no_function_is_over_80_lines():
    files = [*MODULES.values(), ROOT / "app.py"]
    found = [f for path in files for f in long_functions(path)]
    assert not found, "functions over 80 lines (def to last line): " + "; ".join(found)


def test_the_torch_free_edge_imports_no_torch():
    """The top level (config, errors, validate, images, cost, shapes, lesson, ...) and the registry of
    pictures and methods load without torch: the app's first screen and ``python -m vit --help`` rely on it."""
    edge = sorted(m for m, p in MODULES.items() if p.parent == PACKAGE and p.name != "__main__.py")
    edge += ["vit.views", "vit.views.registry", "vit.explanations.methods", "vit.model.families", "vit.serve.files",
             "vit.serve.queue", "vit.serve.memory", "vit.serve.decode", "vit.model.hubconfig", "vit.model.hubspec",
             "vit.model.hubnames", "vit.model.hubtimm", "vit.model.hubtransformers"]
    code = f"import sys; [__import__(m) for m in {edge!r}]; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False", f"one of {edge} imports torch"


def test_the_layout_page_names_every_module():
    """docs/layout.md names every subpackage and, in its subpackage's paragraph, every module (page.js and page.css
    too)."""
    text = (ROOT / "docs" / "layout.md").read_text()
    layout = text[text.index("```"):text.rindex("```")]
    paragraphs = dict(re.findall(r"^ {0,2}(\w+/) +(.*?)(?=^ {0,2}\w+/ |\Z)", layout, re.S | re.M))
    for path in [*MODULES.values(), PACKAGE / "ui" / "page.js", PACKAGE / "ui" / "page.css"]:
        package = path.parent.name + "/"
        assert package in paragraphs, f"docs/layout.md does not describe {package}"
        if path.stem != "__init__":
            assert re.search(rf"\b{re.escape(path.stem)}\b", paragraphs[package]), f"docs/layout.md misses {path}"
