"""process_heartbeats rows: one per running cogd process (v_processes shows them)."""

from __future__ import annotations

import json
import os
import socket
from typing import Any

import psycopg


class Heartbeat:
    def __init__(self, conn: psycopg.Connection[Any], name: str) -> None:
        self.conn = conn  # autocommit connection owned by the caller
        self.name = name
        self.pid = os.getpid()
        self.host = socket.gethostname()
        self.id: int | None = None

    def register(self, prune_after_s: float, state: str = "running") -> None:
        # stale rows of processes that died without saying so
        self.conn.execute(
            "DELETE FROM process_heartbeats WHERE last_beat < now() - make_interval(secs => %s)",
            (prune_after_s,),
        )
        row = self.conn.execute(
            """
            INSERT INTO process_heartbeats (name, pid, host, state)
            VALUES (%s, %s, %s, %s)
            ON CONFLICT (host, pid, name) DO UPDATE
               SET started_at = now(), last_beat = now(), state = EXCLUDED.state
            RETURNING id""",
            (self.name, self.pid, self.host, state),
        ).fetchone()
        assert row is not None
        self.id = int(row[0])

    def beat(self, state: str = "running", info: dict[str, Any] | None = None) -> None:
        self.conn.execute(
            "UPDATE process_heartbeats SET last_beat = now(), state = %s, "
            "info = coalesce(%s::jsonb, info) WHERE id = %s",
            (state, None if info is None else json.dumps(info), self.id),
        )

    def stopped(self) -> None:
        self.conn.execute(
            "UPDATE process_heartbeats SET last_beat = now(), state = 'stopped' WHERE id = %s",
            (self.id,),
        )
