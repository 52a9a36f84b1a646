"""What the operator's commands read about the server and the processes; SQL in
agent/db/sql/catalog.sql."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import psycopg
from psycopg import sql

from agent.db.queries import query


def roles_present(conn: psycopg.Connection[Any], roles: Iterable[str]) -> set[str]:
    rows = conn.execute(query("catalog_roles_present"), {"roles": list(roles)}).fetchall()
    return {r[0] for r in rows}


def readonly_role(conn: psycopg.Connection[Any], role: str) -> tuple[bool, bool, bool]:
    """(the role exists, the schema is migrated, the role may read the views)."""
    row = conn.execute(query("catalog_readonly_role"), {"role": role}).fetchone()
    assert row is not None
    exists, migrated = bool(row[0]), bool(row[1])
    if not (exists and migrated):
        return exists, migrated, False
    granted = conn.execute(query("catalog_readonly_granted"), {"role": role}).fetchone()
    return exists, migrated, bool(granted and granted[0])


def server_version(conn: psycopg.Connection[Any]) -> str | None:
    row = conn.execute(query("catalog_server_version")).fetchone()
    return None if row is None else str(row[0])


def processes(conn: psycopg.Connection[Any]) -> list[dict[str, Any]]:
    """v_processes as dicts (last_beat in ISO form)."""
    return [{"name": r[0], "pid": r[1], "host": r[2], "state": r[3],
             "last_beat": r[4].isoformat(), "alive": r[5], "info": r[6]}
            for r in conn.execute(query("catalog_processes")).fetchall()]


def running(conn: psycopg.Connection[Any], name: str) -> int:
    """How many processes called `name` are alive and running."""
    row = conn.execute(query("catalog_running"), {"name": name}).fetchone()
    return int(row[0]) if row else 0


def row_counts(conn: psycopg.Connection[Any], tables: Iterable[str]) -> dict[str, int]:
    """count(*) of each table (names are quoted as identifiers)."""
    out: dict[str, int] = {}
    for table in tables:
        row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
                           ).fetchone()
        out[table] = int(row[0]) if row else 0
    return out
