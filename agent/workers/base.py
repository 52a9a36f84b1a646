"""The shape every worker process shares (STYLE.md "Processes").

SIGINT/SIGTERM set a stop event; the loop finishes the item in hand and exits 0. An item
that does not finish within [process] shutdown_grace_s (a stuck turn) does not hold the
process: it exits then with EXIT_STUCK, as a crash would (a loop's claim dies with its
connection, and the message is taken over, its attempt counted: agent/inbox.py).
Each worker registers a heartbeat row, sets application_name, LISTENs on its
channels and also polls every few seconds for work a dropped notification hid.
Singletons take a Postgres advisory lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, ClassVar

import psycopg

from agent.bus import Channel, Event, Kind, Listener
from agent.config import Settings
from agent.db import locks
from agent.db.connect import app_role, application_name, connect
from agent.errors import AlreadyRunning, CogdError, DatabaseError
from agent.heartbeat import Beater

if TYPE_CHECKING:
    from agent.db.pool import SidePool

logger = logging.getLogger(__name__)

EXIT_STUCK = 3  # stopped on a signal, but the item in hand did not finish within the grace
# set by the supervisor in its children's environment (agent/supervisor.py): its pid
SUPERVISOR_PID_ENV = "COGD_SUPERVISOR_PID"
ORPHAN_POLL_S = 1.0  # how often a supervised worker checks that its supervisor lives


class Worker:
    """Subclasses set `name`, `channels` and `on` (a handler per event kind), and
    implement `poll`."""

    name = "worker"
    channels: Sequence[Channel] = ()
    singleton = False
    # the one dispatcher (`handle`) calls on[event.type](event) for each event, then
    # poll() once; kinds not named here (a reconnect, an inbox wake-up) only wake the poll
    on: ClassVar[Mapping[Kind, str]] = {}

    def __init__(self, settings: Settings, url: str, stop: threading.Event | None = None) -> None:
        self.settings = settings
        self.url = url
        self.stop = stop or threading.Event()
        self.app = application_name(settings, self.name)
        self.conn: psycopg.Connection[Any] | None = None
        self.items_done = 0
        self.signalled: int | None = None  # the signal that asked this worker to stop
        self.stopped = threading.Event()  # run() has closed everything: nothing to wait for
        self.running = threading.Event()  # run() was entered: there may be an item in hand
        # the composition root: the side pool and whatever setup() builds (agent/runtime.py;
        # imported here: it loads the provider factory, which a CLI command may not need)
        from agent.runtime import Runtime

        self.runtime = Runtime(settings, url=url, process=self.name)

    # --- to override -------------------------------------------------------
    def setup(self) -> None:
        """Open resources (models, ...) once, after the database is reachable."""

    def teardown(self) -> None:
        """Release what setup() opened (runs on every exit)."""

    def handle(self, events: list[Event]) -> None:
        """Dispatch notifications to their handlers, then poll: a notification is a
        wake-up, the rows are the work."""
        for event in events:
            handler = self.on.get(event.type)
            if handler is not None:
                getattr(self, handler)(event)
        self.poll()

    def poll(self) -> None:
        """Find and do work that is waiting, notified or not."""

    def info(self) -> dict[str, Any]:
        return {"items_done": self.items_done}

    # --- lifecycle ---------------------------------------------------------
    def _connect(self) -> psycopg.Connection[Any]:
        """The worker's own autocommit connection (its main work, and LISTEN)."""
        return connect(self.url, app=self.app, autocommit=True, role=app_role(self.settings))

    @property
    def pool(self) -> SidePool:
        """The worker's pool for side work: heartbeat, lease, partial replies, llm_calls
        (the Runtime's; opened on first use, closed when the worker stops)."""
        return self.runtime.pool

    def close_pool(self) -> None:
        self.runtime.close_pool()

    def install_signal_handlers(self) -> None:
        def _stop(signum: int, frame: FrameType | None) -> None:
            # only set the flag: a handler that logs can be re-entered by a second signal
            # mid-import (a lazy import in the log handler) and raise into the work, and
            # never set the flag; the loop says which signal stopped it
            self.signalled = self.signalled or signum
            self.stop.set()

        signal.signal(signal.SIGINT, _stop)
        signal.signal(signal.SIGTERM, _stop)
        # started here, not in the handler (a thread started inside a signal handler can
        # deadlock on threading's own locks): waits for the stop, then for the grace
        threading.Thread(target=self._exit_if_stuck, name=f"{self.name}-shutdown",
                         daemon=True).start()
        supervisor = os.environ.get(SUPERVISOR_PID_ENV, "")
        if supervisor.isdigit():
            threading.Thread(target=self._stop_if_orphaned, args=(int(supervisor),),
                             name=f"{self.name}-orphan", daemon=True).start()

    def _stop_if_orphaned(self, supervisor: int) -> None:
        """The supervisor's death, seen from a thread. The kernel sends SIGTERM when it
        dies (PR_SET_PDEATHSIG), but Python runs the handler only once the main thread is
        back in Python code: a loop worker whose main thread sat in native code for ten
        minutes (once in CI, after `kill -9` of its supervisor) never saw the stop. Once a
        second, the parent is checked; when it is no longer the supervisor, the stop is
        set as SIGTERM sets it, and the shutdown thread gives the item in hand its grace."""
        while not self.stopped.wait(ORPHAN_POLL_S):
            if os.getppid() != supervisor:
                self.signalled = self.signalled or signal.SIGTERM
                self.stop.set()
                return

    def _exit_if_stuck(self) -> None:
        """Once stop is set: give the item in hand [process] shutdown_grace_s, then exit
        the process (the signal's promise is a prompt stop, even when a turn is stuck)."""
        self.stop.wait()
        grace = float(self.settings.process.shutdown_grace_s)
        if self.stopped.wait(grace) or not self.running.is_set():
            return  # finished in time, or run() never started: no item can be stuck
        logger.error("%s: the item in hand did not finish within %.0f s of the stop "
                     "([process] shutdown_grace_s); exiting now, as a crash would", self.name,
                     grace)
        logging.shutdown()
        os._exit(EXIT_STUCK)

    def once(self) -> Any:
        """One pass of the worker's job (`--once`); workers with passes override it."""
        raise NotImplementedError(f"`cogd {self.name}` has no --once pass")

    def _lock(self) -> None:
        assert self.conn is not None
        if not self.singleton:
            return
        try:
            locks.take(self.conn, self.name)
        except AlreadyRunning:
            self.conn.close()
            raise

    def run_once(self) -> Any:
        """Connect, take the singleton lock, set up, run one pass, release everything."""
        self.conn = self._connect()
        try:
            held = (locks.singleton_lock(self.conn, self.name) if self.singleton
                    else contextlib.nullcontext())
            with held:
                self.setup()
                try:
                    return self.once()
                finally:
                    self.teardown()
        finally:
            self.close_pool()
            if not self.conn.closed:
                self.conn.close()

    def run(self) -> int:
        self.running.set()
        self.conn = self._connect()
        self._lock()
        beater = Beater(self.pool.connection, self.name, self.settings.process,
                        self.info).open(state="starting")
        try:
            self.setup()
            beater.running()
            listener = Listener(
                self._connect,
                self.channels,
                keepalive_s=self.settings.bus.keepalive_s,
                reconnect_delay_s=self.settings.bus.reconnect_delay_s,
            )
            next_poll = 0.0
            with listener:
                while not self.stop.is_set():
                    if time.monotonic() >= next_poll:
                        self._guarded(self.poll)
                        next_poll = time.monotonic() + self.settings.bus.poll_interval_s
                    wait = max(0.05, next_poll - time.monotonic())
                    wait = min(wait, self.settings.bus.listen_timeout_s)
                    events = listener.wait(wait) if self.channels else self._sleep(wait)
                    if events and not self.stop.is_set():
                        self._guarded(lambda ev=events: self.handle(ev))  # type: ignore[misc]
        finally:
            self._close(beater)
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
                self._lock()  # an advisory lock dies with its session: take it again
            except AlreadyRunning as taken:
                logger.error("%s: %s; stopping this one", self.name, taken)
                self.stop.set()
            except CogdError as again:
                logger.warning("%s: still unreachable: %s", self.name, again)

    def _close(self, beater: Beater) -> None:
        if self.signalled:
            logger.info("%s: signal %s, stopping after the item in hand", self.name,
                        self.signalled)
        try:
            self.teardown()
        except Exception as exc:  # teardown must not mask the shutdown
            logger.warning("%s: teardown failed: %s", self.name, exc)
        beater.close()  # marks the row stopped
        self.close_pool()
        if self.conn is not None and not self.conn.closed:
            self.conn.close()
        self.stopped.set()
