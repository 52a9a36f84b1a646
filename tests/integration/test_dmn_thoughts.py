"""Issue 42 items 7 and 9 on a real Postgres: the DMN's idle thoughts reach their user's next
prompt once ("On my mind") or expire; the gut's outcome record changes what surfaces; a
frustrated turn (the frustration heuristic) gets a brief, acknowledging reply path and no
unasked-for thoughts; dormant memories close to the recent topics are recovered, audit-logged.
Heuristic models; the DMN's clock is the `now` each call is given."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from agent.config import Settings
from agent.db.queries import vector_text
from agent.domain.prompt import build_messages
from agent.runtime import Runtime
from agent.services.access import introspect
from agent.services.conversation.cognition import Cognition
from tests.conftest import NoFloor, heuristic_roles, make_session, user_of


@pytest.fixture
def fast(settings: Settings) -> Settings:
    heuristic_roles(settings)
    settings.idle["seconds_per_minute"] = 1.0  # one DMN "minute" is one second
    settings.idle["dormant_draw_probability"] = 0.0  # no dormant draw unless a test asks
    return settings


@pytest.fixture
def cog(fast: Settings) -> Cognition:
    return Runtime(fast).cognition(rng=NoFloor())


def _thought(conn: Any, kind: str, content: str, user: Any, at: datetime | None = None) -> str:
    return str(conn.execute(
        "INSERT INTO thoughts (kind, content, theme, user_id, created_at) "
        "VALUES (%s, %s, 'test', %s, %s) RETURNING thought_id",
        (kind, content, user, at or datetime.now(UTC))).fetchone()[0])


def _status(conn: Any, tid: str) -> str:
    return conn.execute("SELECT status FROM thoughts WHERE thought_id = %s",
                        (tid,)).fetchone()[0]


# -- item 7: every thought reaches something or is gone -------------------------------

def test_idle_thoughts_reach_their_users_next_prompt_once_within_the_budget(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    ana = make_session(conn, "ana")
    bob = make_session(conn, "bob")
    uid = user_of(conn, ana)
    old = _thought(conn, "creative_impulse", "A thought in the light of 'curiosity': "
                   "kites over the harbour", uid, datetime.now(UTC) - timedelta(minutes=5))
    newer = _thought(conn, "internal_turn", "The cello practice could follow the metronome "
                     "plan from last week.", uid, datetime.now(UTC) - timedelta(minutes=1))
    third = _thought(conn, "creative_impulse", "A thought in the light of 'care': "
                     "the allotment's first tomatoes", uid,
                     datetime.now(UTC) - timedelta(minutes=9))
    # another user never gets them
    assert "on_my_mind" not in cog.answer(conn, bob, "hello").metadata
    ctx = cog.prepare_turn(conn, ana, "good morning, what is on the plan today?")
    lines = list(ctx.parts.on_my_mind)
    # newest first, at most on_my_mind_max_thoughts (2)
    assert len(lines) == 2 and lines[0].startswith("thought over while idle: The cello")
    assert "kites over the harbour" in lines[1]
    assert ctx.reach_meta["on_my_mind"] == [newer, old]
    system = build_messages(ctx.parts)[0]["content"]
    assert "## On my mind (thought between conversations)" in system
    assert "metronome plan" in system
    assert (_status(conn, newer), _status(conn, old), _status(conn, third)) == (
        "injected", "injected", "new")
    # shown once: the next turn gets only the one left
    again = cog.prepare_turn(conn, ana, "and after lunch?")
    assert [t for t in again.reach_meta.get("on_my_mind", [])] == [third]
    assert cog.prepare_turn(conn, ana, "thanks").parts.on_my_mind == []


def test_the_budget_cuts_a_long_thought_rather_than_dropping_it(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    fast.idle["on_my_mind_max_tokens"] = 20
    sid = make_session(conn, "ana")
    older = _thought(conn, "creative_impulse", "A thought in the light of 'care': tomatoes",
                     user_of(conn, sid), datetime.now(UTC) - timedelta(minutes=1))
    tid = _thought(conn, "internal_turn", "word " * 400, user_of(conn, sid))
    cog = Runtime(fast).cognition(rng=NoFloor())
    ctx = cog.prepare_turn(conn, sid, "hi")
    [line] = ctx.parts.on_my_mind
    assert line.endswith("…") and len(line) <= 20 * 4 + 1
    assert _status(conn, tid) == "injected"
    # the older one did not fit: it waits for the next turn, not lost
    assert _status(conn, older) == "new"
    assert cog.prepare_turn(conn, sid, "and?").reach_meta["on_my_mind"] == [older]


def test_unshown_idle_thoughts_and_unacted_self_prompts_expire(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    sid = make_session(conn, "ana")
    uid = user_of(conn, sid)
    now = datetime.now(UTC)
    impulse = _thought(conn, "creative_impulse", "an impulse", uid, now)
    internal = _thought(conn, "internal_turn", "an internal turn", uid, now)
    prompt = _thought(conn, "self_prompt", "How does this serve the goal 'music'?", uid, now)
    recall = _thought(conn, "proactive_recall", "Earlier: something", uid, now)
    dmn = Runtime(fast).dmn()
    assert dmn.expire(conn, now) == {}
    # the self-prompt is past the outcome horizon (60 DMN minutes) first
    assert dmn.expire(conn, now + dmn.minutes(61)) == {"self_prompt": 1}
    day = fast.idle["unshown_max_age_minutes"]
    assert dmn.expire(conn, now + dmn.minutes(day + 1)) == {
        "creative_impulse": 1, "internal_turn": 1, "proactive_recall": 1}
    assert [_status(conn, t) for t in (impulse, internal, prompt, recall)] == [
        "expired", "expired", "expired", "expired"]
    # an expired thought never reaches a prompt, and is kept
    assert cog.prepare_turn(conn, sid, "hello").parts.on_my_mind == []
    assert conn.execute("SELECT count(*) FROM thoughts").fetchone()[0] == 4


def test_a_surfaced_memory_makes_a_thought_of_the_memorys_user(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    sid = make_session(conn, "ana")
    introspect.remember(conn, cog, sid, user_of(conn, sid), "I keep bees on the allotment.")
    got = Runtime(fast).dmn(rng=random.Random(3)).surface(conn, datetime.now(UTC))
    assert got is not None and got["theme"].startswith("memory:")
    assert conn.execute("SELECT user_id FROM thoughts WHERE thought_id = %s",
                        (got["thought_id"],)).fetchone()[0] == user_of(conn, sid)


# -- item 7: gut signals change what surfaces ----------------------------------------

def _memory(conn: Any, cog: Cognition, sid: Any, text: str, importance: float) -> tuple[str, Any]:
    introspect.remember(conn, cog, sid, user_of(conn, sid), text)
    mid, vec = conn.execute("SELECT memory_id, universal_embedding::text FROM memories "
                            "WHERE content = %s", (text,)).fetchone()
    conn.execute("UPDATE memories SET importance = %s WHERE memory_id = %s", (importance, mid))
    return f"memory:{mid}", np.asarray(json.loads(vec), dtype=np.float32)


def _gut(conn: Any, delta: Any, good: bool) -> None:
    outcome = {"detector": "next-turns-heuristic", "turns": 2,
               "delta_alignment": 0.4 if good else -0.3,
               "recalls_matched": 1 if good else 0, "citations": 0}
    conn.execute("INSERT INTO gut_signals (delta_norm, delta, layers, action, outcome, "
                 "outcome_at) VALUES (%s, %s::vector, '{}', 'logged', %s, now())",
                 (float(np.linalg.norm(delta)), vector_text(delta), json.dumps(outcome)))


def test_the_guts_outcome_record_raises_what_it_was_right_about_and_lowers_the_rest(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    for feature in ("recency", "association", "access"):
        fast.idle[f"surfacing_weight_{feature}"] = 0.0
    fast.idle["surfacing_weight_gut_intensity"] = 1.0
    fast.idle["surfacing_noise"] = 0.0
    sid = make_session(conn, "ana")
    hiking, hv = _memory(conn, cog, sid, "I love hiking in the Alps every summer.", 0.5)
    taxes, tv = _memory(conn, cog, sid, "My tax return is due at the end of July.", 0.6)
    dmn = Runtime(fast).dmn(rng=random.Random(1))
    now = datetime.now(UTC)

    def intensity() -> dict[str, float]:
        items, _, _ = dmn.candidates(conn, now)
        return {i.id: i.gut_intensity for i in items if i.id in (hiking, taxes)}

    assert intensity() == {hiking: 0.5, taxes: 0.6}  # no record: importance alone
    assert dmn.surface(conn, now)["theme"] == taxes
    # the gut was right when it pointed at hiking, wrong when it pointed at taxes
    for _ in range(3):
        _gut(conn, hv * 0.8, good=True)
        _gut(conn, tv * 0.8, good=False)
    _gut(conn, tv * 0.5, good=True)  # one mixed note in the record
    moved = intensity()
    assert moved[hiking] > 0.5 and moved[taxes] < 0.6 and moved[hiking] > moved[taxes]
    got = dmn.surface(conn, now)
    assert got["theme"] == hiking and got["gut_intensity"] == pytest.approx(moved[hiking])


# -- item 9: frustration ----------------------------------------------------------------

def test_a_frustrated_turn_gets_a_brief_acknowledging_reply_and_no_unasked_thoughts(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    sid = make_session(conn, "kim")
    uid = user_of(conn, sid)
    calm = cog.prepare_turn(conn, sid, "When is my flight to Oslo?")
    assert calm.parts.frustration is None
    assert calm.reach_meta["frustration"]["frustrated"] is False
    # the same question again (one cue, not yet frustrated), then a short correction:
    # corrections in a row
    second = cog.prepare_turn(conn, sid, "When is my flight to Oslo??")
    assert second.reach_meta["frustration"]["cues"] == ["rephrase"]
    assert second.reach_meta["frustration"]["frustrated"] is False
    waiting = _thought(conn, "internal_turn", "Kim's Oslo trip might need a rail pass.", uid)
    conn.execute("INSERT INTO thoughts (kind, content, theme, session_id, user_id) VALUES "
                 "('proactive_recall', 'Earlier: the hotel is near the station', "
                 "'topic_shift', %s, %s)", (sid, uid))
    ctx = cog.prepare_turn(conn, sid, "No, that's wrong!!")
    got = ctx.reach_meta["frustration"]
    assert got["frustrated"] is True and got["detector"] == "frustration-heuristic"
    assert {"short_negative", "exclamation"} <= set(got["cues"]) and got["streak"] >= 1
    assert ctx.parts.frustration is not None and "Be brief" in ctx.parts.frustration
    system = build_messages(ctx.parts)[0]["content"]
    assert "## The user seems frustrated" in system and "acknowledge" in system
    assert ctx.parts.thoughts == [] and ctx.parts.on_my_mind == []
    # stored with the turn's emotional state
    stored = conn.execute("SELECT signals -> 'frustration' FROM emotional_state "
                          "WHERE entry_id = %s", (ctx.user_entry,)).fetchone()[0]
    assert stored["frustrated"] is True and stored["cues"] == got["cues"]
    # the held-back thoughts wait for a calm turn
    assert _status(conn, waiting) == "new"
    later = cog.answer(conn, sid, "Thanks. Could you also tell me about the weather there?")
    assert later.metadata["frustration"]["frustrated"] is False  # the reply's metadata
    assert later.metadata["on_my_mind"] == [waiting]
    assert any("hotel is near the station" in t for t in later.metadata["thoughts"])


def test_the_dmn_holds_proactive_recall_back_on_a_frustrated_turn(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    old = make_session(conn, "kim")
    introspect.remember(conn, cog, old, user_of(conn, old), "My passport expires in March 2027.")
    dmn = Runtime(fast).dmn()

    def ask(question: str) -> list[dict[str, Any]]:
        sid = make_session(conn, "kim")
        cog.write_user_turn(conn, sid, "hi, the weather is lovely and sunny today")
        entry, _ = cog.write_user_turn(conn, sid, question)
        return dmn.proactive_turn(conn, str(entry), datetime.now(UTC))

    upset = ask("I ALREADY TOLD YOU!! When does my passport expire?")
    assert upset == []
    assert conn.execute("SELECT count(*) FROM thoughts").fetchone() == (0,)
    calm = ask("When does my passport expire?")  # the same recall, calmly: it comes
    assert calm and {t["theme"] for t in calm} == {"topic_shift"}
    assert any("passport expires in March 2027" in t["content"] for t in calm)


# -- item 9: dormant-memory recovery ----------------------------------------------------

def test_a_dormant_memory_close_to_the_recent_topics_is_recovered_and_audit_logged(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    sid = make_session(conn, "mia")
    uid = user_of(conn, sid)
    dumplings, _ = _memory(conn, cog, sid,
                           "My grandmother made plum dumplings with quark every autumn.", 0.5)
    _memory(conn, cog, sid, "The car insurance renews in June.", 0.5)
    mid = dumplings.split(":", 1)[1]
    # decay archived it long ago (importance halved below the floor)
    conn.execute("UPDATE memories SET importance = 0.1, status = 'archived' "
                 "WHERE memory_id = %s", (mid,))
    for text in ("How do I make plum dumplings with quark?",
                 "My grandmother's plum dumplings recipe, do you remember it?"):
        cog.write_user_turn(conn, make_session(conn, "mia"), text)
    fast.idle["dormant_draw_probability"] = 1.0
    dmn = Runtime(fast).dmn(rng=random.Random(2))
    # not dormant yet: written just now (nothing is drawn from the dormant pool)
    first = dmn.surface(conn, datetime.now(UTC))
    assert first is not None and "recovered" not in first
    assert conn.execute("SELECT status FROM memories WHERE memory_id = %s",
                        (mid,)).fetchone() == ("archived",)
    # 40 days later it is dormant: not recalled for 30+ days, used fewer than 3 times
    later = datetime.now(UTC) + timedelta(days=40)
    got = dmn.surface(conn, later)
    assert got is not None and got["theme"] == dumplings
    assert got["recovered"]["before"] == {"importance": 0.1, "status": "archived",
                                          "last_accessed": None}
    imp, status, touched, meta = conn.execute(
        "SELECT importance, status, last_accessed, metadata FROM memories "
        "WHERE memory_id = %s", (mid,)).fetchone()
    assert (imp, status, touched) == (fast.idle["dormant_refresh_importance"], "active", later)
    assert meta["recovered_at"] == later.isoformat()
    actor, target, details = conn.execute(
        "SELECT actor, target, details FROM audit_log "
        "WHERE action = 'memory_recovered'").fetchone()
    assert (actor, target) == ("dmn", dumplings)
    assert details["before"]["importance"] == 0.1 and details["after"]["status"] == "active"
    sources = conn.execute("SELECT source_ids, user_id FROM thoughts WHERE thought_id = %s",
                           (got["thought_id"],)).fetchone()
    assert sources[0][1]["dormant"] is True and sources[1] == uid
    # recovered: its decay clock restarted, so it is not dormant the next time
    again = dmn.surface(conn, later + timedelta(minutes=1))
    assert again is None or "recovered" not in again or again["theme"] != dumplings


def test_without_the_dormant_draw_nothing_is_recovered(
        fast: Settings, conn: Any, cog: Cognition) -> None:
    sid = make_session(conn, "mia")
    _memory(conn, cog, sid, "My grandmother made plum dumplings with quark every autumn.", 0.5)
    cog.write_user_turn(conn, sid, "How do I make plum dumplings with quark?")
    dmn = Runtime(fast).dmn(rng=random.Random(2))  # dormant_draw_probability = 0
    got = dmn.surface(conn, datetime.now(UTC) + timedelta(days=40))
    assert got is not None and "recovered" not in got
    assert conn.execute("SELECT count(*) FROM audit_log WHERE action = 'memory_recovered'"
                        ).fetchone() == (0,)
