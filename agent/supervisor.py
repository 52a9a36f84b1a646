"""`cogd up`: migrate, then run each worker as a child process and keep it running.

A crashed child is restarted with exponential backoff (reset once it has stayed up
for [process] restart_stable_after_s). SIGINT/SIGTERM stop every child (SIGTERM,
then SIGKILL after the grace period) and exit 0. One supervisor of the singleton workers
(consolidate, idle) per database: an advisory lock. A supervisor of loop workers only
(`cogd up --workers loop`) takes none: loops scale out, one `cogd up` per host against one
database (the inbox claim keeps every message to one of them; docs/scaling.md).
On the embedded server, a database that crashed (a killed postmaster) is started again at
the next heartbeat, and Postgres recovers from its WAL as it starts; one stopped on
purpose (`cogd down`) stays stopped.

Children die with the supervisor: on Linux each child asks the kernel for SIGTERM
when its parent dies (PR_SET_PDEATHSIG), so a supervisor killed with -9 leaves no
orphans holding singleton locks, and a new `cogd up` starts cleanly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import psycopg

from agent.config import Settings
from agent.db import locks
from agent.db.connect import application_name, connect
from agent.db.pool import side_pool
from agent.errors import AlreadyRunning, CogdError
from agent.heartbeat import Beater
from agent.workers.base import SUPERVISOR_PID_ENV

logger = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
# workers that any number of processes may run against one database: a loop claims each
# inbox message under a lease (agent/inbox.py), and the schema allows one reply per message
SCALE_OUT = frozenset({"loop"})


def _die_with_parent(parent: int) -> Callable[[], None] | None:
    """A preexec_fn that makes the child get SIGTERM when the supervisor dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def arm() -> None:
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # the supervisor died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


@dataclass
class Child:
    name: str
    argv: list[str]
    proc: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    restarts: int = 0
    backoff_s: float = 0.0
    restart_at: float | None = None
    exits: list[int] = field(default_factory=list)


class Supervisor:
    def __init__(
        self,
        settings: Settings,
        url: str,
        workers: Sequence[str],
        *,
        stop: threading.Event | None = None,
        on_event: Callable[[str], None] | None = None,
        restart_db: Callable[[], bool] | None = None,
    ) -> None:
        self.settings = settings
        self.url = url
        # when the database is unreachable: start the embedded server again if it
        # crashed (True when it did); None for a server cogd does not own (DATABASE_URL)
        self.restart_db = restart_db
        self.stop = stop or threading.Event()
        self.lost_lock = False  # another `cogd up` holds the lock now: run() returns 1
        self.say = on_event or (lambda msg: logger.info("%s", msg))
        exe = [sys.executable, "-m", "agent.cli"]
        self.children = [Child(name=w, argv=[*exe, w]) for w in workers]
        # the supervisor lock, unless it runs scale-out workers only (a second supervisor
        # would run a singleton twice)
        self.exclusive = not workers or not set(workers) <= SCALE_OUT

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        # children attach to the server we resolved, logged in as the app role (`url` is
        # the app URL); the owner's URL stays with `cogd up`
        env["DATABASE_URL"] = self.url
        env.pop("COGD_DATABASE_URL", None)  # it would win over DATABASE_URL
        env.pop("COGD_APP_DATABASE_URL", None)
        # a worker checks that its parent is still this process (Worker._stop_if_orphaned)
        env[SUPERVISOR_PID_ENV] = str(os.getpid())
        return env

    def _spawn(self, child: Child) -> None:
        child.proc = subprocess.Popen(child.argv, env=self._env(),
                                      preexec_fn=_die_with_parent(os.getpid()))
        child.started_at = time.monotonic()
        child.restart_at = None
        self.say(f"started {child.name} (pid {child.proc.pid})")

    def install_signal_handlers(self) -> None:
        def _stop(signum: int, frame: FrameType | None) -> None:
            self.stop.set()

        signal.signal(signal.SIGINT, _stop)
        signal.signal(signal.SIGTERM, _stop)

    def run(self) -> int:
        proc_cfg = self.settings.process
        lock_conn = self._lock_connection()
        try:
            if self.exclusive:
                locks.take(lock_conn, "up", command="cogd up")
        except AlreadyRunning:
            lock_conn.close()
            raise
        pool = side_pool(self.settings, self.url, "up", role=False)
        beater = Beater(pool.connection, "up", proc_cfg, self.info).open()
        try:
            for child in self.children:
                self._spawn(child)
            next_check = 0.0
            while not self.stop.is_set():
                self._reap_and_restart()
                if time.monotonic() >= next_check:
                    lock_conn = self._check_lock(lock_conn)
                    next_check = time.monotonic() + proc_cfg.heartbeat_interval_s
                self.stop.wait(0.2)
        finally:
            self._stop_children()
            beater.close()
            pool.close()
            with contextlib.suppress(psycopg.Error):
                lock_conn.close()
        return 1 if self.lost_lock else 0

    def _lock_connection(self) -> psycopg.Connection[Any]:
        return connect(self.url, app=application_name(self.settings, "up"), autocommit=True)

    def _check_lock(self, lock_conn: psycopg.Connection[Any]) -> psycopg.Connection[Any]:
        """The supervisor lock's connection still answers; when Postgres went away, keep
        the children running, reconnect and take the lock again (returns the connection
        in use)."""
        try:
            lock_conn.execute("SELECT 1")
            return lock_conn
        except psycopg.OperationalError as exc:
            self.say(f"database unreachable ({' '.join(str(exc).split())[:200]}); "
                     "the workers keep running and reconnect on their own")
        if self.restart_db is not None:
            try:
                if self.restart_db():
                    self.say("the embedded Postgres had crashed; started it again "
                             "(it recovers from its WAL)")
            except Exception as exc:  # the supervisor must outlive a failed restart
                self.say(f"could not start the embedded Postgres again ({exc}); "
                         "trying again at the next heartbeat")
        try:
            lock_conn.close()
            fresh = self._lock_connection()
        except CogdError:
            return lock_conn  # still down; the next check tries again
        try:
            if self.exclusive:
                locks.take(fresh, "up", command="cogd up")
        except AlreadyRunning:
            # two supervisors would run every worker twice: this one gives way
            self.say("another `cogd up` took the supervisor lock while the database was "
                     "away; stopping this one and its workers (the other keeps running)")
            self.lost_lock = True
            self.stop.set()
            return fresh
        self.say("database reachable again; supervisor reconnected")
        return fresh

    def info(self) -> dict[str, Any]:
        return {
            c.name: {
                "pid": c.proc.pid if c.proc else None,
                "alive": c.proc is not None and c.proc.poll() is None,
                "restarts": c.restarts,
                "last_exit": c.exits[-1] if c.exits else None,
            }
            for c in self.children
        }

    def _reap_and_restart(self) -> None:
        cfg = self.settings.process
        now = time.monotonic()
        for child in self.children:
            if child.proc is not None and child.restart_at is None:
                code = child.proc.poll()
                if code is None:
                    if now - child.started_at > cfg.restart_stable_after_s:
                        child.backoff_s = 0.0
                    continue
                child.exits.append(code)
                child.backoff_s = (
                    cfg.restart_backoff_initial_s
                    if child.backoff_s == 0
                    else min(child.backoff_s * 2, cfg.restart_backoff_max_s)
                )
                child.restart_at = now + child.backoff_s
                self.say(
                    f"{child.name} exited with {code}; restarting in {child.backoff_s:.1f}s"
                )
            if child.restart_at is not None and now >= child.restart_at:
                child.restarts += 1
                self._spawn(child)

    def _stop_children(self) -> None:
        grace = self.settings.process.shutdown_grace_s
        live = [c for c in self.children if c.proc is not None and c.proc.poll() is None]
        for child in live:
            assert child.proc is not None
            child.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for child in live:
            assert child.proc is not None
            try:
                child.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.say(f"{child.name} did not stop within {grace:.0f}s; killing it")
                child.proc.kill()
                child.proc.wait()
        self.say("all workers stopped")
