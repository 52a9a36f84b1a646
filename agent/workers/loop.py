"""The cognitive loop worker: inbox → one turn of agent/memory/cognition.py → outbox.

Claims inbox rows (SKIP LOCKED, so several loops can share the work) under a lease
(revision 0008): the claim lasts [process] inbox_lease_s and a LeaseKeeper renews it
while the turn runs, however long the model takes. Another loop takes a 'processing'
row over only when its lease ran out or the claiming connection is gone (the loop was
killed, or Postgres restarted). The user turn is committed to day_table with its
embeddings before any model runs and is keyed by inbox_id (unique with the role), so a
takeover continues the turn instead of writing it twice; the reply, its outbox row and
the 'done' mark commit together, and only while this loop still owns the claim (a loop
that lost it rolls back). Bad input (an empty message) is answered with a clear error
through outbox.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from typing import Any

import psycopg

from agent.bus import Channel, notify
from agent.db.connect import app_role
from agent.errors import DatabaseError, InputError
from agent.memory.cognition import LostClaim
from agent.memory.turns import storable_text
from agent.workers.base import Worker

logger = logging.getLogger(__name__)

PARTIAL_EVERY_S = 0.25  # streamed replies: how often the partial text is published

# claimed_by ends in the claiming backend's pid: a row whose claimer's connection is
# gone is taken over at once instead of when its lease runs out. A row claimed before
# revision 0008 has no lease: its claim time plus one lease counts.
CLAIM = """
UPDATE inbox SET status = 'processing',
                 claimed_by = %(me)s || ' pid=' || pg_backend_pid(), claimed_at = now(),
                 lease_until = now() + make_interval(secs => %(lease)s)
WHERE id = (
    SELECT id FROM inbox
    WHERE status = 'pending'
       OR (status = 'processing' AND (
             coalesce(lease_until, claimed_at + make_interval(secs => %(lease)s)) < now()
             OR NOT EXISTS (
                 SELECT 1 FROM pg_stat_activity a
                 WHERE a.pid = substring(inbox.claimed_by FROM ' pid=([0-9]+)$')::int)))
    ORDER BY id
    FOR UPDATE SKIP LOCKED
    LIMIT 1)
RETURNING id, session_id, content, stream, claimed_by
"""
RENEW = """
UPDATE inbox SET lease_until = now() + make_interval(secs => %(lease)s)
WHERE id = %(id)s AND claimed_by = %(claim)s AND status = 'processing'
"""


class LeaseKeeper:
    """Renews the claim its worker holds, every third of the lease, on a connection of its
    own (one per worker, opened on first use) while the turn runs on the worker's;
    `lost` is set when the held row is no longer this claim's."""

    def __init__(self, url: str, app: str, lease_s: float, role: str | None = None) -> None:
        self.url, self.app, self.role, self.lease_s = url, app, role, lease_s
        self.lost = threading.Event()
        self._held: tuple[int, str] | None = None
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"{app}-lease", daemon=True)
        self._thread.start()

    def hold(self, inbox_id: int, claim: str) -> None:
        with self._lock:
            self._held = (inbox_id, claim)
            self.lost.clear()

    def release(self) -> None:
        with self._lock:
            self._held = None

    def _run(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            with self._lock:
                held = self._held
            if held is None:
                continue
            try:
                self._renew(*held)
            except (psycopg.Error, DatabaseError) as exc:  # the commit checks the claim again
                logger.warning("loop: renewing the lease on inbox %s failed: %s", held[0], exc)
                self._drop_connection()

    def _renew(self, inbox_id: int, claim: str) -> None:
        from agent.db.connect import connect

        if self._conn is None:
            self._conn = connect(self.url, app=f"{self.app}-lease", autocommit=True,
                                 role=self.role)
        cur = self._conn.execute(RENEW, {"lease": self.lease_s, "id": inbox_id,
                                         "claim": claim})
        if cur.rowcount != 1:
            with self._lock:
                still_held = self._held == (inbox_id, claim)
                if still_held:  # not a turn that just finished
                    self._held = None
                    self.lost.set()
            if still_held:
                logger.warning("loop: inbox %s is no longer ours (%s)", inbox_id, claim)

    def _drop_connection(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = None

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._drop_connection()


class LoopWorker(Worker):
    name = "loop"
    channels = (Channel.INBOX,)

    def setup(self) -> None:
        from agent.db.llm_calls import PgCallRecorder
        from agent.memory.cognition import CognitiveLoop

        self.recorder = PgCallRecorder(self.url, app_role(self.settings))
        self.loop = CognitiveLoop(self.settings, self.recorder)
        self.lease_s = float(self.settings.process.inbox_lease_s)
        self.keeper = LeaseKeeper(self.url, self.app, self.lease_s, app_role(self.settings))

    def teardown(self) -> None:
        self.keeper.close()
        self.recorder.close()

    def poll(self) -> None:
        while not self.stop.is_set() and self.process_one():
            pass

    def process_one(self) -> bool:
        """Answer one inbox message; False when none is waiting."""
        assert self.conn is not None
        # "cogd-loop@host os=<pid> pid=<backend pid>": which process holds a message
        row = self.conn.execute(CLAIM, {"me": f"{self.app} os={os.getpid()}",
                                        "lease": self.lease_s}).fetchone()
        if row is None:
            return False
        inbox_id, session_id, content, stream, claim = row
        self.keeper.hold(inbox_id, claim)
        publisher = (PartialPublisher(self.url, self.app, inbox_id, app_role(self.settings))
                     if stream else None)
        try:
            self.loop.answer(self.conn, session_id, content, inbox_id=inbox_id,
                             on_partial=publisher, claim=claim)
        except (psycopg.OperationalError, psycopg.InterfaceError):
            raise  # the row stays claimed and is reclaimed once this connection is gone
        except LostClaim as exc:
            logger.warning("loop: %s", exc)  # another loop answers it; nothing written here
        except Exception as exc:
            if not isinstance(exc, InputError):
                logger.exception("loop: inbox %s failed", inbox_id)
            self._fail(inbox_id, session_id, exc, claim)
        finally:
            self.keeper.release()
            if publisher is not None:
                publisher.close()
        self.items_done += 1
        return True

    def _fail(self, inbox_id: int, session_id: Any, exc: Exception, claim: str) -> None:
        assert self.conn is not None
        bad_input = isinstance(exc, InputError)
        message = (f"[rejected] {exc}" if bad_input
                   else f"[error] the loop could not answer: {exc.__class__.__name__}: {exc}")
        with self.conn.transaction():
            owned = self.conn.execute(
                "UPDATE inbox SET status = 'failed', error = %s, processed_at = now() "
                "WHERE id = %s AND claimed_by = %s AND status = 'processing' RETURNING id",
                (f"{exc.__class__.__name__}: {exc}"[:2000], inbox_id, claim),
            ).fetchone()
            if owned is None:  # taken over meanwhile: the new owner answers it
                logger.warning("loop: inbox %s failed here but is no longer ours", inbox_id)
                return
            # the error reaches the REPL through outbox; it is not a dialogue turn
            out = self.conn.execute(
                "INSERT INTO outbox (inbox_id, session_id, content, metadata) "
                "VALUES (%s, %s, %s, %s::jsonb) RETURNING id",
                (inbox_id, session_id, message[:4000],
                 json.dumps({"error": True, "bad_input": bad_input})),
            ).fetchone()
            assert out is not None
            notify(self.conn, Channel.OUTBOX, "outbox", out[0])


class PartialPublisher:
    """Publishes a streamed reply as it grows, at most every PARTIAL_EVERY_S.

    Its own autocommit connection, so a reader sees the text before the turn's
    transaction commits.
    """

    def __init__(self, url: str, app: str, inbox_id: int, role: str | None = None) -> None:
        self.url = url
        self.role = role
        self.app = f"{app}-stream"
        self.inbox_id = inbox_id
        self.last = 0.0
        self.conn: psycopg.Connection[Any] | None = None

    def __call__(self, text: str) -> None:
        now = time.monotonic()
        if now - self.last < PARTIAL_EVERY_S:
            return
        self.last = now
        if not text.strip():
            return
        text, _ = storable_text(text)  # model text Postgres can store (NUL, lone surrogates)
        if self.conn is None:
            from agent.db.connect import connect

            self.conn = connect(self.url, app=self.app, autocommit=True, role=self.role)
        self.conn.execute("UPDATE inbox SET partial_reply = %s WHERE id = %s",
                          (text, self.inbox_id))
        notify(self.conn, Channel.OUTBOX, "partial", self.inbox_id)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
