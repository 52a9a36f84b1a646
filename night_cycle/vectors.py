"""Vectors between pgvector text, numpy and the stage artifacts (base64 float32, seed 001 §6.3)."""

from __future__ import annotations

import base64

import numpy as np
import numpy.typing as npt

Vec = npt.NDArray[np.float32]


def parse_vector(text: str | None) -> Vec | None:
    """pgvector's text form ('[0.1,0.2]', vector or halfvec) → float32 array."""
    if text is None:
        return None
    body = text.strip()[1:-1]
    if not body:
        return None
    return np.array(body.split(","), dtype=np.float32)


def encode(v: Vec | None) -> str | None:
    """Base64 float32 (seed 001 §6.3 bifocal packet encoding)."""
    return None if v is None else base64.b64encode(np.asarray(v, np.float32).tobytes()).decode()


def decode(s: str | None) -> Vec | None:
    return None if s is None else np.frombuffer(base64.b64decode(s), dtype=np.float32).copy()
