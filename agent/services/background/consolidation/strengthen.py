"""Recalled memories gain importance, bounded per pass (seed 000 §4.5.4)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.services.background.consolidation.context import PassContext
from agent.services.background.consolidation.state import get_state, set_state

NAME = "strengthen"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Recalled memories gain importance, bounded per pass (seed 000 §4.5.4)."""
    state = get_state(conn, "consolidation.recall_log")
    since = int(state.get("last_id", 0))
    rows = conn.execute(
        query("consolidation_recall_log_since"), (since,)
    ).fetchall()
    if not rows:
        return None
    counts: Counter[str] = Counter()
    last_seen: dict[str, datetime] = {}
    for _, items, at in rows:
        for item in items or []:
            if item.get("kind") == "memory" and item.get("verdict") != "no_match":
                mid = item["id"].split(":", 1)[1]
                counts[mid] += 1
                last_seen[mid] = at
    changed = []
    for mid, n in counts.items():
        row = conn.execute(query("consolidation_memory_importance"),
                           (mid,)).fetchone()
        if row is None:
            continue
        new = rules.strengthen(float(row[0]), n, ctx.cfg)
        conn.execute(
            query("consolidation_memory_reweigh"), (new, n, last_seen[mid], mid))
        changed.append({"memory_id": mid, "recalls": n, "importance": [row[0], new]})
    set_state(conn, "consolidation.recall_log", {"last_id": rows[-1][0]})
    if not changed:
        return None
    return {"inputs": {"recall_log_ids": [rows[0][0], rows[-1][0]]},
            "outputs": {"strengthened": changed}}
