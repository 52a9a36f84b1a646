"""LISTEN/NOTIFY: versioned channels, tiny JSON payloads, a resilient listener.

A notification is a wake-up, never the data: the row is the data, and every worker
also polls for work it may have missed (outbox pattern). See STYLE.md.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import psycopg

from agent.errors import DatabaseError

logger = logging.getLogger(__name__)

MAX_PAYLOAD_BYTES = 512  # Postgres allows 8000; ids only, so keep far below


class Channel(StrEnum):
    INBOX = "cogd_inbox_v1"  # a user message waits in inbox
    OUTBOX = "cogd_outbox_v1"  # a reply waits in outbox
    TURN = "cogd_turn_v1"  # a turn was written to day_table
    THOUGHT = "cogd_thought_v1"  # the DMN produced a thought
    NIGHT_CYCLE = "cogd_night_cycle_v1"  # a night-cycle run finished
    CONTROL = "cogd_control_v1"  # operator requests (stop, reload)


class Kind(StrEnum):
    """What a notification says happened; its `id` names the row."""

    INBOX = "inbox"  # inbox.id: a message was queued
    OUTBOX = "outbox"  # outbox.id: a reply (or a clear error) committed
    PARTIAL = "partial"  # inbox.id: more of a streamed reply
    TURN = "day_table"  # day_table.entry_id: a turn was written
    THOUGHT = "thought"  # thoughts.thought_id
    RUN_DONE = "run_done"  # night_cycle_runs.run_id
    RECONNECTED = "reconnected"  # synthetic (Listener): poll for what was missed
    STOP = "stop"  # operator requests
    RELOAD = "reload"
    PING = "ping"  # bench.speed's round trip: a ping on CONTROL, its pong on THOUGHT
    PONG = "pong"


# the kinds each channel carries: anything else is refused with its name
KINDS: dict[Channel, frozenset[Kind]] = {
    Channel.INBOX: frozenset({Kind.INBOX}),
    Channel.OUTBOX: frozenset({Kind.OUTBOX, Kind.PARTIAL}),
    Channel.TURN: frozenset({Kind.TURN}),
    Channel.THOUGHT: frozenset({Kind.THOUGHT, Kind.PONG}),
    Channel.NIGHT_CYCLE: frozenset({Kind.RUN_DONE}),
    Channel.CONTROL: frozenset({Kind.RECONNECTED, Kind.STOP, Kind.RELOAD, Kind.PING}),
}


@dataclass(frozen=True)
class Event:
    channel: Channel
    type: Kind
    id: str

    def payload(self) -> str:
        return json.dumps({"type": self.type, "id": self.id}, separators=(",", ":"))


class PayloadError(ValueError):
    """A notification payload that is not cogd's {"type", "id"} JSON."""


def parse(channel: str, payload: str) -> Event:
    """Parse a notification; raise PayloadError with the reason if it is malformed."""
    try:
        chan = Channel(channel)
    except ValueError:
        raise PayloadError(f"unknown channel {channel!r}") from None
    if len(payload.encode("utf-8", "replace")) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"payload over {MAX_PAYLOAD_BYTES} bytes on {channel}")
    try:
        data = json.loads(payload)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise PayloadError(f"payload on {channel} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PayloadError(f"payload on {channel} is not a JSON object")
    typ, ident = data.get("type"), data.get("id")
    if not isinstance(typ, str) or not typ or not isinstance(ident, str | int):
        raise PayloadError(f"payload on {channel} needs a string 'type' and an 'id'")
    if typ not in KINDS[chan]:
        raise PayloadError(f"unknown event type {typ[:40]!r} on {channel}; it carries: "
                           + ", ".join(sorted(KINDS[chan])))
    return Event(chan, Kind(typ), str(ident))


def notify(conn: psycopg.Connection[Any], channel: Channel, type: Kind, id: str | int) -> None:
    """Send one notification (delivered at commit of conn's transaction)."""
    if type not in KINDS[channel]:
        raise ValueError(f"{channel} does not carry {type!r} events")
    event = Event(channel, type, str(id))
    payload = event.payload()
    if len(payload.encode()) > MAX_PAYLOAD_BYTES:
        raise ValueError(f"notification payload too large: {len(payload)} bytes")
    conn.execute("SELECT pg_notify(%s, %s)", (channel.value, payload))


class Listener:
    """A dedicated autocommit connection that LISTENs, with keepalive and reconnect.

    `wait(timeout)` returns the events that arrived (possibly none). After a reconnect
    it returns a synthetic `reconnected` event so the caller polls for missed work.
    """

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        channels: Iterable[Channel],
        *,
        keepalive_s: float = 30.0,
        reconnect_delay_s: float = 1.0,
        on_bad_payload: Callable[[PayloadError], None] | None = None,
    ) -> None:
        self._connect = connect
        self.channels = tuple(channels)
        self.keepalive_s = keepalive_s
        self.reconnect_delay_s = reconnect_delay_s
        self._conn: psycopg.Connection[Any] | None = None
        self._last_io = 0.0
        self.bad_payloads = 0
        self.reconnects = 0
        self._on_bad_payload = on_bad_payload

    def _open(self) -> psycopg.Connection[Any]:
        conn = self._connect()
        if not conn.autocommit:
            conn.close()
            raise RuntimeError("Listener needs an autocommit connection")
        for chan in self.channels:
            conn.execute(f'LISTEN "{chan.value}"')
        self._last_io = time.monotonic()
        return conn

    def start(self) -> None:
        if self._conn is None:
            self._conn = self._open()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Listener:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait(self, timeout: float) -> list[Event]:
        """Events received within `timeout` seconds (returns early on the first batch)."""
        events: list[Event] = []
        try:
            if self._conn is None or self._conn.closed:
                self._conn = self._open()
            conn = self._conn
            for note in conn.notifies(timeout=timeout, stop_after=1):
                events.append(self._parse(note.channel, note.payload))
            # drain anything else already queued, without waiting
            for note in conn.notifies(timeout=0.0):
                events.append(self._parse(note.channel, note.payload))
            if time.monotonic() - self._last_io >= self.keepalive_s:
                conn.execute("SELECT 1")
            self._last_io = time.monotonic()
        except (psycopg.OperationalError, psycopg.InterfaceError, DatabaseError) as exc:
            # DatabaseError: the server was still away when the connection was reopened
            logger.warning("listener connection lost (%s); reconnecting", exc)
            self.close()
            self.reconnects += 1
            time.sleep(self.reconnect_delay_s)
            try:
                self._conn = self._open()
            except (psycopg.OperationalError, Exception) as again:
                logger.warning("listener reconnect failed: %s", again)
                self._conn = None
            events.append(Event(Channel.CONTROL, Kind.RECONNECTED, str(self.reconnects)))
        return [e for e in events if e is not _BAD]

    def _parse(self, channel: str, payload: str) -> Event:
        try:
            return parse(channel, payload)
        except PayloadError as exc:
            self.bad_payloads += 1
            logger.warning("ignored notification: %s", exc)
            if self._on_bad_payload:
                self._on_bad_payload(exc)
            return _BAD


_BAD = Event(Channel.CONTROL, Kind.STOP, "bad payload")  # a marker, never returned
