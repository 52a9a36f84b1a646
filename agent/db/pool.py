"""One connection pool per process for its side work (psycopg_pool).

A process keeps one connection of its own for its main work (the worker's loop, the
supervisor's lock) and one for LISTEN; everything beside it (the heartbeat, the inbox
lease, streamed partial replies, the llm_calls record) borrows a connection from the
process's pool for one statement and gives it back; the loop's recall borrows one for its
memories' dense list, which runs beside the other lists (agent/services/recall.py). The
pool opens connections on demand (none while idle), checks one before lending it (a
connection a Postgres restart broke is replaced, not handed out) and gives up after
[database] connect_timeout_s with PoolTimeout, an OperationalError like a failed connect.
"""

from __future__ import annotations

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


def side_pool(settings: Settings, url: str, process: str, *,
              role: str | bool | None = True) -> ConnectionPool:
    """An open pool of autocommit connections named `cogd-<process>-side@host`, acting as
    [database] app_role (role=False: as the URL's user; a str: that role)."""
    act_as = app_role(settings) if role is True else (role or None)

    def configure(conn: psycopg.Connection[Any]) -> None:
        if act_as:
            set_role(conn, act_as)

    return ConnectionPool(
        url, min_size=0, max_size=MAX_SIDE_CONNECTIONS, open=True,
        name=f"{process}-side",
        kwargs={"autocommit": True,
                "application_name": application_name(settings, f"{process}-side"),
                "connect_timeout": max(1, int(settings.database.connect_timeout_s))},
        configure=configure, check=ConnectionPool.check_connection,
        timeout=float(settings.database.connect_timeout_s),
    )
