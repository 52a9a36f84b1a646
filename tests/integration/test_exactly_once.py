"""Exactly-once by the schema (revision 0008): one user turn and one reply per inbox
message, a lease its owner renews instead of a blind takeover, completion only by the
claim's owner, and a client idempotency key."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent import inbox as protocol
from agent.config import Settings, load_settings
from agent.db import migrate as mig
from agent.inbox import LeaseKeeper, LostClaim
from agent.workers.loop import LoopWorker
from tests.conftest import make_session


@pytest.fixture
def worker_pair(settings: Settings, db_url: str) -> Any:
    """Two loop workers on their own connections, as two `cogd loop` processes."""
    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    workers = []
    for _ in range(2):
        w = LoopWorker(settings, db_url)
        w.conn = w._connect()
        w.setup()
        workers.append(w)
    yield workers
    for w in workers:
        w.teardown()
        w.conn.close()


def counts(conn: Any, inbox_id: int) -> tuple[int, int, int]:
    user, reply = (conn.execute("SELECT count(*) FROM day_table WHERE inbox_id = %s AND "
                                "role = %s", (inbox_id, role)).fetchone()[0]
                   for role in ("user", "assistant"))
    out = conn.execute("SELECT count(*) FROM outbox WHERE inbox_id = %s",
                       (inbox_id,)).fetchone()[0]
    return user, reply, out


def queue(conn: Any, sid: Any, text: str) -> int:
    return int(conn.execute("INSERT INTO inbox (session_id, content) VALUES (%s, %s) "
                            "RETURNING id", (sid, text)).fetchone()[0])


def test_the_schema_refuses_a_second_turn_or_reply_for_one_message(conn: Any) -> None:
    sid = make_session(conn)
    inbox = queue(conn, sid, "hello")
    for role in ("user", "assistant"):
        conn.execute("INSERT INTO day_table (session_id, role, content, inbox_id) "
                     "VALUES (%s, %s, 'first', %s)", (sid, role, inbox))
        with pytest.raises(psycopg.errors.UniqueViolation, match="ux_day_table_inbox_role"):
            conn.execute("INSERT INTO day_table (session_id, role, content, inbox_id) "
                         "VALUES (%s, %s, 'again', %s)", (sid, role, inbox))
    conn.execute("INSERT INTO outbox (inbox_id, session_id, content) VALUES (%s, %s, 'a')",
                 (inbox, sid))
    with pytest.raises(psycopg.errors.UniqueViolation, match="ux_outbox_inbox"):
        conn.execute("INSERT INTO outbox (inbox_id, session_id, content) VALUES (%s, %s, 'b')",
                     (inbox, sid))
    # turns of no inbox message (imports, the REPL's remember) are not limited
    for _ in range(2):
        conn.execute("INSERT INTO day_table (session_id, role, content) VALUES (%s, 'user', "
                     "'free')", (sid,))


def test_a_live_claim_is_kept_and_a_lost_one_writes_nothing(
        worker_pair: list[LoopWorker], conn: Any) -> None:
    first, second = worker_pair
    sid = make_session(conn)
    inbox = queue(conn, sid, "Remember that my bike lock code is 2231.")
    # the first loop claims it, then works for an hour (a slow model): its lease is renewed
    msg = protocol.claim(first.conn, "loop-a", 30.0)
    assert msg is not None and msg.id == inbox
    claim = msg.claim
    conn.execute("UPDATE inbox SET claimed_at = now() - interval '1 hour' WHERE id = %s",
                 (inbox,))
    assert second.process_one() is False  # a live, leased claim is not taken over
    assert counts(conn, inbox) == (0, 0, 0)
    # the lease runs out (the first loop hung): the second takes the message over
    conn.execute("UPDATE inbox SET lease_until = now() - interval '1 second' WHERE id = %s",
                 (inbox,))
    assert second.process_one() is True
    assert counts(conn, inbox) == (1, 1, 1)
    # the first loop wakes up and finishes its turn: nothing of it is written
    with pytest.raises(LostClaim):
        first.cognition.answer(first.conn, sid, "Remember that my bike lock code is 2231.",
                               inbox_id=inbox, deliver=protocol.delivery(msg))
    assert counts(conn, inbox) == (1, 1, 1)
    status = conn.execute("SELECT status, claimed_by <> %s FROM inbox WHERE id = %s",
                          (claim, inbox)).fetchone()
    assert status == ("done", True)


def test_the_reply_is_written_once_even_without_a_claim_check(
        worker_pair: list[LoopWorker], conn: Any) -> None:
    """A caller that passes no delivery (no claim to check) still cannot write a second
    reply: the unique (inbox_id, role) turns its write into a LostClaim."""
    first, _ = worker_pair
    sid = make_session(conn)
    inbox = queue(conn, sid, "hello there")
    assert first.process_one() is True
    with pytest.raises(LostClaim, match="already has its reply"):
        first.cognition.answer(first.conn, sid, "hello there", inbox_id=inbox)
    assert counts(conn, inbox) == (1, 1, 1)


def test_the_owner_renews_its_lease_and_notices_a_takeover(db_url: str, conn: Any) -> None:
    sid = make_session(conn)
    inbox = queue(conn, sid, "hi")
    with psycopg.connect(db_url, autocommit=True) as owner:
        msg = protocol.claim(owner, "loop-a", 0.6)
        assert msg is not None
        claim = msg.claim
        keeper = LeaseKeeper(lambda: psycopg.connect(db_url, autocommit=True), 0.6)
        keeper.hold(inbox, claim)
        try:
            first = conn.execute("SELECT lease_until FROM inbox WHERE id = %s",
                                 (inbox,)).fetchone()[0]
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                later = conn.execute("SELECT lease_until FROM inbox WHERE id = %s",
                                     (inbox,)).fetchone()[0]
                if later > first:
                    break
                time.sleep(0.05)
            assert later > first  # renewed while the turn runs
            conn.execute("UPDATE inbox SET claimed_by = 'loop-b pid=1' WHERE id = %s",
                         (inbox,))
            assert keeper.lost.wait(10)
        finally:
            keeper.close()


def test_a_resend_is_recognised_by_its_idempotency_key(conn: Any) -> None:
    sid = make_session(conn)
    first = protocol.enqueue(conn, sid, "Is the key the same?", stream=False, key="key-123")
    # the acknowledgement was lost: the client sends again under the same key
    again = protocol.enqueue(conn, sid, "Is the key the same?", stream=False, key="key-123")
    other = protocol.enqueue(conn, sid, "Is the key the same?", stream=False, key="key-456")
    assert first == again != other
    assert protocol.queued(conn, "key-123") == first
    assert protocol.queued(conn, "key-never-sent") is None
    assert conn.execute("SELECT count(*) FROM inbox").fetchone() == (2,)


def test_a_reply_is_read_once_it_commits_and_partials_before(conn: Any) -> None:
    """The client's side of the protocol: partial text while the turn runs, then the
    reply (marked delivered); a failure is answered through outbox only by the claim's
    owner."""
    sid = make_session(conn)
    inbox = protocol.enqueue(conn, sid, "stream me", stream=True, key="k-1")
    seen: list[str] = []
    assert protocol.reply_for(conn, inbox, seen.append) is None and seen == []
    msg = protocol.claim(conn, "loop-a", 30.0)
    assert msg is not None and (msg.id, msg.stream, msg.content) == (inbox, True, "stream me")
    protocol.publish_partial(conn, inbox, "so far")
    assert protocol.reply_for(conn, inbox, seen.append) is None and seen == ["so far"]
    with conn.transaction():
        protocol.hold(conn, inbox, msg.claim)
        protocol.complete(conn, inbox, sid, "the whole reply", {"k": 1})
    reply = protocol.reply_for(conn, inbox)
    assert reply is not None and (reply.content, reply.metadata) == ("the whole reply", {"k": 1})
    assert conn.execute("SELECT status FROM inbox WHERE id = %s", (inbox,)).fetchone() == ("done",)
    assert conn.execute("SELECT delivered_at IS NOT NULL FROM outbox WHERE inbox_id = %s",
                        (inbox,)).fetchone() == (True,)
    # a failure: only the owner's claim answers it
    other = protocol.enqueue(conn, sid, "fails", stream=False, key="k-2")
    msg = protocol.claim(conn, "loop-a", 30.0)
    assert msg is not None and msg.id == other
    stale = protocol.Claimed(msg.id, sid, msg.content, False, "loop-z pid=1")
    assert protocol.fail(conn, stale, RuntimeError("boom")) is False
    with conn.transaction(), pytest.raises(LostClaim):
        protocol.hold(conn, other, stale.claim)
    assert protocol.fail(conn, msg, RuntimeError("boom")) is True
    failed = protocol.reply_for(conn, other)
    assert failed is not None and failed.content.startswith("[error]")
    assert failed.metadata == {"error": True, "bad_input": False}


def test_revision_0008_detaches_duplicates_and_says_so(empty_db_url: str,
                                                       tmp_path: Path) -> None:
    """Duplicates written before 0008 (two loops answered one message) are reported in
    audit_log and detached from the message, never deleted; then the indexes build."""
    settings = load_settings(data_dir=tmp_path, database_url=empty_db_url)
    mig.upgrade(empty_db_url, settings, "0007_contextual_index")
    with psycopg.connect(empty_db_url, autocommit=True) as c:
        sid = make_session(c)
        inbox = queue(c, sid, "hello")
        for text in ("hi 1", "hi 2"):
            c.execute("INSERT INTO day_table (session_id, role, content, inbox_id) "
                      "VALUES (%s, 'assistant', %s, %s)", (sid, text, inbox))
            c.execute("INSERT INTO outbox (inbox_id, session_id, content) VALUES (%s, %s, %s)",
                      (inbox, sid, text))
    mig.upgrade(empty_db_url, settings)
    with psycopg.connect(empty_db_url) as c:
        turns = c.execute("SELECT content, inbox_id FROM day_table ORDER BY content").fetchall()
        assert turns == [("hi 1", inbox), ("hi 2", None)]  # kept, the copy detached
        outs = c.execute("SELECT content, inbox_id FROM outbox ORDER BY content").fetchall()
        assert outs == [("hi 1", inbox), ("hi 2", None)]
        audit = c.execute("SELECT action, target FROM audit_log WHERE actor = "
                          "'migration 0008' ORDER BY target").fetchall()
        assert [a[0] for a in audit] == ["duplicate_detached"] * 2
        assert {a[1].split(":")[0] for a in audit} == {"day_table", "outbox"}


def _turn(conn: Any, sid: Any, text: str) -> Any:
    return conn.execute("INSERT INTO day_table (session_id, role, content) VALUES (%s, 'user', "
                        "%s) RETURNING entry_id", (sid, text)).fetchone()[0]


def _memory(conn: Any, entry: Any, kind: str = "fact") -> Any:
    return conn.execute("INSERT INTO memories (source_entry_id, memory_type, content) VALUES "
                        "(%s, %s, 'x') RETURNING memory_id", (entry, kind)).fetchone()[0]


def test_the_schema_refuses_a_second_memory_of_a_kind_from_one_turn(conn: Any) -> None:
    sid = make_session(conn)
    entry = _turn(conn, sid, "I moved to Lisbon in May")
    _memory(conn, entry)
    _memory(conn, entry, "episodic")  # another kind of memory of the same turn
    with pytest.raises(psycopg.errors.UniqueViolation, match="ux_memories_source_entry_type"):
        _memory(conn, entry)


def test_a_turn_persisted_twice_keeps_one_memory(settings: Settings, conn: Any) -> None:
    """The exit gate's own guard (the per-turn lock and gate_decisions) bypassed: a second
    persist of one turn finds its memory instead of writing a second one."""
    import random as _random

    from agent.domain.gates import EntryGateConfig, ExitDecision, ExitGateConfig
    from agent.services.conversation.rollover import Rollover

    sid = make_session(conn)
    text = "Remember: my passport number ends in 4471."
    entry = _turn(conn, sid, text)
    rollover = Rollover(EntryGateConfig.from_table(settings.entry_gate),
                        ExitGateConfig.from_table(settings.exit_gate), lambda _t: 1.0,
                        _random.Random(1))
    keep = ExitDecision(action="persist", column="novel", row="core", score=1.0,
                        reason="test", signals={})
    first = rollover._persist(conn, entry, text, {}, keep)
    second = rollover._persist(conn, entry, text, {}, keep)
    assert first is not None and second == first
    assert conn.execute("SELECT count(*) FROM memories WHERE source_entry_id = %s",
                        (entry,)).fetchone() == (1,)


def test_revision_0011_detaches_duplicate_memories_and_says_so(empty_db_url: str,
                                                                tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path, database_url=empty_db_url)
    mig.upgrade(empty_db_url, settings, "0010_layer0_definer")
    with psycopg.connect(empty_db_url, autocommit=True) as c:
        sid = make_session(c)
        entry = _turn(c, sid, "the same turn judged twice")
        first, copy = _memory(c, entry), _memory(c, entry)
    mig.upgrade(empty_db_url, settings)
    with psycopg.connect(empty_db_url) as c:
        rows = dict(c.execute("SELECT memory_id, source_entry_id FROM memories").fetchall())
        assert rows == {first: entry, copy: None}  # both kept, the copy detached
        meta = c.execute("SELECT metadata->>'duplicate_of_entry' FROM memories WHERE "
                         "memory_id = %s", (copy,)).fetchone()
        assert meta == (str(entry),)
        audit = c.execute("SELECT action, target FROM audit_log WHERE actor = "
                          "'migration 0011'").fetchall()
        assert audit == [("duplicate_detached", f"memories:{copy}")]


def test_a_user_turn_written_by_another_loop_meanwhile_is_continued_not_failed(
        worker_pair: list[LoopWorker], conn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between the check for an inbox message's user turn and the insert, a loop that
    took the message over wrote it: the insert does nothing and the turn goes on from
    the row the other loop wrote."""
    from agent.db import day_table
    from agent.services.conversation import cognition

    first, second = worker_pair
    sid = make_session(conn)
    inbox = queue(conn, sid, "My bike is green.")
    entry, _ = second.cognition.write_user_turn(second.conn, sid, "My bike is green.", inbox)
    looked = {"n": 0}
    real = day_table.user_turn_of_inbox

    def not_yet_then_real(c: Any, inbox_id: int) -> Any:
        looked["n"] += 1
        return None if looked["n"] == 1 else real(c, inbox_id)

    monkeypatch.setattr(cognition.day_table, "user_turn_of_inbox", not_yet_then_real)
    got, text = first.cognition.write_user_turn(first.conn, sid, "My bike is green.", inbox)
    assert (got, text) == (entry, "My bike is green.") and looked["n"] == 2
    assert counts(conn, inbox) == (1, 0, 0)
