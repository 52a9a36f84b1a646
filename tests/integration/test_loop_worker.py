"""The loop worker on a real database: inbox → day_table (+embeddings) → outbox."""

from __future__ import annotations

from typing import Any

import pytest

from agent.config import Settings
from agent.workers.loop import LoopWorker
from tests.conftest import make_session


@pytest.fixture
def loop(settings: Settings, db_url: str) -> Any:
    settings.llm.roles["system1"] = "heuristic"  # fast and deterministic; local LLM tested apart
    worker = LoopWorker(settings, db_url)
    worker.conn = worker._connect()
    worker.setup()
    yield worker
    worker.teardown()
    worker.conn.close()


def test_a_message_becomes_two_embedded_turns_and_a_reply(loop: LoopWorker, conn: Any) -> None:
    sid = make_session(conn)
    conn.execute("INSERT INTO inbox (session_id, content) VALUES (%s, %s)",
                 (sid, "Remember that my sister Ana lives in Porto."))
    assert loop.process_one() is True
    assert loop.process_one() is False  # nothing else waiting
    turns = conn.execute(
        "SELECT role, content, universal_embedding IS NOT NULL, native_model, turn_number "
        "FROM day_table WHERE session_id = %s ORDER BY turn_number", (sid,)
    ).fetchall()
    assert [t[0] for t in turns] == ["user", "assistant"]
    assert turns[0][1] == "Remember that my sister Ana lives in Porto."
    assert all(t[2] for t in turns)
    assert turns[0][3] == "local:all-MiniLM-L6-v2-int8"
    assert [t[4] for t in turns] == [1, 2]
    reply = conn.execute("SELECT content FROM outbox WHERE session_id = %s", (sid,)).fetchone()
    assert reply is not None and reply[0] == turns[1][1]
    assert conn.execute("SELECT status FROM inbox").fetchone() == ("done",)
    calls = conn.execute("SELECT provider, role, ok FROM llm_calls").fetchall()
    assert ("heuristic", "system1", True) in calls


def test_a_reclaimed_message_is_not_written_twice(loop: LoopWorker, conn: Any) -> None:
    sid = make_session(conn)
    conn.execute("INSERT INTO inbox (session_id, content) VALUES (%s, 'hello')", (sid,))
    # a loop that crashed after claiming: the row is 'processing' with an old claim
    conn.execute("UPDATE inbox SET status = 'processing', claimed_at = now() - interval '1 hour'")
    assert loop.process_one() is True
    assert conn.execute(
        "SELECT count(*) FROM day_table WHERE role = 'user'"
    ).fetchone() == (1,)
