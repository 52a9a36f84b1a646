"""What the suites share that needs cogd: a throwaway embedded database, migrated to head,
and a corpus's import into it (through cogd's own importer)."""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def scratch_database(keep: bool = False) -> Iterator[tuple[Any, str]]:
    """(settings, url) of a fresh embedded Postgres in a temp dir, migrated to head."""
    from agent.config import load_settings
    from agent.db.connect import resolve
    from agent.db.embedded import stop_server
    from agent.db.migrate import upgrade

    data_dir = Path(tempfile.mkdtemp(prefix="cogd-bench-"))
    settings = load_settings(data_dir=data_dir)
    try:
        url = resolve(settings).url
        upgrade(url, settings)
        yield settings, url
    finally:
        stop_server(data_dir)
        if not keep:
            shutil.rmtree(data_dir, ignore_errors=True)


@dataclasses.dataclass
class Lines:
    """What import_corpus reads: objects with as_json() (a corpus's turns)."""

    turns: list[Any]


def import_corpus(settings: Any, url: str, corpus: Any) -> dict[str, Any]:
    import io

    from agent.db.connect import connect
    from agent.runtime import Runtime
    from agent.services.access.importer import Importer, ImportReport, read_lines

    writer = Runtime(settings).turn_writer()  # the configured index recipe too
    report = ImportReport()
    start = time.perf_counter()
    with connect(url, app="cogd-bench", autocommit=True) as conn:
        text = "\n".join(t.as_json() for t in corpus.turns) + "\n"
        Importer(conn, writer, "user", 128).run(
            read_lines(io.StringIO(text), "user", report, True), report)
        conn.execute("ANALYZE")
    return {**report.as_dict(), "seconds": round(time.perf_counter() - start, 1)}
