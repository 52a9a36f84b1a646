"""What the benchmarks share: a throwaway embedded database, percentiles, machine info."""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def machine() -> dict[str, Any]:
    return {"cpus": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "processor": platform.machine()}


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
