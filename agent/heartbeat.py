"""process_heartbeats rows: one per running cogd process (v_processes shows them)."""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import psycopg

from agent.config import ProcessSettings
from agent.db.queries import query

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
            query("heartbeat_prune"),
            (prune_after_s,),
        )
        row = self.conn.execute(
            query("heartbeat_register"),
            (self.name, self.pid, self.host, state),
        ).fetchone()
        assert row is not None
        self.id = int(row[0])

    def beat(self, state: str = "running", info: dict[str, Any] | None = None) -> None:
        self.conn.execute(
            query("heartbeat_beat"),
            (state, None if info is None else json.dumps(info), self.id),
        )

    def stopped(self) -> None:
        self.conn.execute(
            query("heartbeat_stopped"),
            (self.id,),
        )


class Beater:
    """A process's heartbeat: its process_heartbeats row, registered at `open`, then beaten
    every [process] heartbeat_interval_s by a thread (a long transaction or a slow model
    never stalls it), and marked 'stopped' at `close`. Each beat borrows a connection from
    the process's pool (agent/db/pool.py); after an outage the next beat registers the row
    again. The one way every cogd process (`cogd up`, the workers, the night cycle) keeps
    its row; a failing heartbeat is logged and never stops the process's work."""

    def __init__(self, checkout: Callable[[], AbstractContextManager[psycopg.Connection[Any]]],
                 name: str, process: ProcessSettings, info: Callable[[], dict[str, Any]]
                 ) -> None:
        self.checkout, self.name, self.process, self.info = checkout, name, process, info
        self.state = "starting"
        self.id: int | None = None
        self._registered = False
        self._failing = False
        self._done = threading.Event()
        self._lock = threading.Lock()  # one write at a time, in the order they were asked
        self._thread = threading.Thread(target=self._run, name=f"{name}-heartbeat",
                                        daemon=True)

    def open(self, state: str = "running") -> Beater:
        """Register the row now (it shows in v_processes at once) and start beating."""
        self.state = state
        self._safely(self._register)
        self._thread.start()
        return self

    def running(self) -> None:
        """The process finished starting: say so now rather than at the next beat."""
        self.state = "running"
        self._safely(self._beat)

    def _register(self, conn: psycopg.Connection[Any]) -> None:
        beat = Heartbeat(conn, self.name)
        beat.register(self.process.prune_after_s, state=self.state)
        self.id, self._registered = beat.id, True

    def _beat(self, conn: psycopg.Connection[Any]) -> None:
        if not self._registered:
            self._register(conn)
            return
        beat = Heartbeat(conn, self.name)
        beat.id = self.id
        beat.beat(self.state, self._info())

    def _info(self) -> dict[str, Any]:
        try:
            return self.info()
        except Exception as exc:  # a process half set up: beat without its details
            return {"info_error": f"{exc.__class__.__name__}: {exc}"[:200]}

    def _safely(self, step: Callable[[psycopg.Connection[Any]], None]) -> None:
        with self._lock:
            try:
                with self.checkout() as conn:
                    step(conn)
                self._failing = False
            except Exception as exc:  # the process must not depend on its heartbeat
                if not self._failing:
                    logger.warning("%s: heartbeat failed (%s); trying again at the next beat",
                                   self.name, " ".join(str(exc).split())[:200])
                self._failing = True
                self._registered = False  # the server may be a new one: register again

    def _run(self) -> None:
        while not self._done.wait(self.process.heartbeat_interval_s):
            self._safely(lambda conn: None if self._done.is_set() else self._beat(conn))

    def close(self) -> None:
        """Stop beating and mark the row 'stopped' (registering it first if an outage
        lost it)."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(10)
        self.state = "stopped"

        def stopped(conn: psycopg.Connection[Any]) -> None:
            if not self._registered:
                self._register(conn)  # an upsert on (host, pid, name): the same row
            beat = Heartbeat(conn, self.name)
            beat.id = self.id
            beat.stopped()

        self._safely(stopped)
