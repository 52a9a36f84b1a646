"""Bounded work per message (issue 38, finding 3), on a real database: a message whose
turn keeps dying is failed with its reason after [process] inbox_max_attempts claims and
never blocks the messages behind it; recall reads a bounded part of a long message while
day_table keeps all of it."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from agent import inbox
from agent.config import Settings
from agent.runtime import Runtime
from agent.services.memory.recall import Recaller
from agent.workers.loop import LoopWorker
from tests.conftest import make_session
from tests.integration.test_loop_worker import loop  # noqa: F401  (the loop worker)


def _crash_mid_turn(db_url: str) -> int:
    """A loop that claims the next message and dies before answering it (its connection
    goes, so the row can be taken over at once); returns the inbox id it held."""
    with psycopg.connect(db_url, autocommit=True) as dying:
        msg = inbox.claim(dying, "cogd-loop@test os=1", 30.0)
        assert msg is not None
        backend = dying.info.backend_pid
    with psycopg.connect(db_url, autocommit=True) as look:  # its backend is gone
        for _ in range(500):
            if look.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s",
                            (backend,)).fetchone() is None:
                break
            time.sleep(0.01)
    return msg.id


def test_a_poison_message_is_failed_after_its_attempts_and_the_queue_moves_on(
    loop: LoopWorker, conn: Any, db_url: str,  # noqa: F811
) -> None:
    loop.max_attempts = 2  # [process] inbox_max_attempts
    alice = make_session(conn, "alice")
    bob = make_session(conn, "bob")
    poison = inbox.enqueue(conn, alice, "the message whose turn kills the loop", stream=False,
                           key="poison")
    hi = inbox.enqueue(conn, bob, "hi", stream=False, key="bob-hi")
    # the claim counts itself: two loops died mid-turn on it (limit 2)
    assert _crash_mid_turn(db_url) == poison
    assert _crash_mid_turn(db_url) == poison
    assert conn.execute("SELECT status, attempts FROM inbox WHERE id = %s",
                        (poison,)).fetchone() == ("processing", 2)

    assert loop.process_one() is True  # the third claim: failed, not answered again
    status, error, attempts = conn.execute(
        "SELECT status, error, attempts FROM inbox WHERE id = %s", (poison,)).fetchone()
    assert (status, attempts) == ("failed", 3)
    assert "started 2 times and never finished" in error and "inbox_max_attempts" in error
    reply = inbox.reply_for(conn, poison)
    assert reply is not None and reply.content.startswith("[error] not answered:")
    assert reply.metadata == {"error": True, "bad_input": False}
    # no turn was run for it this time: only the user turn written before... none at all
    assert conn.execute("SELECT count(*) FROM day_table WHERE inbox_id = %s AND "
                        "role = 'assistant'", (poison,)).fetchone() == (0,)

    assert loop.process_one() is True  # the other user's message behind it is answered
    answered = inbox.reply_for(conn, hi)
    assert answered is not None and not answered.metadata.get("error")
    assert conn.execute("SELECT status, attempts FROM inbox WHERE id = %s",
                        (hi,)).fetchone() == ("done", 1)
    assert loop.process_one() is False  # and the failed row is never claimed again


def test_a_failed_row_must_say_why(conn: Any) -> None:
    sid = make_session(conn)
    conn.execute("INSERT INTO inbox (session_id, content) VALUES (%s, 'x')", (sid,))
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("UPDATE inbox SET status = 'failed'")


class CountingStr(str):
    """A message that counts how often the whole of it is asked islower()."""

    calls = 0

    def islower(self) -> bool:
        CountingStr.calls += 1
        return super().islower()


def test_query_context_reads_the_message_once_not_once_per_word(settings: Settings) -> None:
    recaller = Runtime(settings).recaller()
    CountingStr.calls = 0
    words = " ".join(["remember", "ana", "lives", "in", "porto"] * 400)  # 2,000 words
    _, names = Recaller.query_context(recaller, CountingStr(words), datetime.now(UTC))
    assert CountingStr.calls <= 1  # was once per word: quadratic in the message's length
    assert "ana" in names and "Ana" in names  # an all-lower-case message: every word


def test_recall_reads_a_bounded_part_of_a_long_message_and_the_turn_keeps_it_all(
    loop: LoopWorker, conn: Any,  # noqa: F811
) -> None:
    cap = int(loop.cognition.recaller.cfg.max_message_chars)
    long = "Ana moved to Porto in May and " + "we talked about the garden " * 4000
    assert len(long) > 10 * cap
    sid = make_session(conn)
    msg = inbox.enqueue(conn, sid, long, stream=False, key="long")
    assert loop.process_one() is True
    assert conn.execute("SELECT status FROM inbox WHERE id = %s", (msg,)).fetchone() == ("done",)
    stored = conn.execute("SELECT content FROM day_table WHERE inbox_id = %s AND role = 'user'",
                          (msg,)).fetchone()
    assert stored is not None and stored[0] == long  # nothing lost
    recaller = loop.cognition.recaller
    out = recaller.recall(conn, long, verdict_text=long, session_id=sid)
    logged = conn.execute("SELECT query FROM recall_log WHERE id = %s",
                          (out.log_id,)).fetchone()
    assert logged is not None and 0 < len(logged[0]) <= cap
    assert long.startswith(logged[0])
