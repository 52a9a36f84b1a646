"""One connection pool per process for its side work (psycopg_pool).

A process keeps one connection of its own for its main work (the worker's loop, the
supervisor's lock) and one for LISTEN; everything beside it (the heartbeat, the inbox
lease, streamed partial replies, the llm_calls record) borrows a connection from the
process's pool for one statement and gives it back; the loop's recall borrows one for its
memories' dense list, which runs beside the other lists (agent/services/memory/recall.py). The
pool opens connections on demand (none while idle), checks one before lending it (a
connection a Postgres restart broke is replaced, not handed out) and gives up after
[database] connect_timeout_s with PoolTimeout, an OperationalError like a failed connect.

The check before lending (`check_before_lending`) asks the server (a round trip,
psycopg_pool's check_connection) only for a connection opened or given back more than
RECHECK_AFTER_S ago, or one with bytes waiting on its socket: an idle connection receives
nothing unless the server ended it (its termination message, or the end of the stream when
the server restarts). A connection given back moments ago with nothing to read is lent
as it is, as pgbouncer lends a server connection released less than server_check_delay
(30 s) ago: the loop's recall borrows one for every turn, and the round trip was ~0.3 ms
of a 10k recall's ~14.
"""

from __future__ import annotations

import select
import time
import weakref
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from agent.config import Settings
from agent.db.connect import app_role, application_name, set_role

# a connection lent for one statement or one transaction, given back on exit
Checkout = Callable[[], AbstractContextManager[psycopg.Connection[Any]]]

# heartbeat, lease, stream / llm_calls (rarely more than two at once), and the loop's recall,
# whose memories' dense list runs on a side connection beside the other lists (issue 15)
MAX_SIDE_CONNECTIONS = 4
RECHECK_AFTER_S = 30.0  # a connection idle longer is asked before it is lent again
# when each pooled connection was opened or last given back (SidePool.putconn)
_given_back: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = (
    weakref.WeakKeyDictionary())


class SidePool(ConnectionPool):
    """psycopg_pool's pool, noting when each connection is given back (a reset callback
    would return connections through the pool's worker, a moment later, so that a checkout
    right after could open a new one)."""

    def putconn(self, conn: psycopg.Connection[Any]) -> None:
        _given_back[conn] = time.monotonic()
        super().putconn(conn)


def check_before_lending(conn: psycopg.Connection[Any]) -> None:
    """Raise if `conn` is broken: a round trip unless it was opened or given back less
    than RECHECK_AFTER_S ago and its socket has nothing to read (see the module's docstring)."""
    last = _given_back.get(conn)
    if (last is not None and time.monotonic() - last < RECHECK_AFTER_S
            and not conn.closed and not select.select([conn.fileno()], [], [], 0)[0]):
        return
    ConnectionPool.check_connection(conn)


def side_pool(settings: Settings, url: str, process: str, *,
              role: str | bool | None = True) -> SidePool:
    """An open pool of autocommit connections named `cogd-<process>-side@host`, acting as
    [database] app_role (role=False: as the URL's user; a str: that role)."""
    act_as = app_role(settings) if role is True else (role or None)

    def configure(conn: psycopg.Connection[Any]) -> None:
        if act_as:
            set_role(conn, act_as)
        _given_back[conn] = time.monotonic()  # just opened: as good as checked

    return SidePool(
        url, min_size=0, max_size=MAX_SIDE_CONNECTIONS, open=True,
        name=f"{process}-side",
        kwargs={"autocommit": True,
                "application_name": application_name(settings, f"{process}-side"),
                "connect_timeout": max(1, int(settings.database.connect_timeout_s))},
        configure=configure, check=check_before_lending,
        timeout=float(settings.database.connect_timeout_s),
    )
