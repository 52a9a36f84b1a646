"""Table-driven SQL for forgetting (agent/services/forget.py): the rows of a table that
hold some text, deleted or rewritten by key. The tables and columns come from the
service's constant lists, and are quoted as identifiers (psycopg.sql), never as text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql


def rows_holding(conn: psycopg.Connection[Any], table: str, key: str, cols: Sequence[str],
                 scope: str, owner: Any, sessions: list[Any], probes: list[str],
                 whole: bool) -> list[tuple[Any, list[Any], bool]]:
    """(key, values of `cols`, whether the row is the owner's own) for the rows in scope
    whose columns, as text, hold one of `probes` (every row of the owner's when `whole`).
    scope: "user" (user_id is the owner), "session" (a session of the owner, or none),
    "all"."""
    where: sql.Composable
    if scope == "user":
        where = sql.SQL("user_id IS NOT DISTINCT FROM %(owner)s")
        mine = sql.SQL("true")
    elif scope == "session":
        where = sql.SQL("(session_id = ANY(%(sessions)s) OR session_id IS NULL)")
        mine = sql.SQL("session_id IS NOT NULL")
    else:
        where, mine = sql.SQL("true"), sql.SQL("false")
    body = sql.SQL("concat_ws(chr(31), {})").format(sql.SQL(", ").join(
        sql.SQL("{}::text").format(sql.Identifier(c)) for c in cols))
    holding = sql.SQL("EXISTS (SELECT 1 FROM unnest(%(probes)s::text[]) p "
                      "WHERE strpos({}, p) > 0)").format(body)
    if whole and scope != "all":
        where = sql.SQL("{} AND ({} OR {})").format(where, mine, holding)
    else:
        if not probes:
            return []
        where = sql.SQL("{} AND {}").format(where, holding)
    query = sql.SQL("SELECT {}, {}, {} FROM {} WHERE {}").format(
        sql.Identifier(key), sql.SQL(", ").join(sql.Identifier(c) for c in cols), mine,
        sql.Identifier(table), where)
    rows = conn.execute(query, {"owner": owner, "sessions": sessions, "probes": probes})
    return [(r[0], list(r[1:-1]), bool(r[-1])) for r in rows]


def delete_keys(conn: psycopg.Connection[Any], table: str, key: str, keys: list[Any]) -> int:
    return conn.execute(sql.SQL("DELETE FROM {} WHERE {} = ANY(%s)").format(
        sql.Identifier(table), sql.Identifier(key)), (keys,)).rowcount


def rewrite(conn: psycopg.Connection[Any], table: str, key: str, cols: Sequence[str],
            jsons: Sequence[str], row_key: Any, values: Sequence[Any]) -> None:
    """Set the columns of one row (JSON columns from JSON text)."""
    sets = sql.SQL(", ").join(
        sql.SQL("{} = %s" + ("::jsonb" if c in jsons else "")).format(sql.Identifier(c))
        for c in cols)
    conn.execute(sql.SQL("UPDATE {} SET {} WHERE {} = %s").format(
        sql.Identifier(table), sets, sql.Identifier(key)), (*values, row_key))
