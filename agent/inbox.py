"""The inbox/outbox protocol, in one place: enqueue → claim → renew → publish_partial →
hold + complete | fail → reply_for. SQL in agent/db/sql/inbox.sql.

A client (`cogd chat`, later the HTTP API) enqueues a message under an idempotency key
(unique, revision 0008: a resend after a lost acknowledgement is the same message) and
waits for `reply_for`. A loop worker claims the oldest waiting message under a lease
([process] inbox_lease_s) that a LeaseKeeper renews while the turn runs; another loop
takes a 'processing' row over only when its lease ran out or the claiming connection is
gone. The reply, its outbox row and the 'done' mark commit together, and only while the
claim is still this loop's (`hold` locks the row in that transaction, or raises
LostClaim). A failure is answered through outbox with a clear error, under the same rule.

A poison message (revision 0020): each claim counts itself in inbox.attempts, in the
claiming statement, so a turn that crashed, was killed or timed out has used an attempt.
A message claimed more than [process] inbox_max_attempts times is not answered again:
`give_up` marks it 'failed' with the reason and answers the user with an error, and the
loop goes on to the messages behind it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import psycopg

from agent.bus import Channel, Kind, notify
from agent.db.queries import query
from agent.domain.text import storable_text
from agent.errors import DatabaseError, InputError

logger = logging.getLogger(__name__)

PARTIAL_EVERY_S = 0.25  # streamed replies: how often the partial text is published


class LostClaim(Exception):
    """The loop no longer owns the inbox row it was answering: nothing was written."""


class TooManyAttempts(Exception):
    """A message whose turns kept dying: claimed more than [process] inbox_max_attempts
    times without a reply (the reason `give_up` records and answers with)."""


@dataclass(frozen=True)
class Claimed:
    """A message this loop now answers; `claim` is what claimed_by says while it is ours."""

    id: int
    session_id: Any
    content: str
    stream: bool
    claim: str
    attempts: int = 1  # claims so far, this one included (revision 0020)


@dataclass(frozen=True)
class Reply:
    inbox_id: int
    content: str
    metadata: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"inbox_id": self.inbox_id, "reply": self.content, "metadata": self.metadata}


# -- the client's side -------------------------------------------------------

def enqueue(conn: psycopg.Connection[Any], session_id: Any, content: str, *, stream: bool,
            key: str) -> int:
    """The inbox row of this send: queued now (and notified), or the row a send with the
    same key already queued. `conn` is in autocommit; the row is acknowledged on return."""
    with conn.transaction():
        row = conn.execute(query("inbox_enqueue"), {
            "session_id": session_id, "content": content, "stream": stream, "key": key,
        }).fetchone()
        if row is None:
            found = queued(conn, key)
            assert found is not None  # the conflict that hid the insert is this row
            return found
        notify(conn, Channel.INBOX, Kind.INBOX, row[0])
    return int(row[0])


def queued(conn: psycopg.Connection[Any], key: str) -> int | None:
    """The inbox row queued under `key`, if a send whose commit was cut off did commit."""
    row = conn.execute(query("inbox_by_key"), {"key": key}).fetchone()
    return None if row is None else int(row[0])


def reply_for(conn: psycopg.Connection[Any], inbox_id: int,
              on_partial: Callable[[str], None] | None = None) -> Reply | None:
    """The reply to a message (marked delivered), or None while it is being answered;
    `on_partial` gets the streamed text so far."""
    row = conn.execute(query("outbox_reply"), {"id": inbox_id}).fetchone()
    if row:
        conn.execute(query("outbox_delivered"), {"id": row[0]})
        return Reply(inbox_id, row[1], row[2] or {})
    if on_partial is not None:
        part = conn.execute(query("inbox_partial_reply"), {"id": inbox_id}).fetchone()
        if part and part[0]:
            on_partial(part[0])
    return None


# -- the loop's side ---------------------------------------------------------

def claim(conn: psycopg.Connection[Any], me: str, lease_s: float) -> Claimed | None:
    """Claim the oldest waiting message (or one whose claimer is gone); None if none."""
    row = conn.execute(query("inbox_claim"), {"me": me, "lease": lease_s}).fetchone()
    if row is None:
        return None
    return Claimed(int(row[0]), row[1], row[2], bool(row[3]), row[4], int(row[5]))


def give_up(conn: psycopg.Connection[Any], msg: Claimed, max_attempts: int) -> bool:
    """A message claimed more than `max_attempts` times (the caller checks): mark it
    failed with the reason and answer the user with an error; False when the row was
    taken over meanwhile. Its earlier turns never finished: each claim counted."""
    earlier = msg.attempts - 1
    return fail(conn, msg, TooManyAttempts(
        f"this message was started {earlier} time{'s' * (earlier != 1)} and never finished "
        f"(the loop crashed, was stopped or timed out each time; [process] "
        f"inbox_max_attempts = {max_attempts}); it is not tried again: send it again "
        "shorter or in parts"))


def renew(conn: psycopg.Connection[Any], inbox_id: int, claim: str, lease_s: float) -> bool:
    """Extend the lease; False when the row is no longer this claim's."""
    cur = conn.execute(query("inbox_renew"), {"lease": lease_s, "id": inbox_id, "claim": claim})
    return cur.rowcount == 1


def publish_partial(conn: psycopg.Connection[Any], inbox_id: int, text: str) -> None:
    """The streamed reply so far, readable before the turn's transaction commits (`conn`
    is in autocommit)."""
    conn.execute(query("inbox_partial"), {"text": text, "id": inbox_id})
    notify(conn, Channel.OUTBOX, Kind.PARTIAL, inbox_id)


def hold(conn: psycopg.Connection[Any], inbox_id: int, claim: str) -> None:
    """Inside the reply's transaction: lock the row until commit, or raise LostClaim."""
    owned = conn.execute(query("inbox_hold"), {"id": inbox_id, "claim": claim}).fetchone()
    if owned is None:
        raise LostClaim(f"inbox {inbox_id} was taken over before its reply committed; "
                        "the new owner answers it")


def complete(conn: psycopg.Connection[Any], inbox_id: int, session_id: Any, reply: str,
             metadata: dict[str, Any]) -> int:
    """In the caller's transaction (after `hold`): the outbox row, the 'done' mark and the
    notification that wakes the client. Returns the outbox id."""
    out = conn.execute(query("outbox_insert"), {
        "inbox_id": inbox_id, "session_id": session_id, "content": reply,
        "metadata": json.dumps(metadata, default=str),
    }).fetchone()
    assert out is not None
    conn.execute(query("inbox_done"), {"id": inbox_id})
    notify(conn, Channel.OUTBOX, Kind.OUTBOX, out[0])
    return int(out[0])


def fail(conn: psycopg.Connection[Any], msg: Claimed, exc: Exception) -> bool:
    """Answer a message the loop could not answer with a clear error (bad input says
    '[rejected]'); False when the row was taken over meanwhile (its new owner answers)."""
    bad_input = isinstance(exc, InputError)
    message = (f"[rejected] {exc}" if bad_input
               else f"[error] not answered: {exc}" if isinstance(exc, TooManyAttempts)
               else f"[error] the loop could not answer: {exc.__class__.__name__}: {exc}")
    with conn.transaction():
        owned = conn.execute(query("inbox_failed"), {
            "error": f"{exc.__class__.__name__}: {exc}"[:2000], "id": msg.id,
            "claim": msg.claim,
        }).fetchone()
        if owned is None:
            return False
        # the error reaches the client through outbox; it is not a dialogue turn
        out = conn.execute(query("outbox_insert"), {
            "inbox_id": msg.id, "session_id": msg.session_id, "content": message[:4000],
            "metadata": json.dumps({"error": True, "bad_input": bad_input}),
        }).fetchone()
        assert out is not None
        notify(conn, Channel.OUTBOX, Kind.OUTBOX, out[0])
    return True


def last_reply_metadata(conn: psycopg.Connection[Any], session_id: Any) -> dict[str, Any] | None:
    """The metadata of the session's latest reply (None before the first)."""
    row = conn.execute(query("outbox_last_metadata"), {"session_id": session_id}).fetchone()
    return None if row is None else (row[0] or {})


# -- the loop's helpers, on connections borrowed from the worker's pool --------

Checkout = Callable[[], AbstractContextManager[psycopg.Connection[Any]]]


class LeaseKeeper:
    """Renews the claim its worker holds, every third of the lease, on a connection it
    borrows for each renewal (agent/db/pool.py) while the turn runs on the worker's own;
    `lost` is set when the held row is no longer this claim's."""

    def __init__(self, checkout: Checkout, lease_s: float, name: str = "lease") -> None:
        self.checkout, self.lease_s = checkout, lease_s
        self.lost = threading.Event()
        self._held: tuple[int, str] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
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

    def _renew(self, inbox_id: int, claim: str) -> None:
        with self.checkout() as conn:
            if renew(conn, inbox_id, claim, self.lease_s):
                return
        with self._lock:
            still_held = self._held == (inbox_id, claim)
            if still_held:  # not a turn that just finished
                self._held = None
                self.lost.set()
        if still_held:
            logger.warning("loop: inbox %s is no longer ours (%s)", inbox_id, claim)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


class PartialPublisher:
    """Publishes a streamed reply as it grows, at most every PARTIAL_EVERY_S, on a
    connection borrowed for each update (autocommit: a reader sees the text before the
    turn's transaction commits). `start(inbox_id)` before each streamed turn."""

    def __init__(self, checkout: Checkout) -> None:
        self.checkout = checkout
        self.inbox_id: int | None = None
        self.last = 0.0

    def start(self, inbox_id: int) -> PartialPublisher:
        self.inbox_id, self.last = inbox_id, 0.0
        return self

    def __call__(self, text: str) -> None:
        now = time.monotonic()
        if self.inbox_id is None or now - self.last < PARTIAL_EVERY_S:
            return
        self.last = now
        if not text.strip():
            return
        text, _ = storable_text(text)  # model text Postgres can store (NUL, lone surrogates)
        with self.checkout() as conn:
            publish_partial(conn, self.inbox_id, text)
