"""Singleton processes: one Postgres session-level advisory lock per name.

`cogd up`, each singleton worker (consolidate, idle) and the night cycle take the lock
of their name on a connection they keep; it is released when that connection closes, so
a process that dies frees it at once. A process that reconnects takes it again with
`take` (another may have taken it meanwhile: AlreadyRunning). The refusal names the
holder from process_heartbeats when it can.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterator
from typing import Any

import psycopg

from agent.db.queries import query
from agent.errors import AlreadyRunning


def advisory_key(name: str) -> int:
    return zlib.crc32(f"cogd:{name}".encode())


def take(conn: psycopg.Connection[Any], name: str, *, command: str | None = None,
         see: str = "`cogd status`") -> None:
    """Take the lock `name` on `conn`, or raise AlreadyRunning naming its holder.
    `command`: the command a user runs (default `cogd <name>`); `see`: where to look."""
    got = conn.execute(query("lock_try"), (advisory_key(name),)).fetchone()
    if got and got[0]:
        return
    where = ""
    with contextlib.suppress(psycopg.Error):
        row = conn.execute(query("lock_holder"), (name,)).fetchone()
        if row:
            where = f" (pid {row[0]} on {row[1]}, since {row[2]:%Y-%m-%d %H:%M:%S})"
    raise AlreadyRunning(
        f"{command or f'cogd {name}'} is already running on this database{where}; only one "
        f"may run at a time: stop it first (Ctrl-C or kill -TERM), or inspect it with {see}")


@contextlib.contextmanager
def singleton_lock(conn: psycopg.Connection[Any], name: str, *, command: str | None = None,
                   see: str = "`cogd status`") -> Iterator[None]:
    """Hold the lock `name` for the block (see `take`); released at its end, or when the
    connection closes, whichever comes first."""
    take(conn, name, command=command, see=see)
    try:
        yield
    finally:
        if not conn.closed:
            with contextlib.suppress(psycopg.Error):
                conn.execute(query("lock_release"), (advisory_key(name),))
