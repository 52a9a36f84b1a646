"""The emotional state on a real database (seed 000 §3, §4.2): negative turns move it
down and a day's gap brings it back; the prompt and the reply's metadata carry it;
memories the exit gate forms carry its imprint; recall's mood congruence on vs off."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent.config import Settings
from agent.db.queries import vector_text
from agent.domain import emotion as rules
from agent.domain.prompt import build_messages
from agent.runtime import Runtime
from agent.services.conversation import emotion
from agent.workers.loop import LoopWorker
from tests.conftest import make_session, user_of
from tests.integration.test_cognition import loop, say  # noqa: F401
from tests.stubserver import StubServer, stub_server_fixture  # noqa: F401

NEGATIVE = [
    "Remember this: I'm so frustrated, the deploy script is broken again.",
    "Remember this: the staging database crashed and I am annoyed, this is terrible.",
    "Ugh, the tests failed again and I hate this build, it is awful.",
    "Remember this: I'm angry that the release is broken and nothing works.",
]


@pytest.fixture
def quiet(settings: Settings) -> Settings:
    settings.emotion["noise_sigma"] = 0.0  # deterministic states
    return settings


def test_negative_turns_move_valence_down_and_a_gap_brings_it_back(
        quiet: Settings, loop: LoopWorker, conn: Any) -> None:  # noqa: F811
    cfg = rules.EmotionConfig.from_table(quiet.emotion)
    sid = make_session(conn)
    uid = user_of(conn, sid)
    before = emotion.current(conn, uid, datetime.now(UTC), cfg)
    assert before.state == cfg.temperament and before.changed_at is None
    assert "this is the temperament" in emotion.mood_text(conn, uid, datetime.now(UTC), cfg)
    replies = [say(loop, conn, sid, text) for text in NEGATIVE]
    valences = [r["meta"]["emotion"]["valence"] for r in replies]
    assert valences == sorted(valences, reverse=True)  # each negative turn lowers it
    assert valences[-1] < cfg.temperament_valence - 0.5
    last = replies[-1]["meta"]["emotion"]
    assert last["detector"] == rules.LEXICON_DETECTOR
    assert rules.region(last["label"]) in ("negative-high", "negative-low")
    rows = conn.execute("SELECT e.valence, e.detector, e.signals, d.content FROM emotional_state e "
                        "JOIN day_table d USING (entry_id) ORDER BY e.created_at").fetchall()
    assert [r[3] for r in rows] == NEGATIVE and all(r[1] == "lexicon-heuristic" for r in rows)
    assert "frustrated" in rows[0][2]["cues"]
    # the view shows the user's latest state
    view = conn.execute("SELECT user_handle, label, detector FROM v_emotion").fetchall()
    assert view == [("alice", last["label"], "lexicon-heuristic")]
    shown = emotion.mood_text(conn, uid, datetime.now(UTC), cfg)  # what /mood prints
    assert shown.startswith(f"mood: {last['label']} (valence {last['valence']:+.2f}")
    assert "by lexicon-heuristic" in shown and "last changed" in shown
    # the prompt carries it as a tendency
    ctx = loop.cognition.prepare_turn(loop.conn, sid, "This is still broken and I'm frustrated.")
    assert ctx.parts.mood is not None and "let it colour your tone" in ctx.parts.mood
    assert ctx.parts.mood in build_messages(ctx.parts)[0]["content"]
    assert f"valence {ctx.mood.state.valence:+.2f}" in ctx.parts.mood
    # a replayed turn (the same entry) does not move the state twice
    again = emotion.update(conn, uid, ctx.user_entry, "awful awful awful", datetime.now(UTC), cfg)
    assert again.state == ctx.mood.state
    assert conn.execute("SELECT count(*) FROM emotional_state WHERE entry_id = %s",
                        (ctx.user_entry,)).fetchone()[0] == 1
    # two days later the state has decayed back near the temperament (seed 000 §3.3: a
    # 48-hour gap leaves e^-2.4 ~ 0.09 of the distance)
    low = emotion.current(conn, uid, datetime.now(UTC), cfg).state
    later = emotion.current(conn, uid, datetime.now(UTC) + timedelta(hours=48), cfg).state
    assert abs(later.valence - cfg.temperament_valence) < 0.1 * abs(
        low.valence - cfg.temperament_valence)
    assert abs(later.valence - cfg.temperament_valence) < 0.15
    assert later.valence > low.valence + 1.0
    # a turn with no cue (and no gap) leaves the state where it was
    neutral = loop.cognition.prepare_turn(loop.conn, sid, "The meeting is at 3 pm in room B.")
    assert neutral.mood.state.valence == pytest.approx(low.valence, abs=0.01)


def test_a_memory_formed_by_the_exit_gate_carries_the_turns_imprint(
        quiet: Settings, loop: LoopWorker, conn: Any) -> None:  # noqa: F811
    sid = make_session(conn)
    for text in [*NEGATIVE, "ok", "fine", "The weather was grey and windy all afternoon."]:
        say(loop, conn, sid, text)
    rows = conn.execute(
        "SELECT m.content, m.emotion, e.valence, e.energy, e.openness, e.label, d.role "
        "FROM memories m JOIN day_table d ON d.entry_id = m.source_entry_id "
        "LEFT JOIN emotional_state e ON e.entry_id = m.source_entry_id").fetchall()
    user_rows = [r for r in rows if r[6] == "user"]
    assert any(r[0] == NEGATIVE[0] for r in user_rows)  # the exit gate kept it
    for content, imprint, v, en, o, name, _role in user_rows:
        assert imprint == {"valence": v, "energy": en, "openness": o, "label": name}, content
    assert all(r[1] is not None for r in rows)  # assistant turns: the state before them
    assert rules.EmotionState.from_mapping(user_rows[0][1]).valence < 0.55


def _memory(conn: Any, embedder: Any, uid: Any, text: str,
            imprint: rules.EmotionState | None) -> Any:
    vec = embedder.embed_documents([text])[0]
    return conn.execute(
        "INSERT INTO memories (user_id, memory_type, content, universal_embedding, emotion) "
        "VALUES (%s, 'fact', %s, %s::vector, %s::jsonb) RETURNING memory_id",
        (uid, text, vector_text(vec),
         None if imprint is None else json.dumps(imprint.as_dict()))).fetchone()[0]


def test_mood_congruence_on_ranks_the_congruent_memory_first_off_leaves_the_order(
        settings: Settings, conn: Any) -> None:
    settings.reranker.enabled = False  # the order is the fusion's, not a cross-encoder's
    cfg = rules.EmotionConfig.from_table(settings.emotion)
    recaller = Runtime(settings).recaller()
    uid = conn.execute("INSERT INTO users (handle) VALUES ('bob') RETURNING user_id").fetchone()[0]
    texts = ["The deploy to staging failed on Friday night.",
             "The deploy to staging failed on Monday night."]
    ids = [_memory(conn, recaller.embedder, uid, t, None) for t in texts]
    question = "when did the deploy to staging fail?"

    def order(mood: rules.EmotionState | None) -> list[str]:
        cue = None if mood is None else rules.MoodCue(mood, cfg)
        out = recaller.recall(conn, question, user_id=uid, log=False, mood=cue)
        return [i.id for i in out.result.items if i.kind == "memory"]

    baseline = order(None)
    assert sorted(baseline) == sorted(f"memory:{i}" for i in ids)
    first, second = baseline
    upset = rules.EmotionState(-0.6, 0.75, 0.3)
    calm = rules.EmotionState(0.6, 0.3, 0.6)
    for mid, imprint in ((first, calm), (second, upset)):
        conn.execute("UPDATE memories SET emotion = %s::jsonb WHERE memory_id = %s",
                     (json.dumps(imprint.as_dict()), mid.split(":", 1)[1]))
    assert order(None) == baseline  # off (no mood): the imprints change nothing
    assert order(upset) == [second, first]  # on: the memory formed upset comes first
    assert order(calm) == baseline  # on, calm: the calm one stays first


def test_the_mood_slash_command_prints_the_state(settings: Settings, db_url: str) -> None:
    from agent.commands.chat import SLASH_HELP, ChatClient, _slash

    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    client = ChatClient(settings, db_url, "carol", None)
    try:
        out: list[str] = []
        assert _slash(client, "/mood", out.append) is True
    finally:
        client.close()
    assert "/mood" in SLASH_HELP
    assert out[0].startswith("mood: steady (valence +0.55, energy 0.50, openness 0.65)")


def test_a_real_llm_judges_the_turn_when_the_emotion_role_routes_to_one(
        settings: Settings, conn: Any, stub_server: StubServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Role `emotion` on an openai profile: its JSON is the signal (detector llm:...); an
    answer that is not the JSON asked for falls back to the lexicon heuristic, named."""
    stub_server.route(settings, monkeypatch, "emotion")
    cfg = rules.EmotionConfig.from_table(settings.emotion)
    judge = Runtime(settings).emotion_judge()
    assert judge is not None
    sid = make_session(conn)
    uid = user_of(conn, sid)
    entries = [conn.execute(
        "INSERT INTO day_table (session_id, user_id, role, content) VALUES (%s, %s, 'user', %s) "
        "RETURNING entry_id", (sid, uid, text)).fetchone()[0]
        for text in ("the report is due friday", "I am so frustrated")]
    stub_server.queue_replies('{"valence": -1, "energy": 0.5, "openness": 0}', "no idea")
    now = datetime.now(UTC)
    try:
        first = emotion.update(conn, uid, entries[0], "the report is due friday", now, cfg,
                               judge=judge)
        second = emotion.update(conn, uid, entries[1], "I am so frustrated", now, cfg,
                                judge=judge)
    finally:
        judge.close()  # type: ignore[attr-defined]
    assert first.detector == "llm:openai/stub-chat"
    assert first.state.valence == pytest.approx(cfg.temperament_valence - cfg.step)
    assert second.detector == rules.LEXICON_DETECTOR and second.state.valence < first.state.valence
    settings.llm.roles["emotion"] = "heuristic"
    assert Runtime(settings).emotion_judge() is None  # offline: the heuristic, no model
