"""What consolidation's merges leave to read back: the insights that hold a memory, and
the chain behind a memory down to its day_table turns (`cogd why`, introspection)."""

from __future__ import annotations

from typing import Any

import psycopg

from agent.db.queries import query
from agent.services.memory import claims


def held_by(conn: psycopg.Connection[Any], memory_id: Any) -> list[dict[str, Any]]:
    """The insights that supersede a memory (what recall finds in its place)."""
    return [{"memory_id": str(r[0]), "status": r[1], "content": r[2]} for r in conn.execute(
        query("consolidation_held_by"), (memory_id,))]


def why(conn: psycopg.Connection[Any], memory_id: Any, depth: int = 0,
        seen: set[str] | None = None) -> list[dict[str, Any]]:
    """The chain behind a memory: superseded sources, down to the day_table turns; the
    first node also has `claims`, the history of the slots it claims (claims.history)."""
    seen = seen if seen is not None else set()
    if str(memory_id) in seen or depth > 10:
        return []
    seen.add(str(memory_id))
    row = conn.execute(
        query("consolidation_why_node"), (memory_id,)).fetchone()
    if row is None:
        return []
    node: dict[str, Any] = {
        "depth": depth, "memory_id": str(row[0]), "type": row[1], "status": row[2],
        "importance": row[3], "content": row[4],
        "turn": None if row[5] is None else {
            "entry_id": str(row[5]), "role": row[6], "at": row[7], "content": row[8],
            "external_id": row[9]},
    }
    if depth == 0:  # the slots it claims: every claim on them, oldest first (issue 39)
        node["claims"] = claims.history(conn, memory_id)
    out = [node]
    for (source,) in conn.execute(
        query("consolidation_superseded_by"), (memory_id,)).fetchall():
        out += why(conn, source, depth + 1, seen)
    return out
