"""What the benchmarks share: a throwaway embedded database, percentiles, machine info."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def write_results(name: str, data: dict[str, Any], report: str, *, quick: bool = False,
                  indent: int = 1) -> Path:
    """bench/results/<name>[-quick]-<date>.json and .md; prints the report. Returns the
    path without suffix."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = RESULTS / f"{name}-{'quick-' if quick else ''}{data['date']}"
    stem.with_suffix(".json").write_text(json.dumps(data, indent=indent, default=str) + "\n")
    stem.with_suffix(".md").write_text(report)
    print(report)
    print(f"wrote {stem}.md and {stem}.json")
    return stem


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
