"""Predictions and reasoning trails on a real database (agent/services/thinking/foresight.py, the
per-turn call the loop makes): a prediction made in one turn and settled by a later one
counts in v_calibration; one past its deadline expires in consolidation; a replayed turn
adds nothing; a decision's outcome is linked by a later turn and `cogd why` shows the
trail. Offline: the named heuristics (the consolidation role routes to no real model)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent.config import Settings
from agent.db.queries import vector_text
from agent.errors import InputError
from agent.providers import factory
from agent.runtime import Runtime
from agent.services.thinking.foresight import Foresight
from tests.conftest import make_session, user_of


def _turn(conn: Any, embedder: Any, session: Any, text: str, at: datetime,
          role: str = "user") -> Any:
    vec = embedder.embed_documents([text])[0]
    return conn.execute(
        "INSERT INTO day_table (session_id, user_id, role, content, universal_embedding, "
        "created_at) SELECT session_id, user_id, %s, %s, %s::vector, %s FROM sessions "
        "WHERE session_id = %s RETURNING entry_id",
        (role, text, vector_text(vec), at, session)).fetchone()[0]


def _said(conn: Any, foresight: Foresight, embedder: Any, session: Any, text: str,
          at: datetime) -> dict[str, Any]:
    return foresight.user_turn(conn, _turn(conn, embedder, session, text, at), text)


def test_predictions_are_made_settled_counted_and_expired(settings: Settings,
                                                          conn: Any) -> None:
    settings.llm.roles["consolidation"] = "heuristic"
    embedder = factory.build_universal_embedder(settings)
    foresight = Runtime(settings).foresight()
    session = make_session(conn, "alice")
    t0 = datetime.now(UTC) - timedelta(days=40)
    made = _said(conn, foresight, embedder, session,
                 "I think the database migration will take two weeks.", t0)
    pred = made["predictions"]["made"][0]
    assert pred["detector"] == "prediction-cue-heuristic" and pred["domain"] == "technical"
    assert pred["deadline"] == (t0 + timedelta(days=14)).isoformat()
    assert pred["confidence"] == settings.predictions["confidence_default"]
    # a replayed turn (the same entry read again) adds no second prediction
    entry = conn.execute("SELECT source_entry_id FROM predictions").fetchone()[0]
    assert foresight.user_turn(conn, entry, "I think the database migration will take "
                               "two weeks.") == {}
    # an unrelated turn with an outcome cue settles nothing
    assert "predictions" not in _said(conn, foresight, embedder, session,
                                      "My sister's birthday party was late.",
                                      t0 + timedelta(days=1))
    settled = _said(conn, foresight, embedder, session,
                    "The database migration took three weeks in the end.",
                    t0 + timedelta(days=21))["predictions"]["settled"]
    assert [(s["id"], s["status"], s["detector"]) for s in settled] == [
        (pred["id"], "wrong", "outcome-cue-heuristic")]
    # a second prediction in the same bucket, settled correct: the hit rate is 0.5
    second = _said(conn, foresight, embedder, session,
                   "I think the new release will ship by Friday.", t0 + timedelta(days=22))
    assert second["predictions"]["made"][0]["confidence"] == pred["confidence"]
    ok = _said(conn, foresight, embedder, session, "The new release shipped on time.",
               t0 + timedelta(days=24))["predictions"]["settled"]
    assert [s["status"] for s in ok] == ["correct"]
    rows = conn.execute("SELECT domain, settled, hit_rate FROM v_calibration").fetchall()
    assert [(r[0], r[1], float(r[2])) for r in rows] == [("technical", 2, 0.5)]
    # a third one, never settled: its deadline passes and consolidation expires it
    _said(conn, foresight, embedder, session, "I bet Ana gets the job by June.",
          t0 + timedelta(days=25))
    pending = conn.execute("SELECT deadline FROM predictions WHERE status = 'pending'"
                           ).fetchall()
    assert len(pending) == 1
    cons = Runtime(settings).consolidator()
    with conn.transaction():
        assert cons.predictions(conn, pending[0][0] - timedelta(days=1)) is None
    with conn.transaction():
        out = cons.predictions(conn, pending[0][0] + timedelta(minutes=1))
    assert out is not None and len(out["outputs"]["expired"]) == 1
    assert conn.execute("SELECT count(*) FROM predictions WHERE status = 'expired'"
                        ).fetchone()[0] == 1
    with conn.transaction():  # nothing left to expire: the operation reports nothing
        assert cons.predictions(conn, pending[0][0] + timedelta(days=1)) is None


def test_a_decision_trail_with_its_outcome_shows_in_why(settings: Settings,
                                                        conn: Any) -> None:
    from agent.services.access.introspect import trail_lines

    settings.llm.roles["consolidation"] = "heuristic"
    embedder = factory.build_universal_embedder(settings)
    foresight = Runtime(settings).foresight()
    session = make_session(conn, "alice")
    t0 = datetime.now(UTC) - timedelta(days=30)
    text = ("We decided to use Postgres instead of MySQL because we need solid JSON "
            "support. MySQL replication was a pain last time.")
    made = _said(conn, foresight, embedder, session, text, t0)["decisions"]["made"][0]
    assert made["alternatives"] == [{"option": "MySQL",
                                     "why_not": "MySQL replication was a pain last time"}]
    assert made["rationale"] == "we need solid JSON support"
    # a question about it is no outcome; the later report is
    assert "decisions" not in _said(conn, foresight, embedder, session,
                                    "Did the Postgres switch work out?", t0 + timedelta(days=1))
    outcome = _said(conn, foresight, embedder, session,
                    "The switch to Postgres worked out great. Lesson: test the JSON "
                    "queries early.", t0 + timedelta(days=20))["decisions"]["outcomes"]
    assert [(o["id"], o["assessment"]) for o in outcome] == [(made["id"], "win")]
    trails = foresight.decisions.trails(conn, text="Postgres")
    lines = trail_lines(trails)
    assert lines[0].startswith("Decision: We decided to use Postgres instead of MySQL")
    assert lines[1:] == [
        "Considered: MySQL (MySQL replication was a pain last time)",
        "Because: we need solid JSON support",
        "Outcome: The switch to Postgres worked out great. (win)",
        "Lesson: test the JSON queries early"]
    # the exit gate's decision memory of that turn, made later: consolidation links it,
    # and `cogd why` of that memory (its id among the chain's) finds the trail
    entry = conn.execute("SELECT entry_id FROM decisions").fetchone()[0]
    memory = conn.execute(
        "INSERT INTO memories (user_id, session_id, source_entry_id, memory_type, content) "
        "SELECT user_id, session_id, entry_id, 'decision', content FROM day_table "
        "WHERE entry_id = %s RETURNING memory_id", (entry,)).fetchone()[0]
    with conn.transaction():
        out = Runtime(settings).consolidator().decisions(conn, datetime.now(UTC))
    assert out is not None and out["outputs"]["linked"] == [made["id"].split(":", 1)[1]]
    assert out["outputs"]["made"] == []  # the memory's turn has its trail already
    assert [t["decision_id"] for t in foresight.decisions.trails(conn, memories=[str(memory)])
            ] == [made["id"].split(":", 1)[1]]
    # another user's conversation (the REPL's /why) never sees alice's trail
    from agent.services.access.introspect import why, why_lines

    bob = user_of(conn, make_session(conn, "bob"))
    alice = conn.execute("SELECT user_id FROM decisions").fetchone()[0]
    assert foresight.decisions.trails(conn, text="Postgres", user_id=bob) == []
    assert len(foresight.decisions.trails(conn, text="Postgres", user_id=alice)) == 1
    rt = Runtime(settings)
    recaller, decisions = rt.recaller(), rt.decision_tracker()
    with pytest.raises(InputError, match="no memory or decision of 'bob' matches"):
        why(conn, decisions, recaller, "Postgres", user_id=bob, handle="bob")
    lines = why_lines(why(conn, decisions, recaller, "Postgres", user_id=alice))
    assert any(line.startswith("Decision: We decided to use Postgres") for line in lines)


def test_forgetting_a_prediction_turn_takes_its_problem_and_overnight_thought(
        settings: Settings, conn: Any) -> None:
    """A wrong prediction becomes a failed_prediction problem and then an overnight thought
    that quote its sentence (not the whole turn): forgetting the turn removes them too."""
    from agent.domain import overnight
    from agent.services.thinking import problems

    settings.llm.roles["consolidation"] = "heuristic"
    embedder = factory.build_universal_embedder(settings)
    foresight = Runtime(settings).foresight()
    session = make_session(conn, "alice")
    t0 = datetime.now(UTC) - timedelta(days=30)
    said = ("Our landlord Mr Ferreira is selling the flat on Elm Street. I think the "
            "database migration will take two weeks.")
    entry = _turn(conn, embedder, session, said, t0)
    assert foresight.user_turn(conn, entry, said)["predictions"]["made"]
    _said(conn, foresight, embedder, session,
          "The database migration took three weeks in the end.", t0 + timedelta(days=21))
    with conn.transaction():
        assert problems.fill(conn, t0, datetime.now(UTC))["failed_prediction"] == 1
    problem = problems.open_batch(conn, 10)[0]
    tid = overnight.thought_id("overnight", problem.problem_id)
    problems.write_thought(conn, thought_id=tid, kind="overnight",
                           content=f"Overnight, on a failed prediction: {problem.content}",
                           theme="night-cycle run 1",
                           sources=[f"problem:{problem.problem_id}", *problem.source_ids],
                           user_id=problem.user_id, confidence=0.2)
    memory = conn.execute(
        "INSERT INTO memories (memory_type, content, user_id, source_entry_id) "
        "SELECT 'episodic', content, user_id, entry_id FROM day_table WHERE entry_id = %s "
        "RETURNING memory_id", (entry,)).fetchone()[0]
    Runtime(settings).forgetter(conn).memory(str(memory), "test")
    for table in ("predictions", "problem_queue", "thoughts"):
        rows = conn.execute(f"SELECT count(*) FROM {table} t "
                            "WHERE t::text LIKE '%%migration will take%%'").fetchone()[0]
        assert rows == 0, table
