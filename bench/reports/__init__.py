"""What every report shares: the results folder, writing a report's .md and .json, machine
info, percentiles and percentages. Stdlib only (no cogd import)."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results"


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


def pct(x: float | None) -> str:
    """A fraction as a whole percentage ("83 %"), "n/a" for None."""
    return "n/a" if x is None else f"{100 * x:.0f} %"
