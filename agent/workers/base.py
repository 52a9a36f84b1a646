"""The shape every worker process shares (STYLE.md "Processes").

SIGINT/SIGTERM set a stop event; the loop finishes the item in hand and exits 0.
Each worker registers a heartbeat row, sets application_name, LISTENs on its
channels and also polls every few seconds for work a dropped notification hid.
Singletons take a Postgres advisory lock.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import zlib
from collections.abc import Sequence
from types import FrameType
from typing import Any

import psycopg

from agent.bus import Channel, Event, Listener
from agent.config import Settings
from agent.db.connect import app_role, application_name, connect
from agent.errors import CogdError, DatabaseError
from agent.heartbeat import Heartbeat

logger = logging.getLogger(__name__)


class AlreadyRunning(CogdError):
    """A singleton worker found its advisory lock taken."""


def advisory_key(name: str) -> int:
    return zlib.crc32(f"cogd:{name}".encode())


class Worker:
    """Subclasses set `name`, `channels`, and implement `handle` and `poll`."""

    name = "worker"
    channels: Sequence[Channel] = ()
    singleton = False

    def __init__(self, settings: Settings, url: str, stop: threading.Event | None = None) -> None:
        self.settings = settings
        self.url = url
        self.stop = stop or threading.Event()
        self.app = application_name(settings, self.name)
        self.conn: psycopg.Connection[Any] | None = None
        self.items_done = 0
        self.beat: Heartbeat

    # --- to override -------------------------------------------------------
    def setup(self) -> None:
        """Open resources (models, ...) once, after the database is reachable."""

    def teardown(self) -> None:
        """Release what setup() opened (runs on every exit)."""

    def handle(self, events: list[Event]) -> None:
        """React to notifications (they are wake-ups; poll() finds the work)."""
        self.poll()

    def poll(self) -> None:
        """Find and do work that is waiting, notified or not."""

    def info(self) -> dict[str, Any]:
        return {"items_done": self.items_done}

    # --- lifecycle ---------------------------------------------------------
    def _connect(self) -> psycopg.Connection[Any]:
        return connect(self.url, app=self.app, autocommit=True, role=app_role(self.settings))

    def install_signal_handlers(self) -> None:
        def _stop(signum: int, frame: FrameType | None) -> None:
            logger.info("%s: signal %s, finishing the item in hand", self.name, signum)
            self.stop.set()

        signal.signal(signal.SIGINT, _stop)
        signal.signal(signal.SIGTERM, _stop)

    def once(self) -> Any:
        """One pass of the worker's job (`--once`); workers with passes override it."""
        raise NotImplementedError(f"`cogd {self.name}` has no --once pass")

    def _lock(self) -> None:
        assert self.conn is not None
        if not self.singleton:
            return
        got = self.conn.execute(
            "SELECT pg_try_advisory_lock(%s)", (advisory_key(self.name),)
        ).fetchone()
        if not got or not got[0]:
            self.conn.close()
            raise AlreadyRunning(
                f"another `cogd {self.name}` holds the lock on this database "
                "(see `cogd status`); only one may run at a time"
            )

    def run_once(self) -> Any:
        """Connect, take the singleton lock, set up, run one pass, release everything."""
        self.conn = self._connect()
        try:
            self._lock()
            self.setup()
            try:
                return self.once()
            finally:
                self.teardown()
        finally:
            if not self.conn.closed:
                self.conn.close()

    def run(self) -> int:
        proc = self.settings.process
        self.conn = self._connect()
        self._lock()
        beat = self.beat = Heartbeat(self.conn, self.name)
        beat.register(proc.prune_after_s, state="starting")
        self.setup()
        beat.beat("running", self.info())
        listener = Listener(
            self._connect,
            self.channels,
            keepalive_s=self.settings.bus.keepalive_s,
            reconnect_delay_s=self.settings.bus.reconnect_delay_s,
        )
        next_poll = 0.0
        next_beat = time.monotonic() + proc.heartbeat_interval_s
        try:
            with listener:
                while not self.stop.is_set():
                    now = time.monotonic()
                    if now >= next_poll:
                        self._guarded(self.poll)
                        next_poll = time.monotonic() + self.settings.bus.poll_interval_s
                    if now >= next_beat:
                        self._guarded(lambda: beat.beat("running", self.info()))
                        next_beat = time.monotonic() + proc.heartbeat_interval_s
                    wait = max(0.05, min(next_poll, next_beat) - time.monotonic())
                    wait = min(wait, self.settings.bus.listen_timeout_s)
                    events = listener.wait(wait) if self.channels else self._sleep(wait)
                    if events and not self.stop.is_set():
                        self._guarded(lambda ev=events: self.handle(ev))  # type: ignore[misc]
        finally:
            self._close(beat)
        return 0

    def _sleep(self, seconds: float) -> list[Event]:
        self.stop.wait(seconds)
        return []

    def _guarded(self, fn: Any) -> None:
        """Database outages must not kill the worker: reconnect and carry on."""
        try:
            fn()
        except (psycopg.OperationalError, psycopg.InterfaceError, DatabaseError) as exc:
            # DatabaseError: a connection the work opened itself could not be made
            logger.warning("%s: database error (%s); reconnecting", self.name, exc)
            time.sleep(self.settings.bus.reconnect_delay_s)
            try:
                if self.conn is not None:
                    self.conn.close()
                self.conn = self._connect()
                self.beat.conn = self.conn
                self._lock()  # an advisory lock dies with its session: take it again
            except AlreadyRunning as taken:
                logger.error("%s: %s; stopping this one", self.name, taken)
                self.stop.set()
            except CogdError as again:
                logger.warning("%s: still unreachable: %s", self.name, again)

    def _close(self, beat: Heartbeat) -> None:
        try:
            self.teardown()
        except Exception as exc:  # teardown must not mask the shutdown
            logger.warning("%s: teardown failed: %s", self.name, exc)
        try:
            if self.conn is not None and not self.conn.closed:
                beat.conn = self.conn
                beat.stopped()
                self.conn.close()
        except psycopg.Error as exc:
            logger.warning("%s: could not mark heartbeat stopped: %s", self.name, exc)
