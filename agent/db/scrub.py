"""Table-driven SQL for forgetting (agent/services/memory/forget.py): the rows of a table that
hold some text, deleted or rewritten by key, and the erase of a whole user, whose tables
come from the schema (pg_catalog), not from a list. Tables and columns are quoted as
identifiers (psycopg.sql), never as text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from agent.db.queries import query


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
            jsons: Sequence[str], row_key: Any, values: Sequence[Any]) -> int:
    """Set the columns of one row (JSON columns from JSON text); 1, or 0 if it is gone."""
    sets = sql.SQL(", ").join(
        sql.SQL("{} = %s" + ("::jsonb" if c in jsons else "")).format(sql.Identifier(c))
        for c in cols)
    return conn.execute(sql.SQL("UPDATE {} SET {} WHERE {} = %s").format(
        sql.Identifier(table), sets, sql.Identifier(key)), (*values, row_key)).rowcount


# -- erasing a user, from the schema ------------------------------------------------------

USERS = "users"


@dataclass(frozen=True)
class ForeignKey:
    table: str
    cols: tuple[str, ...]
    parent: str
    refcols: tuple[str, ...]
    on_delete: str  # a no action, r restrict, c cascade, n set null, d set default
    nullable: bool  # every column of it may be NULL


@dataclass(frozen=True)
class Catalog:
    keys: dict[str, tuple[str, ...]]  # table -> primary key columns
    user_columns: dict[str, tuple[str, ...]]  # table -> the columns naming a user
    fks: tuple[ForeignKey, ...]


def catalog(conn: psycopg.Connection[Any]) -> Catalog:
    """The tables, the columns that name a user and the foreign keys of the public schema,
    read from pg_catalog (agent/db/sql/forget.sql)."""
    keys = {t: tuple(k) for t, k in conn.execute(query("forget_catalog_keys"))}
    users: dict[str, tuple[str, ...]] = {}
    for table, col in conn.execute(query("forget_catalog_user_columns")):
        users[table] = (*users.get(table, ()), col)
    fks = tuple(ForeignKey(t, tuple(c), p, tuple(r), d, bool(n))
                for t, c, p, r, d, n in conn.execute(query("forget_catalog_fks")))
    return Catalog(keys, users, fks)


def erase_user(conn: psycopg.Connection[Any], uid: Any,
               cat: Catalog | None = None) -> dict[str, int]:
    """Delete every row of the user `uid` and the user row, in the caller's transaction;
    rows deleted per table. Which rows, from the schema (no list of tables):
    - a row whose user column (a foreign key to users, or a column named user_id without
      one) names the user;
    - a row that points (a foreign key) at a row that goes, unless the key is ON DELETE
      SET NULL / SET DEFAULT (Postgres keeps the row and clears the pointer), or the row is
      another user's (a user column names someone else) and the key may be NULL: then the
      pointer is cleared and the row stays. A key of a table to itself (a block derived
      from, or continuing, another) is a link between peers: cleared when it may be NULL.
    The deletes run children first, in the order of the foreign-key graph."""
    cat = cat or catalog(conn)
    if not cat.keys.get(USERS):
        raise RuntimeError("the schema has no users table with a primary key")
    marks: dict[str, sql.Identifier] = {}

    def mark(table: str) -> sql.Identifier:
        """The temporary table of the keys of `table`'s rows that go."""
        if table not in marks:
            key = cat.keys.get(table)
            if not key:
                raise RuntimeError(f"table {table} has no primary key: forget cannot "
                                   "name its rows")
            marks[table] = sql.Identifier(f"_forget_{len(marks)}")
            conn.execute(sql.SQL("CREATE TEMP TABLE {} ON COMMIT DROP AS "
                                 "SELECT {} FROM {} WITH NO DATA").format(
                marks[table], _cols(key), sql.Identifier(table)))
        return marks[table]

    def add(table: str, where: sql.Composable, params: dict[str, Any]) -> int:
        key = _cols(cat.keys[table], "c")
        return conn.execute(sql.SQL(
            "INSERT INTO {m} SELECT {k} FROM {t} c WHERE ({w}) AND ({k}) NOT IN (TABLE {m})"
        ).format(m=mark(table), k=key, t=sql.Identifier(table), w=where), params).rowcount

    def pointing(fk: ForeignKey) -> sql.Composable:
        """Rows of fk.table whose key points at a row of fk.parent that goes."""
        return sql.SQL("({}) IN (SELECT {} FROM {} p WHERE ({}) IN (TABLE {}))").format(
            _cols(fk.cols, "c"), _cols(fk.refcols, "p"), sql.Identifier(fk.parent),
            _cols(cat.keys[fk.parent], "p"), mark(fk.parent))

    grown = [USERS] if add(USERS, sql.SQL("c.user_id = %(uid)s"), {"uid": uid}) else []
    for table, cols in cat.user_columns.items():
        if add(table, sql.SQL(" OR ").join(sql.SQL("c.{} = %(uid)s").format(
                sql.Identifier(c)) for c in cols), {"uid": uid}):
            grown.append(table)
    while grown:  # the rows that point at rows that go, to a fixed point
        parents, grown = set(grown), []
        for fk in cat.fks:
            if fk.parent not in parents or fk.on_delete in ("n", "d") or (
                    fk.table == fk.parent and fk.nullable):
                continue
            where = pointing(fk)
            owners = cat.user_columns.get(fk.table, ())
            if fk.nullable and fk.on_delete != "c" and owners:  # another user's: kept
                where = sql.SQL("{} AND {}").format(where, sql.SQL(" AND ").join(
                    sql.SQL("c.{} IS NULL").format(sql.Identifier(c)) for c in owners))
            if add(fk.table, where, {}):
                grown.append(fk.table)
    doomed = set(marks)
    for fk in cat.fks:  # the rows that stay lose their pointers at rows that go
        if (fk.parent in doomed and fk.nullable and fk.on_delete in ("a", "r")):
            conn.execute(sql.SQL("UPDATE {t} c SET {s} WHERE {w} AND ({k}) NOT IN (TABLE {m})")
                         .format(t=sql.Identifier(fk.table), s=sql.SQL(", ").join(
                             sql.SQL("{} = NULL").format(sql.Identifier(c)) for c in fk.cols),
                                 w=pointing(fk), k=_cols(cat.keys[fk.table], "c"),
                                 m=mark(fk.table)))
    removed = {}
    for table in delete_order(doomed, cat.fks):
        n = conn.execute(sql.SQL("DELETE FROM {} c WHERE ({}) IN (TABLE {})").format(
            sql.Identifier(table), _cols(cat.keys[table], "c"), marks[table])).rowcount
        if n:
            removed[table] = n
    return removed


def delete_order(tables: set[str], fks: Sequence[ForeignKey]) -> list[str]:
    """`tables` with every table before the tables it references by a key that would stop
    a delete (NO ACTION / RESTRICT; a key to itself is checked at the statement's end)."""
    after: dict[str, set[str]] = {t: set() for t in tables}  # table -> the tables deleted before it
    for fk in fks:
        if (fk.table in tables and fk.parent in tables and fk.table != fk.parent
                and fk.on_delete in ("a", "r")):
            after[fk.parent].add(fk.table)
    order: list[str] = []
    while after:
        ready = sorted(t for t, before in after.items() if not before - set(order))
        if not ready:
            raise RuntimeError("forget cannot order the deletes of "
                               f"{sorted(after)}: their foreign keys form a cycle")
        order += ready
        for t in ready:
            del after[t]
    return order


def _cols(cols: Sequence[str], alias: str | None = None) -> sql.Composable:
    return sql.SQL(", ").join(sql.Identifier(*((alias, c) if alias else (c,))) for c in cols)


def analyze(conn: psycopg.Connection[Any], tables: Sequence[str]) -> list[str]:
    """Refresh the planner statistics of `tables` (those of the public schema among them):
    pg_stats keeps sampled column values (most common values, histogram bounds), so a
    forgotten text stays there until the next ANALYZE. The tables analysed."""
    known = {r[0] for r in conn.execute(query("forget_catalog_keys"))}
    done = sorted(set(tables) & known)
    for table in done:
        conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
    return done
