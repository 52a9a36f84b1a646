"""The inbox/outbox protocol, in one place: enqueue → claim → renew → publish_partial →
hold + complete | fail → reply_for. SQL in agent/db/sql/inbox.sql.

A client (`cogd chat`, `cogd serve`) enqueues a message under an idempotency key
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

The client's side is one class, `Client` (send, wait, reconnect), which `cogd chat` and
`cogd serve` both use; the loop's side is the loop worker (agent/workers/loop.py): it
claims, holds, completes and fails, handing the turn (agent/services/conversation/cognition.py) a
`delivery` callback that holds and completes inside the turn's commit.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import psycopg

from agent.bus import Channel, Kind, Listener, notify
from agent.db.connect import connect
from agent.db.queries import query
from agent.domain.text import clean_content, storable_text
from agent.errors import CogdError, DatabaseError, InputError

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


class NoReply(CogdError):
    """No reply before the deadline, or the wait was stopped (`stopped`); the message,
    when it was queued (`inbox_id`), is kept and answered when a loop runs."""

    def __init__(self, inbox_id: int | None, timeout_s: float, stopped: bool) -> None:
        self.inbox_id, self.timeout_s, self.stopped = inbox_id, timeout_s, stopped
        self.where = (f"inbox id {inbox_id} is kept and will be answered when a loop runs"
                      if inbox_id is not None else "the message was not queued: send it again")
        super().__init__(f"stopped before the reply ({self.where})" if stopped
                         else f"no reply within {timeout_s:.0f}s ({self.where})")


class Client:
    """The client's side on one connection of its own, for `cogd chat` and `cogd serve`:
    send a message (under a fresh idempotency key), wait for its reply (and the streamed
    text so far), reconnect when Postgres goes away and keep waiting until the deadline; a
    message whose commit was cut off is looked up by its key before it is queued again,
    so it is never queued twice.

    `listen`: wake on outbox NOTIFY (a LISTEN connection of its own; the REPL) rather than
    read every `poll_s` (`cogd serve`: one connection per request). `stopped`: a wait or a
    reconnect ends at once when it says so (NoReply with `stopped`). `say`: where a lost
    connection is reported."""

    def __init__(self, url: str, app: str, *, listen: bool = False, poll_s: float = 0.25,
                 stopped: Callable[[], bool] = lambda: False,
                 say: Callable[[str], None] | None = None) -> None:
        self.url, self.app, self.poll_s = url, app, poll_s
        self.stopped, self.say = stopped, say
        self.conn = connect(url, app=app, autocommit=True)
        self.listener: Listener | None = None
        if listen:
            self.listener = Listener(
                lambda: connect(url, app=f"{app}-listen", autocommit=True), [Channel.OUTBOX])
            try:
                self.listener.start()
            except BaseException:
                self.conn.close()
                raise
        self._using = threading.Lock()  # a wait in progress; close() waits for it

    def ask(self, session_id: Any, text: str, timeout_s: float,
            on_partial: Callable[[str], None] | None = None) -> Reply:
        """Send a message and wait for its reply (streamed to `on_partial` if given)."""
        deadline = time.monotonic() + timeout_s
        inbox_id = self.send(session_id, text, stream=on_partial is not None,
                             deadline=deadline)
        return self.wait(inbox_id, deadline, on_partial)

    def send(self, session_id: Any, text: str, *, stream: bool, deadline: float) -> int:
        """Queue `text` (cleaned; InputError when there is nothing to send); its inbox id,
        acknowledged once returned."""
        if not text.strip():
            raise InputError("empty message: nothing sent")
        content, _ = clean_content(text)  # NUL and undecodable bytes (surrogates) replaced
        key = uuid.uuid4().hex  # this send's idempotency key: a resend is the same message
        cut = False
        with self._using:
            while True:
                try:
                    found = queued(self.conn, key) if cut else None
                    return found if found is not None else enqueue(
                        self.conn, session_id, content, stream=stream, key=key)
                except psycopg.OperationalError as exc:
                    cut = True
                    if not self._reconnect(exc, deadline):
                        raise NoReply(None, deadline - time.monotonic(),
                                      self.stopped()) from None

    def wait(self, inbox_id: int, deadline: float,
             on_partial: Callable[[str], None] | None = None) -> Reply:
        """The reply to `inbox_id` (marked delivered); NoReply past `deadline` or when
        stopped. The query is the truth; a NOTIFY only wakes the wait early."""
        timeout_s = max(0.0, deadline - time.monotonic())
        with self._using:
            while not self.stopped() and time.monotonic() < deadline:
                try:
                    reply = reply_for(self.conn, inbox_id, on_partial)
                    if reply is not None:
                        return reply
                    self._nap(on_partial is not None)
                except psycopg.OperationalError as exc:
                    self._reconnect(exc, deadline)
        raise NoReply(inbox_id, timeout_s, self.stopped())

    def _nap(self, streaming: bool) -> None:
        if self.listener is not None:
            self.listener.wait(0.25 if streaming else 1.0)
        else:
            time.sleep(self.poll_s)

    def _reconnect(self, exc: Exception, deadline: float) -> bool:
        """A fresh connection (retried each second until the deadline or a stop); False
        when none came."""
        if self.say is not None:
            self.say(f"database connection lost ({' '.join(str(exc).split())[:160]}); "
                     "reconnecting")
        while not self.stopped() and time.monotonic() < deadline:
            try:
                if not self.conn.closed:
                    self.conn.close()
                self.conn = connect(self.url, app=self.app, autocommit=True)
                return True
            except CogdError:
                time.sleep(1.0)
        return False

    def close(self) -> None:
        """Close the connections, once a wait on another thread has ended (a stopped one
        ends within `poll_s`)."""
        with self._using:
            if self.listener is not None:
                self.listener.close()
            self.conn.close()


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


Delivery = Callable[[psycopg.Connection[Any], str, dict[str, Any]], None]


def delivery(msg: Claimed) -> Delivery:
    """What the loop hands a turn (Cognition.commit's `deliver`): called inside the
    turn's commit transaction with the reply and its metadata, it holds the row (or raises
    LostClaim: the transaction, the turn's writes with it, rolls back) and completes it.
    A takeover before the hold has claimed the row: the hold sees the new claim and
    raises; a claim after it waits on the row lock and then finds the message done."""

    def deliver(conn: psycopg.Connection[Any], reply: str, metadata: dict[str, Any]) -> None:
        hold(conn, msg.id, msg.claim)
        complete(conn, msg.id, msg.session_id, reply, metadata)

    return deliver


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
