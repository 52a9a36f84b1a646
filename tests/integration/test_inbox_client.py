"""Issue 41 item 3: one owner for each side of the inbox protocol.

The client's side is agent/inbox.py `Client` (send, wait, reconnect), which `cogd chat`
and `cogd serve` both use; the loop's side is the loop worker, which hands the turn a
delivery callback; the previous turn's signals (identity triggers) come from turn rows.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
import pytest

from agent import inbox
from agent.config import Settings
from agent.db import day_table
from agent.runtime import Runtime
from agent.workers.loop import LoopWorker
from tests.conftest import make_session


@pytest.fixture
def loop(settings: Settings, db_url: str) -> Any:
    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    worker = LoopWorker(settings, db_url)
    worker.conn = worker._connect()
    worker.setup()
    yield worker
    worker.teardown()
    worker.conn.close()


def answer_one(loop: LoopWorker) -> threading.Thread:
    """The loop answers the next message that arrives (on a thread of its own)."""
    def run() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not loop.process_one():
            time.sleep(0.05)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def counts(conn: Any) -> tuple[int, int]:
    row = conn.execute("SELECT (SELECT count(*) FROM inbox), (SELECT count(*) FROM outbox)"
                       ).fetchone()
    return int(row[0]), int(row[1])


def cut(conn: Any, app: str) -> int:
    """Postgres goes away under the client: its backend is terminated."""
    return len(conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE application_name = %s", (app,)).fetchall())


def test_chat_and_serve_both_send_through_the_one_inbox_client(
        settings: Settings, db_url: str, conn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    from agent.commands.chat import ChatClient
    from agent.commands.serve import build_app
    from agent.runtime import Runtime
    from agent.services.access.tokens import create

    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    made: list[str] = []

    class Recorded(inbox.Client):
        def __init__(self, url: str, app: str, **kwargs: Any) -> None:
            made.append(app)
            super().__init__(url, app, **kwargs)

    monkeypatch.setattr(inbox, "Client", Recorded)
    # the REPL (its own in-process loop answers)
    chat = ChatClient(settings, db_url, "ana", None)
    try:
        chat.ensure_loop(lambda _: None)
        got = chat.send("Remember this: my locker code is 4512.", timeout_s=120)
    finally:
        chat.close()
    assert got["reply"].strip()
    # the HTTP API (it starts its own in-process loop too)
    uid = conn.execute("SELECT user_id FROM users WHERE handle = 'ana'").fetchone()[0]
    token = create(conn, uid, "ana", "test", "tester", False)["token"]
    api = Runtime(settings).memory_api(db_url, "api", channel="api", app="cogd-test-serve")
    try:
        with TestClient(build_app(settings, db_url, api)) as http:
            res = http.post("/v1/chat/completions",
                            headers={"Authorization": f"Bearer {token}"},
                            json={"model": "cogd", "messages": [
                                {"role": "user", "content": "What is my locker code?"}]})
    finally:
        api.close()
    assert res.status_code == 200, res.text
    assert res.json()["choices"][0]["message"]["content"].strip()
    assert made == ["cogd-chat", "cogd-serve-chat"]  # one client class served both
    assert counts(conn) == (2, 2)  # each message once, each answered once
    replies = conn.execute("SELECT count(*) FROM outbox WHERE delivered_at IS NOT NULL"
                           ).fetchone()
    assert replies == (2,)  # and each reply read by its client


def test_the_client_reconnects_and_queues_a_message_once(
        loop: LoopWorker, db_url: str, conn: Any) -> None:
    said: list[str] = []
    client = inbox.Client(db_url, "cogd-test-client", say=said.append)
    sid = make_session(conn)
    try:
        assert cut(conn, "cogd-test-client") == 1  # lost before the send
        deadline = time.monotonic() + 120
        inbox_id = client.send(sid, "hello there", stream=False, deadline=deadline)
        assert cut(conn, "cogd-test-client") == 1  # and again while it waits
        thread = answer_one(loop)
        reply = client.wait(inbox_id, deadline)
        thread.join(5)
    finally:
        client.close()
    assert reply.inbox_id == inbox_id and reply.content.strip()
    assert len(said) == 2 and all("reconnecting" in s for s in said)
    assert counts(conn) == (1, 1)  # nothing twice


def test_a_stopped_wait_keeps_the_message(db_url: str, conn: Any) -> None:
    stop = threading.Event()
    client = inbox.Client(db_url, "cogd-test-client", poll_s=0.05, stopped=stop.is_set)
    sid = make_session(conn)
    try:
        inbox_id = client.send(sid, "are you there?", stream=False,
                               deadline=time.monotonic() + 60)
        stop.set()
        with pytest.raises(inbox.NoReply) as info:
            client.wait(inbox_id, time.monotonic() + 60)
    finally:
        client.close()
    assert info.value.stopped and f"inbox id {inbox_id} is kept" in str(info.value)
    assert conn.execute("SELECT status FROM inbox WHERE id = %s", (inbox_id,)
                        ).fetchone() == ("pending",)


def test_an_empty_message_is_refused_before_anything_is_queued(db_url: str,
                                                               conn: Any) -> None:
    from agent.errors import InputError

    client = inbox.Client(db_url, "cogd-test-client")
    try:
        with pytest.raises(InputError, match="empty message"):
            client.send(make_session(conn), " \t\n", stream=False,
                        deadline=time.monotonic() + 5)
    finally:
        client.close()
    assert counts(conn) == (0, 0)


def test_the_previous_turns_signals_come_from_turn_rows(settings: Settings,
                                                        conn: Any) -> None:
    """No outbox here (Cognition.answer without an inbox): the first turn is a session
    start; after a reply whose turn went through System 2 (an escalation row), the next
    turn carries the full identity for `after_system2`."""
    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    cog = Runtime(settings).cognition()
    sid = make_session(conn)
    first = cog.answer(conn, sid, "hello, I am planning a trip to Norway")
    assert "session_start" in first.metadata["identity"]["triggers"]
    assert day_table.previous_exchange(conn, first.user_entry_id) is None
    second = cog.answer(conn, sid, "the fjords look lovely in June")
    assert day_table.previous_exchange(conn, second.user_entry_id) is False
    assert "after_system2" not in second.metadata["identity"]["triggers"]
    conn.execute("INSERT INTO escalations (entry_id, session_id, outcome) "
                 "VALUES (%s, %s, 'reflected')", (second.user_entry_id, sid))
    third = cog.answer(conn, sid, "and what should I pack for the fjords?")
    assert day_table.previous_exchange(conn, third.user_entry_id) is True
    assert "after_system2" in third.metadata["identity"]["triggers"]
    assert conn.execute("SELECT count(*) FROM outbox").fetchone() == (0,)


def test_the_turn_delivers_through_the_callback_it_is_given(
        loop: LoopWorker, conn: Any) -> None:
    """Cognition writes no inbox or outbox row itself: the reply reaches the outbox only
    through `deliver` (the loop's inbox.delivery), inside the turn's transaction."""
    def queued(sid: Any, text: str) -> int:
        return int(conn.execute("INSERT INTO inbox (session_id, content) VALUES (%s, %s) "
                                "RETURNING id", (sid, text)).fetchone()[0])

    first_sid = make_session(conn, "ana")
    first = queued(first_sid, "hi there")
    loop.cognition.answer(loop.conn, first_sid, "hi there", inbox_id=first)
    assert conn.execute("SELECT count(*) FROM outbox").fetchone() == (0,)
    assert conn.execute("SELECT status FROM inbox WHERE id = %s", (first,)
                        ).fetchone() == ("pending",)
    sid = make_session(conn, "bea")
    second = queued(sid, "good morning")
    delivered: list[tuple[bool, str]] = []

    def deliver(c: Any, reply: str, metadata: dict[str, Any]) -> None:
        delivered.append((c.info.transaction_status != psycopg.pq.TransactionStatus.IDLE,
                          reply))
        inbox.complete(c, second, sid, reply, metadata)

    loop.cognition.answer(loop.conn, sid, "good morning", inbox_id=second, deliver=deliver)
    assert len(delivered) == 1 and delivered[0][0]  # called inside the transaction
    assert conn.execute("SELECT content FROM outbox WHERE inbox_id = %s", (second,)
                        ).fetchone() == (delivered[0][1],)
