"""The idle default-mode network on a real database, on a fast clock (issue #5)."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest

from agent.config import Settings
from agent.runtime import Runtime
from agent.services.access import introspect
from agent.services.conversation.cognition import Cognition
from agent.workers.idle import IdleWorker
from tests.conftest import NoFloor, heuristic_roles, make_session, user_of


@pytest.fixture
def fast(settings: Settings) -> Settings:
    heuristic_roles(settings)
    settings.idle["seconds_per_minute"] = 0.01  # one DMN "minute" is 10 ms
    return settings


@pytest.fixture
def cog(fast: Settings) -> Cognition:
    return Runtime(fast).cognition(rng=NoFloor())


def test_a_proactive_recall_reaches_the_next_prompt(fast: Settings, conn: Any,
                                                    cog: Cognition) -> None:
    fast.idle["seconds_per_minute"] = 1.0  # the 10-"minute" cooldown lasts 10 s here
    old = make_session(conn, "kim")
    user = user_of(conn, old)
    introspect.remember(conn, cog, old, user, "My passport expires in March 2027.")
    sid = make_session(conn, "kim")
    cog.answer(conn, sid, "hi, the weather is lovely and sunny today")
    cog.answer(conn, sid, "When does my passport expire?")  # a topic shift
    tick = Runtime(fast).dmn(rng=random.Random(1)).tick(conn)
    proactive = tick["proactive"]
    assert len(proactive) == 1 and proactive[0]["theme"] == "topic_shift"
    assert "passport expires in March 2027" in proactive[0]["content"]
    result = cog.answer(conn, sid, "ok, and what else should I prepare?")
    assert any("passport expires in March 2027" in t for t in result.metadata["thoughts"])
    assert conn.execute("SELECT status FROM thoughts WHERE kind = 'proactive_recall'"
                        ).fetchone() == ("injected",)
    # the same recall is not offered again within its cooldown
    cog.answer(conn, sid, "the weather is lovely again, sunny and warm")
    cog.answer(conn, sid, "When does my passport expire?")
    assert Runtime(fast).dmn().tick(conn)["proactive"] == []


def test_a_thought_without_a_session_reaches_only_its_own_user(fast: Settings, conn: Any,
                                                               cog: Cognition) -> None:
    """Issue 38: a proactive recall with no session holds its user's words; it goes into
    that user's next prompt and never into another user's."""
    alice = make_session(conn, "alice")
    bob = make_session(conn, "bob")
    alice_id = user_of(conn, alice)
    conn.execute("INSERT INTO thoughts (kind, content, theme, user_id) VALUES "
                 "('proactive_recall', 'Earlier: alice keeps the vault code 4417', "
                 "'topic_shift', %s)", (alice_id,))
    assert not any("4417" in t for t in cog.answer(conn, bob, "hi there").metadata["thoughts"])
    assert conn.execute("SELECT status FROM thoughts").fetchone() == ("new",)
    shown = cog.answer(conn, alice, "hello again").metadata["thoughts"]
    assert any("vault code 4417" in t for t in shown)


def test_winding_down_surfaces_open_intentions(fast: Settings, conn: Any,
                                               cog: Cognition) -> None:
    sid = make_session(conn, "lee")
    cog.answer(conn, sid, "Remind me to call the landlord about the heating.")
    conn.execute("INSERT INTO intentions (user_id, session_id, kind, content) SELECT user_id, "
                 "session_id, 'reminder', content FROM day_table WHERE role = 'user'")
    cog.answer(conn, sid, "that's all for today, good night")
    proactive = Runtime(fast).dmn().tick(conn)["proactive"]
    assert [p["theme"] for p in proactive] == ["winding_down"]
    assert "call the landlord" in proactive[0]["content"]


def test_surfacing_respects_the_rumination_cap(fast: Settings, conn: Any,
                                              cog: Cognition) -> None:
    sid = make_session(conn, "ana")
    user = user_of(conn, sid)
    introspect.remember(conn, cog, sid, user, "I want to learn to play the cello well.")
    conn.execute("INSERT INTO goals (name, description, weight) VALUES ('music', "
                 "'learn to play the cello', 0.8)")
    dmn = Runtime(fast).dmn(rng=random.Random(7))
    kinds = [dmn.tick(conn)["surfaced"] for _ in range(8)]
    themes = conn.execute("SELECT theme, count(*) FROM thoughts WHERE kind <> "
                          "'proactive_recall' GROUP BY theme").fetchall()
    assert themes and all(n <= 3 for _, n in themes)
    assert any(k and k.get("reason") == "rumination cap" for k in kinds)
    assert any(k and k.get("kind") == "self_prompt" for k in kinds)  # the goal connection


def test_gut_signal_is_zero_while_blank_then_moves(fast: Settings, conn: Any,
                                                  cog: Cognition) -> None:
    dmn = Runtime(fast).dmn()
    assert dmn.tick(conn)["gut"]["delta_norm"] == 0.0
    sid = make_session(conn)
    user = user_of(conn, sid)
    introspect.remember(conn, cog, sid, user, "I care a lot about open source software.")
    cog.answer(conn, sid, "What should I cook for dinner with leftover rice?")
    gut = dmn.tick(conn)["gut"]
    assert gut["delta_norm"] > 0 and gut["layers"]["l2"] and gut["layers"]["attention"]
    assert conn.execute("SELECT count(*), count(*) FILTER (WHERE delta_norm = 0) "
                        "FROM gut_signals").fetchone() == (2, 1)


def test_the_idle_worker_ticks_on_a_fast_clock(fast: Settings, db_url: str, conn: Any) -> None:
    fast.bus.poll_interval_s = 0.05
    fast.bus.listen_timeout_s = 0.05
    worker = IdleWorker(fast, db_url)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if conn.execute("SELECT count(*) FROM gut_signals").fetchone()[0] >= 3:
                break
            time.sleep(0.1)
        ticks = conn.execute("SELECT count(*) FROM gut_signals").fetchone()[0]
        assert ticks >= 3  # several ticks, each a minute of the fast clock apart
    finally:
        worker.stop.set()
        thread.join(30)
    assert not thread.is_alive()


def test_imported_history_never_triggers_proactive_recall(fast: Settings, conn: Any,
                                                          cog: Cognition) -> None:
    fast.idle["seconds_per_minute"] = 1.0
    first = make_session(conn, "old")
    user = user_of(conn, first)
    introspect.remember(conn, cog, first, user, "My passport expires in March 2027.")
    sid = make_session(conn, "old")
    cog.answer(conn, sid, "hi, the weather is lovely and sunny today")
    cog.answer(conn, sid, "When does my passport expire?")
    # the same turns, but from an imported history weeks ago: nothing is offered
    conn.execute("UPDATE day_table SET created_at = created_at - interval '30 days' "
                 "WHERE session_id = %s", (sid,))
    assert Runtime(fast).dmn().tick(conn)["proactive"] == []
    # live again (and the watermark forgotten): the same turns do trigger it
    conn.execute("UPDATE day_table SET created_at = created_at + interval '30 days' "
                 "WHERE session_id = %s", (sid,))
    conn.execute("DELETE FROM worker_state WHERE key = 'dmn.proactive'")
    assert len(Runtime(fast).dmn().tick(conn)["proactive"]) == 1
