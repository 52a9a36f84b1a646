"""Layer 0 (identity) and Layer 1 (goals) as rows; bootstrap from config.

Identity starts blank except for the hard safety boundaries in config
([identity] bootstrap_boundaries). Nothing here lets conversation content write
Layer 0: beyond the bootstrap, identity changes only through approved proposals
(issue #5).
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from agent.domain.prompt import Goal, Trait


def bootstrap_boundaries(conn: psycopg.Connection[Any], boundaries: list[str]) -> int:
    """Insert the configured hard boundaries once; returns how many were added."""
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
