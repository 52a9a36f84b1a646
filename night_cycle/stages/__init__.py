"""The nine stages of seed 001 §8.2, one module each; `runner.py` runs them in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class StageOutput:
    summary: dict[str, Any] = field(default_factory=dict)
    artifact: Any = None  # handed to the next stage (stages 1-5)
