"""Named SQL: `-- name: x` blocks in agent/db/sql/*.sql, loaded once."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

SQL_DIR = Path(__file__).parent / "sql"
_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


@functools.cache
def load() -> dict[str, str]:
    queries: dict[str, str] = {}
    for path in sorted(SQL_DIR.glob("*.sql")):
        text = path.read_text()
        marks = list(_NAME.finditer(text))
        for i, mark in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            body = "\n".join(
                line for line in text[mark.end() : end].strip().splitlines()
                if not line.lstrip().startswith("--")
            ).strip().rstrip(";")
            if mark.group(1) in queries:
                raise ValueError(f"duplicate query name {mark.group(1)} in {path}")
            queries[mark.group(1)] = body
    return queries


def query(name: str) -> str:
    return load()[name]


@functools.cache
def _vector_format(dim: int) -> str:
    return "[" + ",".join(["%.7g"] * dim) + "]"


def vector_text(values: Any) -> str:
    """pgvector's text form ('[0.1,0.2,...]', 7 significant digits); the SQL casts it to
    vector or halfvec. One %-format per dimension count (twice as fast as a join)."""
    floats = values.tolist() if hasattr(values, "tolist") else [float(v) for v in values]
    return _vector_format(len(floats)) % tuple(floats)
