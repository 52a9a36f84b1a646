"""bench uses only cogd's public names (issue 41 item 7; bench/README.md "Layout").

import-linter (pyproject.toml) keeps bench's layers and keeps cogd's code from importing
bench, but it sees modules, not names: this test reads every bench/**/*.py and fails on
`from agent... import _x`, an import of a private module (`agent._x`, `agent.x._y`), and a
private attribute read off anything but self or cls (`recall._cache`, `worker._connect()`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COGD = ("agent", "night_cycle")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _cogd(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in COGD


def private_uses(source: str, filename: str = "<bench>") -> list[str]:
    """Each use of a private cogd name in `source`, one line each ("FILE:LINE: what")."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom) and _cogd(node.module):
            assert node.module is not None
            parts = node.module.split(".")
            if any(_private(p) for p in parts):
                found.append(f"{where}: private module {node.module}")
            found += [f"{where}: private name {node.module}.{a.name}"
                      for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Import):
            found += [f"{where}: private module {a.name}" for a in node.names
                      if _cogd(a.name) and any(_private(p) for p in a.name.split("."))]
        elif (isinstance(node, ast.Attribute) and _private(node.attr)
              and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
            found.append(f"{where}: private attribute .{node.attr}")
    return found


def test_bench_uses_only_public_names() -> None:
    files = sorted((ROOT / "bench").rglob("*.py"))
    assert len(files) > 20  # the suites, the corpora, the reports
    problems = [p for f in files
                for p in private_uses(f.read_text(), str(f.relative_to(ROOT)))]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("snippet", [
    "from agent.services.memory.recall import _list\n",
    "from agent.services.memory.recall import warm, _RELAXED as R\n",
    "from agent._private import thing\n",
    "import agent.services._hidden\n",
    "def f(worker):\n    return worker._connect()\n",
    "from agent.services.memory import recall\nrecall._RELAXED.pop(1, None)\n",
])
def test_a_private_use_is_found(snippet: str) -> None:
    assert len(private_uses(snippet)) == 1


@pytest.mark.parametrize("snippet", [
    "from agent.services.memory.recall import candidate_list, warm\n",
    "from bench.suites.quality import DEPTH\n",
    "class A:\n    def f(self):\n        return self._x, type(self).__name__\n",
    "import bench.__main__\nfrom collections import abc\nabc.__name__\n",
])
def test_public_uses_pass(snippet: str) -> None:
    assert private_uses(snippet) == []
