"""The cognitive loop worker: inbox → one turn of agent/memory/cognition.py → outbox.

Claims inbox rows (SKIP LOCKED, so several loops can share the work). The user
turn is committed to day_table with its embeddings before any model runs; a crash
later leaves the inbox row claimed, and it is reclaimed as soon as the claiming
connection is gone (or after a timeout) and continued (the user turn is keyed by
inbox_id, so it is never written twice; the reply turn carries the same inbox_id).
Bad input (an empty message) is answered with a clear error through outbox.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import psycopg

from agent.bus import Channel, notify
from agent.db.connect import app_role
from agent.errors import InputError
from agent.memory.turns import storable_text
from agent.workers.base import Worker

logger = logging.getLogger(__name__)

RECLAIM_AFTER_S = 300  # a row 'processing' this long belonged to a crashed loop
PARTIAL_EVERY_S = 0.25  # streamed replies: how often the partial text is published

# claimed_by ends in the claiming backend's pid: a row whose claimer's connection is
# gone (the loop was killed, or Postgres restarted) is taken over at once instead of
# after RECLAIM_AFTER_S.
CLAIM = """
UPDATE inbox SET status = 'processing',
                 claimed_by = %(me)s || ' pid=' || pg_backend_pid(), claimed_at = now()
WHERE id = (
    SELECT id FROM inbox
    WHERE status = 'pending'
       OR (status = 'processing' AND (
             claimed_at < now() - make_interval(secs => %(reclaim)s)
             OR NOT EXISTS (
                 SELECT 1 FROM pg_stat_activity a
                 WHERE a.pid = substring(inbox.claimed_by FROM ' pid=([0-9]+)$')::int)))
    ORDER BY id
    FOR UPDATE SKIP LOCKED
    LIMIT 1)
RETURNING id, session_id, content, stream
"""


class LoopWorker(Worker):
    name = "loop"
    channels = (Channel.INBOX,)

    def setup(self) -> None:
        from agent.db.llm_calls import PgCallRecorder
        from agent.memory.cognition import CognitiveLoop

        self.recorder = PgCallRecorder(self.url, app_role(self.settings))
        self.loop = CognitiveLoop(self.settings, self.recorder)

    def teardown(self) -> None:
        self.recorder.close()

    def poll(self) -> None:
        while not self.stop.is_set() and self.process_one():
            pass

    def process_one(self) -> bool:
        """Answer one inbox message; False when none is waiting."""
        assert self.conn is not None
        row = self.conn.execute(
            CLAIM, {"me": self.app, "reclaim": RECLAIM_AFTER_S}
        ).fetchone()
        if row is None:
            return False
        inbox_id, session_id, content, stream = row
        publisher = (PartialPublisher(self.url, self.app, inbox_id, app_role(self.settings))
                     if stream else None)
        try:
            self.loop.answer(self.conn, session_id, content, inbox_id=inbox_id,
                             on_partial=publisher)
        except (psycopg.OperationalError, psycopg.InterfaceError):
            raise  # the row stays claimed and is reclaimed once this connection is gone
        except Exception as exc:
            if not isinstance(exc, InputError):
                logger.exception("loop: inbox %s failed", inbox_id)
            self._fail(inbox_id, session_id, exc)
        finally:
            if publisher is not None:
                publisher.close()
        self.items_done += 1
        return True

    def _fail(self, inbox_id: int, session_id: Any, exc: Exception) -> None:
        assert self.conn is not None
        bad_input = isinstance(exc, InputError)
        message = (f"[rejected] {exc}" if bad_input
                   else f"[error] the loop could not answer: {exc.__class__.__name__}: {exc}")
        with self.conn.transaction():
            self.conn.execute(
                "UPDATE inbox SET status = 'failed', error = %s, processed_at = now() "
                "WHERE id = %s",
                (f"{exc.__class__.__name__}: {exc}"[:2000], inbox_id),
            )
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
