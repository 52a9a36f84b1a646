"""Corrections keep when they fail and when they are fine (regex heuristic)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.services.background.consolidation.context import PassContext

NAME = "corrections"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Corrections keep when they fail and when they are fine (regex heuristic)."""
    rows = conn.execute(
        query("consolidation_unparsed_corrections")).fetchall()
    parsed = []
    for mid, content in rows:
        fails, fine = rules.correction_conditions(content)
        conn.execute(
            query("consolidation_correction_conditions"),
            (fails, fine, mid))
        parsed.append({"memory_id": str(mid), "fails_when": fails, "fine_when": fine})
    return {"outputs": {"corrections": parsed}} if parsed else None
