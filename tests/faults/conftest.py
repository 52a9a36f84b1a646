"""Fault-injection and fuzzing tests (issue #8), and what they measured.

Each test records what it injected and what it observed through the `reliability`
fixture. `python -m bench reliability` runs this directory with
COGD_RELIABILITY_OUT set and renders the records into docs/reliability.md; a plain
`pytest` run collects them too but writes nothing.

COGD_FUZZ_EXAMPLES sets how many cases each hypothesis property runs (default 200).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FUZZ_EXAMPLES = int(os.environ.get("COGD_FUZZ_EXAMPLES", "200"))


class Reliability:
    """Records of one test session: {"kind": ..., "test": ..., **fields}."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.test = ""

    def add(self, kind: str, **fields: Any) -> None:
        with self._lock:
            self.records.append({"kind": kind, "test": self.test, **fields})


_SESSION = Reliability()


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[Path]:
    """An embedded server of its own: the test stops, crashes and starts it."""
    from agent.db.embedded import ensure_server, stop_server

    data = tmp_path / "pgdata-home"
    ensure_server(data)
    yield data
    stop_server(data)


@pytest.fixture
def reliability(request: pytest.FixtureRequest) -> Iterator[Reliability]:
    _SESSION.test = request.node.nodeid
    yield _SESSION


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    out = os.environ.get("COGD_RELIABILITY_OUT")
    if out:
        Path(out).write_text(json.dumps({"exitstatus": int(exitstatus),
                                         "records": _SESSION.records}, indent=1, default=str))
