"""The idle DMN's output reaches the conversation (issue 17): proactive recall on the turn's
NOTIFY, the per-session cooldown, thoughts that act, the goal and gut feedback loops, and
epiphanies shown once as a double take. Real Postgres, heuristic models, fast clocks."""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from agent.bus import Channel, Event, Kind
from agent.config import Settings
from agent.cortex.lance import BLOCKS, LanceCortex
from agent.cortex.store import LanceCortexStore
from agent.errors import ProviderError
from agent.providers.ports import ChatResult
from agent.runtime import Runtime
from agent.services.access import introspect
from agent.services.background.dmn import Dmn
from agent.services.conversation.cognition import Cognition
from agent.services.reach import double_takes
from agent.workers.idle import IdleWorker
from tests.conftest import NoFloor, heuristic_roles, make_session, user_of

PASSPORT = "My passport expires in March 2027."
DENTIST = "My dentist appointment is on the 14th of May at 9 in the morning."
SMALLTALK = "hi, the weather is lovely and sunny today"


@pytest.fixture
def fast(settings: Settings) -> Settings:
    heuristic_roles(settings)
    settings.idle["seconds_per_minute"] = 1.0  # one DMN "minute" is one second
    return settings


@pytest.fixture
def cog(fast: Settings) -> Cognition:
    return Runtime(fast).cognition(rng=NoFloor())


def _remember(conn: Any, cog: Cognition, handle: str, *facts: str) -> Any:
    old = make_session(conn, handle)
    for fact in facts:
        introspect.remember(conn, cog, old, user_of(conn, old), fact)
    return old


def _wait(fn: Any, seconds: float = 20.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = fn()
        if got:
            return got
        time.sleep(0.05)
    return fn()


def test_a_notified_user_turn_gets_its_proactive_recall_without_a_tick(
        fast: Settings, db_url: str, conn: Any, cog: Cognition) -> None:
    fast.idle["seconds_per_minute"] = 60.0  # the next tick is a real minute away
    fast.bus.poll_interval_s = 0.05
    fast.bus.listen_timeout_s = 0.05
    _remember(conn, cog, "kim", PASSPORT)
    worker = IdleWorker(fast, db_url)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        # the worker's first tick runs at start; after it, only a notification can help
        assert _wait(lambda: conn.execute("SELECT count(*) FROM gut_signals").fetchone()[0])
        sid = make_session(conn, "kim")
        cog.answer(conn, sid, SMALLTALK)
        cog.write_user_turn(conn, sid, "When does my passport expire?")  # a topic shift
        thought = _wait(lambda: conn.execute(
            "SELECT content, theme FROM thoughts WHERE kind = 'proactive_recall' "
            "AND session_id = %s", (sid,)).fetchone())
        assert thought is not None and "passport expires in March 2027" in thought[0]
        assert thought[1] == "topic_shift"
        assert conn.execute("SELECT count(*) FROM gut_signals").fetchone()[0] == 1  # no tick
    finally:
        worker.stop.set()
        thread.join(30)
    assert not thread.is_alive()
    result = cog.answer(conn, sid, "ok, and what else should I prepare?")
    assert any("passport expires in March 2027" in t for t in result.metadata["thoughts"])
    # the tick's catch-up pass does not offer the turns the notification handled again
    assert Runtime(fast).dmn().tick(conn)["proactive"] == []


def test_the_per_session_cooldown_holds(fast: Settings, conn: Any, cog: Cognition) -> None:
    _remember(conn, cog, "sam", PASSPORT, DENTIST)
    dmn = Runtime(fast).dmn()
    sid = make_session(conn, "sam")
    cog.write_user_turn(conn, sid, SMALLTALK)
    entry, _ = cog.write_user_turn(conn, sid, "When does my passport expire?")
    first = dmn.proactive_turn(conn, str(entry))
    assert len(first) == 1 and "passport" in first[0]["content"]
    cog.write_user_turn(conn, sid, SMALLTALK)
    entry, _ = cog.write_user_turn(conn, sid, "When is my dentist appointment?")
    assert dmn.proactive_turn(conn, str(entry)) == []  # 5 DMN minutes have not passed
    # another session is not held back by this one's cooldown
    other = make_session(conn, "sam")
    cog.write_user_turn(conn, other, SMALLTALK)
    entry, _ = cog.write_user_turn(conn, other, "When is my dentist appointment?")
    got = dmn.proactive_turn(conn, str(entry))
    assert any("14th of May" in g["content"] for g in got)
    # at most max_observations_per_session, even once the minutes have passed
    fast.idle["max_observations_per_session"] = 1
    fast.idle["min_minutes_between_observations"] = 0
    capped = Runtime(fast).dmn()
    cog.write_user_turn(conn, other, SMALLTALK)
    entry, _ = cog.write_user_turn(conn, other, "When does my passport expire?")
    assert capped.proactive_turn(conn, str(entry)) == []
    assert dmn.proactive_turn(conn, "not-an-entry-id") == []


def test_the_item_cooldown_is_kept_per_conversation(fast: Settings, conn: Any,
                                                   cog: Cognition) -> None:
    """A fact surfaced beside another question in one session is still recalled when a new
    session asks about it (bench.proactive's 7 misses: the cooldown was keyed by the item
    alone, across sessions); in its own session it is not injected twice."""
    fast.idle["min_minutes_between_observations"] = 0
    _remember(conn, cog, "ida", "I keep my tent in the garage.",
              "I keep my hammock in the garage.")
    dmn = Runtime(fast).dmn()
    first = make_session(conn, "ida")
    cog.write_user_turn(conn, first, SMALLTALK)
    entry, _ = cog.write_user_turn(conn, first, "Where do I keep my tent?")
    got = [g["content"] for g in dmn.proactive_turn(conn, str(entry))]
    assert got[0] == "Earlier: I keep my tent in the garage."
    assert "Earlier: I keep my hammock in the garage." in got  # surfaced beside it
    other = make_session(conn, "ida")
    cog.write_user_turn(conn, other, SMALLTALK)
    entry, _ = cog.write_user_turn(conn, other, "Where do I keep my hammock?")
    got = [g["content"] for g in dmn.proactive_turn(conn, str(entry))]
    assert got[:1] == ["Earlier: I keep my hammock in the garage."]
    # the same session asking again: held back, and screen() says by which filter
    out = dmn.recaller.recall(conn, "Where do I keep my hammock?", k=5, log=False,
                              session_id=other)
    # the memory and the turn it was made from say the same: whichever ranks first is
    # held by the item cooldown, the other as its duplicate text
    why = [w for i, w in dmn.screen(conn, out.result.items, other, datetime.now(UTC))
           if i.content == "I keep my hammock in the garage."]
    assert why and all(w is not None for w in why), why
    assert why[0].startswith("item cooldown"), why


def test_each_turns_proactive_pass_runs_once(fast: Settings, conn: Any,
                                             cog: Cognition) -> None:
    """A repeated notification, or one that arrives after the tick handled its turn, does
    not run the turn's pass again (with the cooldowns off, a second pass would store the
    same recall twice)."""
    fast.idle["topic_cooldown_minutes"] = 0
    fast.idle["min_minutes_between_observations"] = 0
    fast.idle["max_observations_per_session"] = 100
    _remember(conn, cog, "lou", PASSPORT, DENTIST)
    dmn = Runtime(fast).dmn()
    sid = make_session(conn, "lou")
    cog.write_user_turn(conn, sid, SMALLTALK)
    entry, _ = cog.write_user_turn(conn, sid, "When does my passport expire?")
    assert len(dmn.proactive_turn(conn, str(entry))) == 1
    assert dmn.proactive_turn(conn, str(entry)) == []  # the same notification again
    cog.write_user_turn(conn, sid, SMALLTALK)
    entry, _ = cog.write_user_turn(conn, sid, "When is my dentist appointment?")
    assert [t["content"] for t in dmn.proactive(conn, datetime.now(UTC))] == [
        f"Earlier: {DENTIST}"]  # the tick's pass got there first (and skipped the passport)
    assert dmn.proactive_turn(conn, str(entry)) == []  # its notification, late
    assert conn.execute("SELECT count(*) FROM thoughts WHERE kind = 'proactive_recall'"
                        ).fetchone() == (2,)


@pytest.mark.parametrize("error", [ProviderError("the embedder broke"),
                                   psycopg.errors.DataError("a bad value")])
def test_a_failing_proactive_pass_does_not_stop_the_idle_worker(
        fast: Settings, db_url: str, conn: Any, cog: Cognition, error: Exception,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _remember(conn, cog, "flo", PASSPORT)
    sid = make_session(conn, "flo")
    cog.write_user_turn(conn, sid, SMALLTALK)
    entry, _ = cog.write_user_turn(conn, sid, "When does my passport expire?")
    worker = IdleWorker(fast, db_url)
    worker.setup()
    worker.conn = worker._connect()
    try:
        def broken(*args: Any, **kwargs: Any) -> Any:
            raise error

        monkeypatch.setattr(worker.dmn.recaller, "recall", broken)
        worker.on_turn(Event(Channel.TURN, Kind.TURN, str(entry)))  # logged, not raised
        assert worker.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        monkeypatch.undo()
        made = worker.dmn.proactive(worker.conn, datetime.now(UTC))  # the tick catches up
        assert [m["content"] for m in made] == [f"Earlier: {PASSPORT}"]
    finally:
        worker.conn.close()


def _self_prompt(conn: Any, dmn: Dmn, now: datetime) -> dict[str, Any]:
    for _ in range(30):
        got = dmn.surface(conn, now)
        if got and got.get("kind") == "self_prompt":
            return got
    raise AssertionError("no self-prompt surfaced")


def _cello(conn: Any, cog: Cognition) -> tuple[Any, str]:
    old = _remember(conn, cog, "ana", "I want to learn to play the cello well.")
    conn.execute("INSERT INTO goals (name, description, weight) VALUES ('music', "
                 "'learn to play the cello', 0.8)")
    mid = conn.execute("SELECT memory_id FROM memories").fetchone()[0]
    return old, f"memory:{mid}"


def _goal(conn: Any) -> tuple[int, int]:
    return conn.execute("SELECT actions, useful_actions FROM goals "
                        "WHERE name = 'music'").fetchone()


def test_a_self_prompt_acts_as_an_internal_turn_never_sent_to_a_user(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    _, item = _cello(conn, cog)
    dmn = Runtime(fast).dmn(rng=random.Random(7))
    now = datetime.now(UTC) + timedelta(seconds=5)  # idle: no user turn for 5 DMN minutes
    prompt = _self_prompt(conn, dmn, now)
    assert prompt["theme"] == item and _goal(conn) == (1, 0)  # an action for 'music'
    acted = dmn.act(conn, now)
    assert acted is not None and acted["self_prompt"] == prompt["thought_id"]
    row = conn.execute("SELECT content, source_ids, session_id, status FROM thoughts "
                       "WHERE kind = 'internal_turn'").fetchone()
    assert row[0].startswith("Heuristic answer (extractive, no model): [heuristic fallback]")
    assert row[1][0] == f"thought:{prompt['thought_id']}" and row[1][1] == item
    assert row[1][-1]["goal"] == "music" and row[1][-1]["fallback"] is True
    assert row[2] is None and row[3] == "new"
    assert conn.execute("SELECT status FROM thoughts WHERE thought_id = %s",
                        (prompt["thought_id"],)).fetchone() == ("acted",)
    _self_prompt(conn, dmn, now)
    assert dmn.act(conn, now) == {"skipped": "rate limit"}  # one per act_every_minutes
    # never among a conversation's proactive thoughts, never in another user's prompt ...
    bob = cog.answer(conn, make_session(conn, "bob"), "What should I practise this week?")
    assert not any("Heuristic answer" in t for t in bob.metadata["thoughts"])
    assert "on_my_mind" not in bob.metadata
    # ... but once in its own user's next prompt, "On my mind" (issue 42 item 7)
    sid = make_session(conn, "ana")
    result = cog.answer(conn, sid, "What should I practise on the cello this week?")
    assert not any("Heuristic answer" in t for t in result.metadata["thoughts"])
    [internal] = conn.execute("SELECT thought_id::text FROM thoughts "
                              "WHERE kind = 'internal_turn'").fetchone()
    assert internal in result.metadata["on_my_mind"]
    assert conn.execute("SELECT session_id, status FROM thoughts WHERE kind = 'internal_turn'"
                        ).fetchone() == (None, "injected")


def test_the_internal_turns_model_is_called_outside_a_transaction(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    """The tick holds no transaction open on the worker's connection while System 1
    answers a self-prompt (a real model takes seconds)."""
    _cello(conn, cog)
    dmn = Runtime(fast).dmn(rng=random.Random(7))
    now = datetime.now(UTC) + timedelta(seconds=5)
    _self_prompt(conn, dmn, now)
    seen: list[Any] = []

    class Model:
        model = "stub"

        def chat(self, messages: Any, **kwargs: Any) -> ChatResult:
            seen.append(conn.info.transaction_status)
            return ChatResult("Practise scales daily.", "stub", "stub")

    dmn._system1 = Model()
    acted = dmn.tick(conn, now)["acted"]
    assert acted is not None and acted.get("thought_id"), acted
    assert seen == [psycopg.pq.TransactionStatus.IDLE]
    assert conn.execute("SELECT content FROM thoughts WHERE kind = 'internal_turn'"
                        ).fetchone() == ("Practise scales daily.",)


def test_a_failing_model_is_not_asked_again_on_every_tick(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    """A self-prompt whose model call fails is marked act_failed; the next self-prompt
    waits for act_every_minutes like after a success."""
    _cello(conn, cog)
    dmn = Runtime(fast).dmn(rng=random.Random(7))
    now = datetime.now(UTC) + timedelta(seconds=5)
    first = _self_prompt(conn, dmn, now)
    calls: list[int] = []

    class Down:
        model = "stub"

        def chat(self, messages: Any, **kwargs: Any) -> ChatResult:
            calls.append(1)
            raise ProviderError("stub: the model is down")

    dmn._system1 = Down()
    assert "failed" in (dmn.act(conn, now) or {})
    assert conn.execute("SELECT status FROM thoughts WHERE thought_id = %s",
                        (first["thought_id"],)).fetchone() == ("act_failed",)
    _self_prompt(conn, dmn, now)
    assert dmn.act(conn, now + dmn.minutes(1)) == {"skipped": "rate limit"}
    assert len(calls) == 1
    later = now + dmn.minutes(fast.idle["act_every_minutes"] + 1)
    assert "failed" in (dmn.act(conn, later) or {}) and len(calls) == 2


def test_useful_actions_move_after_a_recall_or_a_citation(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    _, item = _cello(conn, cog)
    dmn = Runtime(fast).dmn(rng=random.Random(7))
    _self_prompt(conn, dmn, datetime.now(UTC))
    assert _goal(conn) == (1, 0)
    sid = make_session(conn, "ana")
    result = cog.answer(conn, sid, "I want to learn to play the cello well: where to start?")
    assert item in result.metadata["recall"]["items"]
    dmn.evolve(conn, datetime.now(UTC))
    assert _goal(conn) == (1, 1)  # recalled within the horizon: useful
    _self_prompt(conn, dmn, datetime.now(UTC))
    dmn.evolve(conn, datetime.now(UTC))
    assert _goal(conn) == (2, 1)  # neither recalled nor cited yet: still pending
    conn.execute("INSERT INTO memory_citations (cited_id, cited_kind, valid) "
                 "VALUES (%s, 'memory', true)", (item.split(":", 1)[1],))
    dmn.evolve(conn, datetime.now(UTC))
    assert _goal(conn) == (2, 2)  # cited in a reply: useful


def test_compulsion_safety_damps_a_goal_whose_actions_are_not_useful(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    fast.compulsion_safety["utility_min_actions"] = 2
    _cello(conn, cog)
    dmn = Runtime(fast).dmn(rng=random.Random(7))
    for _ in range(2):
        _self_prompt(conn, dmn, datetime.now(UTC))
    later = datetime.now(UTC) + timedelta(seconds=3600)  # past the outcome horizon
    dmn.evolve(conn, later)
    assert _goal(conn) == (2, 0)
    out = Runtime(fast).consolidator().goal_safety(conn, later)
    assert out is not None
    [change] = [c for c in out["outputs"]["changes"] if c["goal"] == "music"]
    assert change["reason"].startswith("utility damping") and change["to"] < change["from"]


def test_a_gut_signal_gets_its_outcome_after_the_horizon(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    old = _remember(conn, cog, "gus", "I care a lot about open source software.")
    cog.answer(conn, old, "What should I cook for dinner with leftover rice?")
    dmn = Runtime(fast).dmn()
    assert dmn.gut(conn)["delta_norm"] > 0
    cog.answer(conn, old, "Maybe fried rice with an egg and some spring onions?")
    assert dmn.gut_outcomes(conn, datetime.now(UTC)) == 0  # the horizon has not passed
    later = datetime.now(UTC) + timedelta(seconds=120)  # 60 DMN minutes + margin
    assert dmn.gut_outcomes(conn, later) == 1
    outcome, at = conn.execute("SELECT outcome, outcome_at FROM gut_signals").fetchone()
    assert at is not None and outcome["detector"] == "next-turns-heuristic"
    assert outcome["turns"] == 1 and outcome["delta_alignment"] is not None
    assert dmn.gut_outcomes(conn, later) == 0  # once


def test_an_epiphany_shows_up_once_as_a_double_take(
        fast: Settings, conn: Any, cog: Cognition, tmp_path: Path) -> None:
    sid = make_session(conn, "eve")
    user = user_of(conn, sid)
    dim = int(fast.embedding.universal_dim)
    prose = "Hawking radiation makes black holes slowly evaporate and lose their mass."
    vec = np.asarray(cog.universal.embed_documents([prose])[0], np.float32)
    old = np.random.default_rng(5).standard_normal(dim).astype(np.float32)
    now = datetime.now(UTC) - timedelta(days=9)
    bid = str(uuid.uuid4())
    cortex = LanceCortex(str(tmp_path / "cortex"), dim, dim)
    cortex.upsert(BLOCKS, [{
        "block_id": bid, "kind": "block", "session_id": str(sid), "user_id": str(user),
        "user_tier": "normal", "run_id": 1, "prose_text": prose, "live_zones_text": prose,
        "prose": "{}", "universal": vec.tolist(),
        "native": (old / np.linalg.norm(old)).tolist(), "native_model": "an-older-model",
        "flux_metrics": "{}", "salience_scores": "{}", "composite": 0.5,
        "coherence_gain": 0.1, "ties_merge_weight": 0.3, "citations": "[]",
        "preoccupation_centroid_id": None, "parent_metablock_id": None,
        "continues_from": None, "continued_by": None, "session_continuity_flag": False,
        "arc_start_time": now, "arc_end_time": now, "created_at": now, "migrated_at": now,
        "last_accessed": None, "vector_history": "[]"}], "block_id")
    store = LanceCortexStore(cortex, cog.universal, cog.universal, drift_min_similarity=0.5,
                             epiphany_delta=float(fast.night_cycle["epiphany_delta"]))
    [event] = store.reconsolidate(conn, [bid], sid)
    assert event["event"] == "epiphany"
    tid, content, sources = conn.execute(
        "SELECT thought_id::text, content, source_ids FROM thoughts WHERE kind = 'epiphany' "
        "AND status = 'new' AND user_id = %s", (user,)).fetchone()
    assert sources[0] == f"cortex:{bid}" and sources[1].startswith("day_table:")
    assert "Significant cognitive shift" in content
    # an unrelated turn does not take it
    other = make_session(conn, "eve")
    assert cog.answer(conn, other, "What should I cook for dinner tonight?"
                      ).metadata["double_takes"] == []
    first = cog.answer(conn, sid, "Why do black holes evaporate through Hawking radiation?")
    assert first.metadata["double_takes"] == [tid]
    again = cog.answer(conn, sid, "So black holes evaporate: how long does it take?")
    assert again.metadata["double_takes"] == []
    assert conn.execute("SELECT status FROM thoughts WHERE thought_id = %s",
                        (tid,)).fetchone() == ("injected",)


def test_a_waiting_epiphany_is_not_embedded_again_on_every_turn(
        fast: Settings, conn: Any, cog: Cognition, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop's hot path: an unseen epiphany is checked on each of its user's turns; its
    excerpt is embedded once, not per turn. Another user never takes it."""
    sid = make_session(conn, "ivy")
    excerpt = f"Mycorrhizal fungi trade sugars with tree roots {uuid.uuid4()}."
    conn.execute(
        "INSERT INTO thoughts (kind, content, theme, source_ids, user_id, status) VALUES "
        "('epiphany', 'a shift', %s, %s::jsonb, %s, 'new')",
        (f"cortex:{uuid.uuid4()}", json.dumps([{"excerpt": excerpt}]), user_of(conn, sid)))
    embedded: list[str] = []
    real = cog.universal.embed_documents

    def counting(texts: Any, memory_type: Any = None) -> Any:
        embedded.extend(texts)
        return real(texts, memory_type)

    monkeypatch.setattr(cog.universal, "embed_documents", counting)
    for question in ("What should I cook tonight?", "Any good films this week?"):
        assert double_takes.take(conn, cog.universal, user_of(conn, sid), question, set(),
                                 0.45) == []
    assert embedded.count(excerpt) == 1
    other = make_session(conn, "max")
    assert double_takes.take(conn, cog.universal, user_of(conn, other),
                             "How do mycorrhizal fungi trade sugars with tree roots?",
                             set(), 0.45) == []
    [(_, shown)] = double_takes.take(conn, cog.universal, user_of(conn, sid),
                                     "How do mycorrhizal fungi trade sugars with roots?",
                                     set(), 0.45)
    assert shown == "a shift"
