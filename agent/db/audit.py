"""audit_log: append a row, verify the hash chain (revision 0009); SQL in
agent/db/sql/audit.sql."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from agent.db.queries import query


def append(conn: psycopg.Connection[Any], actor: str, action: str, target: str,
           details: dict[str, Any] | None = None) -> None:
    """One audit row in the caller's transaction (the chain's trigger hashes it)."""
    conn.execute(query("audit_append"), {
        "actor": actor, "action": action, "target": target,
        "details": json.dumps(details or {}, default=str),
    })


def verify_chain(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    """Walk audit_log in id order: each row's prev_hash must be the row before's hash and
    its row_hash the hash of its own fields. The first break names the row."""
    rows = conn.execute(query("audit_chain")).fetchall()
    head = rows[-1][2] if rows else None
    for rid, prev, row_hash, before, expected in rows:
        if prev != before:
            return {"ok": False, "rows": len(rows), "head": head, "broken_at": rid,
                    "reason": "its prev_hash is not the hash of the row before it "
                              "(a row before it was removed or inserted)"}
        if row_hash != expected:
            return {"ok": False, "rows": len(rows), "head": head, "broken_at": rid,
                    "reason": "its fields do not match its hash (the row was changed)"}
    return {"ok": True, "rows": len(rows), "head": head, "broken_at": None, "reason": None}
