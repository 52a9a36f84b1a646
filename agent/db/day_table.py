"""day_table's repository: the one insert (turns, imports, epiphanies) and the write
path's reads; SQL in agent/db/sql/day_table.sql."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from agent.db.queries import query

FIELDS = ("session_id", "user_id", "user_tier", "role", "speaker", "content", "universal",
          "native", "native_model", "tokens", "inbox_id", "external_id", "message_type",
          "created_at", "index_text", "index_tsv", "index_version", "contextual",
          "epiphany_metadata")


def insert(conn: psycopg.Connection[Any], **fields: Any) -> tuple[Any, int] | None:
    """One row, numbered the session's next turn: (entry_id, turn_number), or None when
    it was there already (an imported external_id, or an (inbox_id, role) written
    before). Fields not given are NULL (message_type: 'dialogue'); vectors in pgvector's
    text form."""
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise ValueError(f"day_table has no field {unknown[0]!r}; fields: {', '.join(FIELDS)}")
    params = dict.fromkeys(FIELDS) | fields
    params["message_type"] = params["message_type"] or "dialogue"
    if isinstance(params["epiphany_metadata"], dict):
        params["epiphany_metadata"] = json.dumps(params["epiphany_metadata"])
    row = conn.execute(query("day_table_insert"), params).fetchone()
    return None if row is None else (row[0], int(row[1]))


def vector_pending(conn: psycopg.Connection[Any], limit: int) -> list[tuple[Any, str]]:
    """(entry_id, index_text) of turns still without their contextual vector, oldest first."""
    rows = conn.execute(query("day_table_vector_pending"), {"k": limit}).fetchall()
    return [(r[0], str(r[1])) for r in rows]


def fill_vector(conn: psycopg.Connection[Any], entry_id: Any, vector: str) -> None:
    """A turn's contextual vector (pgvector text), unless another process filled it."""
    conn.execute(query("day_table_vector_fill"), {"entry_id": entry_id, "vector": vector})


def last_turn(conn: psycopg.Connection[Any], session_id: Any) -> tuple[Any, str, str] | None:
    """(speaker, role, content) of the session's last turn, or None."""
    row = conn.execute(query("day_table_last_turn"), {"session_id": session_id}).fetchone()
    return None if row is None else (row[0], row[1], row[2])


def record_entry_gate(conn: psycopg.Connection[Any], entry_id: Any, session_id: Any,
                      decision: str, score: float, signals: dict[str, Any], reason: str) -> None:
    conn.execute(query("entry_gate_insert"), {
        "entry_id": entry_id, "session_id": session_id, "decision": decision, "score": score,
        "signals": json.dumps(signals), "reason": reason})


def scratch(conn: psycopg.Connection[Any], entry_id: Any, session_id: Any, user_id: Any,
            content: str, signals: dict[str, Any]) -> int | None:
    """The turn held in scratch_buffer (the entry gate's 'scratch', or the exit gate's
    'buffer'); its scratch id."""
    row = conn.execute(query("scratch_insert"), {
        "entry_id": entry_id, "session_id": session_id, "user_id": user_id,
        "content": content, "signals": json.dumps(signals)}).fetchone()
    return None if row is None else int(row[0])


def user_turn_of_inbox(conn: psycopg.Connection[Any], inbox_id: int) -> tuple[Any, str] | None:
    """(entry_id, content) of the user turn an inbox message wrote, or None."""
    row = conn.execute(query("day_table_user_turn_of_inbox"), {"inbox_id": inbox_id}).fetchone()
    return None if row is None else (row[0], row[1])


def window(conn: psycopg.Connection[Any], session_id: Any, limit: int = 400
           ) -> list[tuple[Any, str, str, int]]:
    """The session's dialogue turns, newest first: (entry_id, role, content, tokens)."""
    rows = conn.execute(query("day_table_window"),
                        {"session_id": session_id, "limit": limit}).fetchall()
    return [(r[0], r[1], r[2], int(r[3])) for r in rows]


def previous_user_similarity(conn: psycopg.Connection[Any], entry_id: Any) -> float | None:
    """Cosine similarity of a user turn to the session's user turn before it."""
    row = conn.execute(query("day_table_previous_user_similarity"),
                       {"entry_id": entry_id}).fetchone()
    return None if row is None else float(row[0])


def previous_exchange(conn: psycopg.Connection[Any], entry_id: Any) -> bool | None:
    """Before a user turn: None when its session has no reply yet, else whether the last
    reply came through System 2 (the identity triggers' `after_system2`)."""
    row = conn.execute(query("day_table_previous_exchange"), {"entry_id": entry_id}).fetchone()
    return None if row is None else bool(row[0])
