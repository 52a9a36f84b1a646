"""The nine stages of seed 001 §8.2, the overnight thinking of seed 000 §9.5-9.6 (stage
10) and the episodes and milestones of seed 000 §4.3 (stage 11, run before the cleanup),
one module each; `runner.py` runs them in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class StageOutput:
    summary: dict[str, Any] = field(default_factory=dict)
    artifact: Any = None  # handed to the next stage (stages 1-5)
