"""process_heartbeats rows: one per running cogd process (v_processes shows them)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

import psycopg

from agent.config import ProcessSettings
from agent.errors import CogdError

logger = logging.getLogger(__name__)


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


class Beater:
    """A process's heartbeat: its process_heartbeats row, registered at `open`, then beaten
    every [process] heartbeat_interval_s by a thread on a connection of its own (a long
    transaction or a slow model never stalls it), and marked 'stopped' at `close`. After
    an outage the thread reconnects at its next beat and registers the row again. The one
    way every cogd process (`cogd up`, the workers, the night cycle) keeps its row."""

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], name: str,
                 process: ProcessSettings, info: Callable[[], dict[str, Any]]) -> None:
        self.connect, self.name, self.process, self.info = connect, name, process, info
        self.state = "starting"
        self._beat: Heartbeat | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"{name}-heartbeat",
                                        daemon=True)

    def open(self, state: str = "running") -> Beater:
        """Register the row now (it shows in v_processes at once) and start beating."""
        self.state = state
        self._register()
        self._thread.start()
        return self

    def running(self) -> None:
        """The process finished starting: say so now rather than at the next beat."""
        self.state = "running"
        self._safely(lambda beat: beat.beat(self.state, self.info()))

    def _register(self) -> Heartbeat:
        beat = Heartbeat(self.connect(), self.name)
        beat.register(self.process.prune_after_s, state=self.state)
        self._beat = beat
        return beat

    def _safely(self, step: Callable[[Heartbeat], None]) -> None:
        try:
            step(self._beat or self._register())
        except (psycopg.Error, CogdError) as exc:  # the process must not depend on it
            if self._beat is not None:
                logger.warning("%s: heartbeat failed (%s); reconnecting at the next beat",
                               self.name, " ".join(str(exc).split())[:200])
                with contextlib.suppress(psycopg.Error):
                    self._beat.conn.close()
            self._beat = None

    def _run(self) -> None:
        while not self._done.wait(self.process.heartbeat_interval_s):
            self._safely(lambda beat: beat.beat(self.state, self.info()))

    def close(self) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(10)
        self._safely(lambda beat: beat.stopped())
        if self._beat is not None:
            with contextlib.suppress(psycopg.Error):
                self._beat.conn.close()
            self._beat = None
