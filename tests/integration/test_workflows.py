"""Workflow patterns (seed 000 §10.5) on a real database, through the loop: a three-step
procedure repeated (paraphrased, with chatter around) in two sessions of one user becomes
a workflow at consolidation (the named sequence-heuristic, offline); a third session that
starts it gets the remaining steps in System 1's prompt, an unrelated turn does not; the
user following the steps completes the offer (+0.05, seed 000 §10.5)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent.config import Settings
from agent.runtime import Runtime
from agent.services.background.consolidation import Consolidator
from agent.workers.loop import LoopWorker
from tests.acceptance.test_handoff import _spy
from tests.conftest import make_session, user_of
from tests.integration.test_cognition import loop, say  # noqa: F401  (the loop fixture)

SESSION_1 = [
    "hi, the release is today",
    "Let's run the tests.",
    "they all pass, nice",
    "Now bump the version.",
    "Push the tag.",
    "thanks, that was quick",
]
SESSION_2 = [
    "morning! I had a long weekend",
    "Can you execute the test suite?",
    "ok, increase the version number",
    "the coffee machine is broken again",
    "push the tag to origin",
]
SECTION = "## A workflow this looks like"


def _workflows(cons: Consolidator, conn: Any) -> dict[str, Any] | None:
    with conn.transaction():
        return cons.workflows(conn, datetime.now(UTC))


def test_a_repeated_three_step_procedure_becomes_a_workflow_offered_when_it_starts(
        loop: LoopWorker, conn: Any, settings: Settings,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings.llm.roles["consolidation"] = "heuristic"  # offline: the named heuristic
    prompts = _spy(loop, monkeypatch)
    s1, s2 = make_session(conn, "alice"), make_session(conn, "alice")
    for text in SESSION_1:
        say(loop, conn, s1, text)
    cons = Runtime(settings).consolidator()
    assert _workflows(cons, conn) is None  # one session: no workflow yet
    for text in SESSION_2:
        say(loop, conn, s2, text)
    bob = make_session(conn, "bob")  # another user's turns never join alice's sessions
    say(loop, conn, bob, "Let's run the tests.")
    out = _workflows(cons, conn)
    assert out is not None and len(out["outputs"]["workflows"]) == 1
    rows = conn.execute(
        "SELECT w.workflow_id, w.name, w.trigger, w.steps, w.source_sessions, w.confidence, "
        "w.detector, u.handle FROM workflows w JOIN users u USING (user_id)").fetchall()
    assert len(rows) == 1
    wid, name, trigger, steps, sessions, confidence, detector, handle = rows[0]
    assert handle == "alice" and detector == "sequence-heuristic"
    assert [s["key"] for s in steps] == ["run tests", "bump version", "push tag"]
    assert name == "run tests → bump version → push tag"
    assert trigger == "run the tests"
    assert sorted(sessions) == sorted([str(s1), str(s2)])
    assert confidence == pytest.approx(0.5)  # seed 000 §10.5
    assert _workflows(cons, conn) is None  # the watermark: nothing new, nothing read again
    view = conn.execute("SELECT steps, sessions, name FROM v_workflows").fetchone()
    assert view == (3, 2, name)

    # a third session: an unrelated turn gets no workflow; starting it offers the rest
    s3 = make_session(conn, "alice")
    unrelated = say(loop, conn, s3, "What's a good recipe for pancakes?")
    assert "workflows" not in unrelated["meta"]
    assert SECTION not in prompts[-1][0]["content"]
    started = say(loop, conn, s3, "ok let's run the tests again")
    system = prompts[-1][0]["content"]
    assert SECTION in system
    offered = system.split(SECTION, 1)[1].split("\n## ", 1)[0]
    assert "bump the version" in offered and "Push the tag" in offered
    assert "run the tests" not in offered  # only the remaining steps
    assert [m["id"] for m in started["meta"]["workflows"]] == [f"workflow:{wid}"]
    assert conn.execute("SELECT times_matched FROM workflows").fetchone()[0] == 1
    # the user follows the steps: the next pass counts the offer completed
    say(loop, conn, s3, "now bump the version")
    say(loop, conn, s3, "and push the tag")
    out = _workflows(cons, conn)
    assert out is not None
    assert out["outputs"]["offers"] == [{"workflow_id": str(wid), "outcome": "completed"}]
    done = conn.execute("SELECT times_completed, times_skipped, confidence, "
                        "jsonb_array_length(source_sessions) FROM workflows").fetchone()
    # completed +0.05; the pass also found it in session 3 (a confirmation, +0.05)
    assert done[0] == 1 and done[1] == 0
    assert done[2] == pytest.approx(0.6) and done[3] == 3

    # forgetting a turn a step was cut from takes the workflow with it (the steps keep
    # their turn's id: the step "Push the tag" is a fragment, not a copy, of the turn)
    entry = conn.execute("SELECT entry_id FROM day_table WHERE session_id = %s "
                         "AND content = 'Push the tag.'", (s1,)).fetchone()[0]
    assert {s["entry_id"] for s in steps} >= {str(entry)}
    memory = conn.execute(
        "INSERT INTO memories (memory_type, content, user_id, source_entry_id) "
        "SELECT 'episodic', content, user_id, entry_id FROM day_table WHERE entry_id = %s "
        "RETURNING memory_id", (entry,)).fetchone()[0]
    Runtime(settings).forgetter(conn).memory(str(memory), "test")
    assert conn.execute("SELECT count(*) FROM workflows").fetchone()[0] == 0


def test_a_replayed_turn_gets_the_same_offer_and_is_counted_once(
        conn: Any, settings: Settings) -> None:
    """A turn run again after a crash (the same entry) gets the workflow it was offered
    again in its prompt, and the match is counted once."""
    import json
    import uuid

    from agent.db.queries import vector_text
    from agent.runtime import Runtime

    runtime = Runtime(settings)
    universal = runtime.universal
    flows = runtime.workflows()
    sid = make_session(conn, "alice")
    steps = [{"text": t, "key": k} for t, k in (("run the tests", "run tests"),
                                                ("bump the version", "bump version"))]
    conn.execute(
        "INSERT INTO workflows (user_id, name, trigger, steps, confidence, source_sessions, "
        "signature, universal_embedding, detector) SELECT user_id, 'release', "
        "'run the tests', %s::jsonb, 0.5, '[]', 'run tests | bump version', %s::vector, 'x' "
        "FROM sessions WHERE session_id = %s",
        (json.dumps(steps), vector_text(universal.embed_documents(["run the tests"])[0]), sid))
    user = user_of(conn, sid)
    entry = uuid.uuid4()
    first = flows.turn(conn, session_id=sid, user_id=user, entry_id=entry,
                       content="let's run the tests")
    again = flows.turn(conn, session_id=sid, user_id=user, entry_id=entry,
                       content="let's run the tests")
    assert first[0] and again == first
    assert conn.execute("SELECT times_matched FROM workflows").fetchone()[0] == 1
    later = flows.turn(conn, session_id=sid, user_id=user, entry_id=uuid.uuid4(),
                       content="let's run the tests")
    assert later == ([], [])  # a later turn of the session: offered already
