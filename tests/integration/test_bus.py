"""LISTEN/NOTIFY across processes, reconnect, and the polling fallback."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import Any

import psycopg
import pytest

from agent.bus import Channel, Event, Kind, Listener, notify
from agent.config import Settings
from agent.workers.base import Worker
from tests.conftest import make_session


def _listener(db_url: str, *channels: Channel) -> Listener:
    return Listener(lambda: psycopg.connect(db_url, autocommit=True), channels,
                    reconnect_delay_s=0.1)


def _wait_for(listener: Listener, want: Event, seconds: float = 10.0) -> list[Event]:
    seen: list[Event] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and want not in seen:
        seen += listener.wait(0.5)
    return seen


def test_notify_from_another_process_reaches_the_listener(db_url: str) -> None:
    code = (
        "import psycopg, sys; from agent.bus import notify, Channel, Kind\n"
        "with psycopg.connect(sys.argv[1], autocommit=True) as c:\n"
        "    notify(c, Channel.TURN, Kind.TURN, '7')\n"
    )
    with _listener(db_url, Channel.TURN) as listener:
        subprocess.run([sys.executable, "-c", code, db_url], check=True, timeout=60)
        seen = _wait_for(listener, Event(Channel.TURN, Kind.TURN, "7"))
    assert Event(Channel.TURN, Kind.TURN, "7") in seen


def test_listener_connection_is_autocommit_only(db_url: str) -> None:
    listener = Listener(lambda: psycopg.connect(db_url), [Channel.TURN])
    try:
        listener.start()
    except RuntimeError as exc:
        assert "autocommit" in str(exc)
    else:
        raise AssertionError("a non-autocommit listener connection was accepted")


def test_notification_is_delivered_at_commit_only(db_url: str, conn: Any) -> None:
    with _listener(db_url, Channel.OUTBOX) as listener:
        with psycopg.connect(db_url) as tx:
            notify(tx, Channel.OUTBOX, Kind.OUTBOX, 1)
            assert listener.wait(0.3) == []  # not committed yet
            tx.commit()
        assert Event(Channel.OUTBOX, Kind.OUTBOX, "1") in _wait_for(
            listener, Event(Channel.OUTBOX, Kind.OUTBOX, "1")
        )


def test_malformed_payloads_are_counted_not_fatal(db_url: str, conn: Any) -> None:
    with _listener(db_url, Channel.TURN) as listener:
        conn.execute("SELECT pg_notify('cogd_turn_v1', 'garbage')")
        conn.execute("SELECT pg_notify('cogd_turn_v1', '{\"type\":\"t\",\"id\":\"3\"}')")
        conn.execute("SELECT pg_notify('cogd_turn_v1', "
                     "'{\"type\":\"day_table\",\"id\":\"2\"}')")
        seen = _wait_for(listener, Event(Channel.TURN, Kind.TURN, "2"))
    assert Event(Channel.TURN, Kind.TURN, "2") in seen
    assert listener.bad_payloads == 2  # not JSON; a kind the channel does not carry


def test_listener_reconnects_and_listens_again(db_url: str, conn: Any) -> None:
    with _listener(db_url, Channel.TURN) as listener:
        assert listener._conn is not None
        pid = listener._conn.info.backend_pid
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        seen = _wait_for(listener, Event(Channel.CONTROL, Kind.RECONNECTED, "1"))
        assert Event(Channel.CONTROL, Kind.RECONNECTED, "1") in seen
        notify(conn, Channel.TURN, Kind.TURN, "after")
        assert Event(Channel.TURN, Kind.TURN, "after") in _wait_for(
            listener, Event(Channel.TURN, Kind.TURN, "after")
        )


class InboxMarker(Worker):
    """A test worker on the real Worker base: marks pending inbox rows done."""

    name = "inbox-marker"
    channels = (Channel.INBOX,)

    def poll(self) -> None:
        assert self.conn is not None
        done = self.conn.execute(
            "UPDATE inbox SET status = 'done', processed_at = now() "
            "WHERE status = 'pending' RETURNING id"
        ).fetchall()
        self.items_done += len(done)


def test_polling_fallback_delivers_without_any_notification(
    db_url: str, conn: Any, settings: Settings
) -> None:
    settings.bus.poll_interval_s = 0.5
    settings.bus.listen_timeout_s = 0.2
    worker = InboxMarker(settings, db_url)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        sid = make_session(conn)
        # a dropped notification: the row is written, no NOTIFY is ever sent
        conn.execute("INSERT INTO inbox (session_id, content) VALUES (%s, 'hello')", (sid,))
        deadline = time.monotonic() + 20
        status = None
        while time.monotonic() < deadline:
            status = conn.execute("SELECT status FROM inbox").fetchone()[0]
            if status == "done":
                break
            time.sleep(0.1)
        assert status == "done"
        beat = conn.execute(
            "SELECT state, alive FROM v_processes WHERE name = 'inbox-marker'"
        ).fetchone()
        assert beat == ("running", True)
        # pg_stat_activity names the process: the worker and its listener connection
        named = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE %s",
            ("cogd-inbox-marker@%",),
        ).fetchone()
        assert named is not None and named[0] >= 2
    finally:
        worker.stop.set()
        thread.join(10)
    assert not thread.is_alive()
    assert conn.execute(
        "SELECT state FROM process_heartbeats WHERE name = 'inbox-marker'"
    ).fetchone() == ("stopped",)


def test_a_kind_its_channel_does_not_carry_is_never_sent(conn: Any) -> None:
    with pytest.raises(ValueError, match="does not carry"):
        notify(conn, Channel.TURN, Kind.INBOX, 1)
