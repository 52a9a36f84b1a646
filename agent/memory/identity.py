"""Layer 0 (identity) and Layer 1 (goals) as rows; bootstrap from config.

Identity starts blank except for the hard safety boundaries in config
([identity] bootstrap_boundaries). Nothing here lets conversation content write
Layer 0: beyond the bootstrap, identity changes only through approved proposals
(issue #5). Revision 0006 enforces it in the database: a trigger refuses identity
writes in a transaction that did not name its writer (`layer0_writer`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from agent.domain.prompt import Goal, Trait

# revision 0006's trigger refuses identity writes unless the transaction names its writer
LAYER0_WRITER = "cogd.layer0_writer"


@contextmanager
def layer0_writer(conn: psycopg.Connection[Any], writer: str) -> Iterator[None]:
    """A transaction (or savepoint) in which `writer` ('bootstrap' or 'approve:<proposal
    id>') may write identity; the permission ends with the block."""
    with conn.transaction():
        conn.execute("SELECT set_config(%s, %s, true)", (LAYER0_WRITER, writer))
        yield
        conn.execute("SELECT set_config(%s, '', true)", (LAYER0_WRITER,))


def bootstrap_boundaries(conn: psycopg.Connection[Any], boundaries: list[str]) -> int:
    """Insert the configured hard boundaries once; returns how many were added."""
    with layer0_writer(conn, "bootstrap"):
        return _insert_boundaries(conn, boundaries)


def _insert_boundaries(conn: psycopg.Connection[Any], boundaries: list[str]) -> int:
    added = 0
    for i, text in enumerate(boundaries, start=1):
        row = conn.execute(
            "INSERT INTO identity (name, description, weight, source, is_boundary) "
            "VALUES (%s, %s, 1.0, 'config', true) ON CONFLICT (name) DO NOTHING "
            "RETURNING trait_id",
            (f"boundary_{i}", text),
        ).fetchone()
        if row:
            added += 1
            conn.execute(
                "INSERT INTO audit_log (actor, action, target, details) "
                "VALUES ('config', 'identity_bootstrap', %s, %s::jsonb)",
                (str(row[0]), json.dumps({"boundary": text})),
            )
    return added


def apply_approved_proposal(conn: psycopg.Connection[Any], proposal_id: Any,
                            payload: dict[str, Any]) -> Any:
    """Write an approved Layer 0 proposal into identity (with identity_history); the
    caller has already marked the proposal approved in this transaction. Returns the
    trait_id."""
    weight = float(payload.get("weight", 0.5))
    with layer0_writer(conn, f"approve:{proposal_id}"):
        trait = conn.execute(
            "INSERT INTO identity (name, description, weight, source) VALUES "
            "(%s, %s, %s, 'proposal') ON CONFLICT (name) DO UPDATE SET weight = "
            "EXCLUDED.weight, description = EXCLUDED.description, updated_at = now() "
            "RETURNING trait_id", (payload["name"], payload.get("description", ""), weight),
        ).fetchone()
        assert trait is not None
        conn.execute("INSERT INTO identity_history (trait_id, old_weight, new_weight, "
                     "reason, proposal_id) VALUES (%s, NULL, %s, 'approved proposal', %s)",
                     (trait[0], weight, proposal_id))
    return trait[0]


def load_traits(conn: psycopg.Connection[Any]) -> list[Trait]:
    rows = conn.execute(
        "SELECT name, weight, description, is_boundary FROM identity "
        "ORDER BY is_boundary DESC, weight DESC, name"
    ).fetchall()
    return [Trait(name=r[0], weight=r[1], description=r[2], is_boundary=r[3]) for r in rows]


def load_goals(conn: psycopg.Connection[Any]) -> list[Goal]:
    rows = conn.execute(
        "SELECT name, weight, description FROM goals WHERE status = 'active' "
        "ORDER BY weight DESC, name"
    ).fetchall()
    return [Goal(name=r[0], weight=r[1], description=r[2]) for r in rows]
