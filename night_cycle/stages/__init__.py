"""The nine stages of seed 001 §8.2 and the overnight thinking of seed 000 §9.5-9.6 (stage
10), one module each; `runner.py` runs them in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class StageOutput:
    summary: dict[str, Any] = field(default_factory=dict)
    artifact: Any = None  # handed to the next stage (stages 1-5)
