"""Reconsolidation on cortex access (seed 001 §9.6-§9.8): heal the native vector.

A retrieved cortex block's live zones are re-embedded with the current native model;
the cosine distance between the old and the new native vector is the vectorial delta
(§9.7). Every access appends a vector_history event; a delta above the epiphany
threshold is an "epiphany" (§9.7.3) that the caller logs to the day table (§9.8.3).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt


def cosine_distance(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0 or nb == 0:
        return 1.0
    return float(1.0 - float(np.dot(a, b)) / (na * nb))


def reconsolidation_event(
    old: npt.NDArray[np.float32] | None,
    new: npt.NDArray[np.float32],
    *,
    model_version: str,
    epiphany_delta: float,
    when: datetime,
) -> dict[str, Any]:
    """The vector_history entry for one access (seed 001 §9.6.6, §9.7.4)."""
    delta = 1.0 if old is None or old.shape != new.shape else cosine_distance(old, new)
    return {
        "date": when.isoformat(),
        "model_version": model_version,
        "event": "epiphany" if delta > epiphany_delta else "reconsolidation",
        "delta_magnitude": round(delta, 6),
    }


def shift_description(delta: float, previous_model: str | None, model: str) -> str:
    """The brief note an epiphany carries (seed 001 §9.8.2)."""
    moved = (f" (encoded by {previous_model}, re-read by {model})"
             if previous_model and previous_model != model else "")
    return (f"Significant cognitive shift detected on this memory: cosine delta {delta:.2f}"
            f"{moved}. Your current understanding differs substantially from when this "
            "was encoded.")
