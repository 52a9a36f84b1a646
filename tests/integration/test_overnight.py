"""Overnight thinking (seed 000 §9.5-9.6; issue 18): night cycle stage 10 on a real
Postgres and a real LanceDB cortex (built as tests/integration/test_broad_recall.py
builds it: sixteen sessions of one user on four themes, stage 8's tree over them), with
the offline (heuristic) night_cycle model."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.config import Settings
from agent.domain import overnight
from agent.providers.text import default_counter
from agent.runtime import Runtime
from agent.services.thinking import problems
from night_cycle.runner import NightCycle
from tests.acceptance.test_cli import assert_clean_error, run
from tests.conftest import cogd_env, make_session, user_of
from tests.integration.test_broad_recall import build_cortex
from tests.integration.test_intentions import _turn


def _contradiction(conn: Any, user: Any, a: str, b: str) -> tuple[str, str]:
    ids = [str(conn.execute(
        "INSERT INTO memories (user_id, content, memory_type) VALUES (%s, %s, 'fact') "
        "RETURNING memory_id", (user, text)).fetchone()[0]) for text in (a, b)]
    conn.execute("INSERT INTO memory_links (source_id, target_id, link_type) "
                 "VALUES (%s, %s, 'contradicts')", (ids[0], ids[1]))
    return ids[0], ids[1]


def _thoughts(conn: Any, kind: str) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT thought_id::text, user_id, content, source_ids, confidence, status "
        "FROM thoughts WHERE kind = %s ORDER BY thought_id", (kind,)).fetchall()


def test_a_night_works_an_open_contradiction_once_and_the_next_handoff_carries_it(
    settings: Settings, db_url: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    build_cortex(settings, db_url)  # nora's cortex and RAPTOR tree
    settings.night_cycle["drift_max_similarity"] = 0.6  # the four themes' nodes are "distant"
    with psycopg.connect(db_url, autocommit=True) as conn:
        nora = conn.execute("SELECT user_id FROM users WHERE handle = 'nora'").fetchone()[0]  # type: ignore[index]
        bob = user_of(conn, make_session(conn, "bob"))
        a, b = _contradiction(conn, nora, "The marathon is on the first Sunday of April.",
                              "The marathon is on the last Sunday of May.")
        superseded = _contradiction(conn, nora, "The tax office is in town.",
                                    "The tax office moved out of town.")
        conn.execute("UPDATE memories SET status = 'superseded' WHERE memory_id = %s",
                     (superseded[0],))  # resolved: not a problem any more
        asked = problems.add(conn, nora, "How do I fit marathon training around the tax "
                             "deadline?")

    # a crash after the first problem is written: the run fails mid-stage
    calls = {"n": 0}
    real = overnight.heuristic_work

    def crash_on_second(*args: Any, **kw: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("crash mid-phase")
        return real(*args, **kw)

    monkeypatch.setattr(overnight, "heuristic_work", crash_on_second)
    with pytest.raises(RuntimeError, match="crash mid-phase"):
        NightCycle(settings, db_url).run(only_stage=10)
    monkeypatch.setattr(overnight, "heuristic_work", real)
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT status FROM problem_queue ORDER BY created_at").fetchall(
            ) == [("worked",), ("open",)]
        assert len(_thoughts(conn, "overnight")) == 1
    resumed = NightCycle(settings, db_url).run(resume=True)
    stage = resumed["stages"]["10"]
    assert resumed["resumed"] and stage["worked"] == 2
    # queued by the crashed attempt: the resumed one adds nothing again
    assert stage["queued"] == {"open_question": 0, "contradiction": 0, "failed_prediction": 0}
    assert stage["worked_by"] == {overnight.HEURISTIC: 1} and stage["drift"] >= 1

    with psycopg.connect(db_url) as conn:
        queue = conn.execute(
            "SELECT problem_id::text, kind, status, result_thought_id::text, source_ids, "
            "last_run_id FROM problem_queue ORDER BY kind").fetchall()
        worked = _thoughts(conn, "overnight")
        drift = _thoughts(conn, "creative_drift")
    assert [q[1:3] for q in queue] == [("contradiction", "worked"), ("user_submitted", "worked")]
    assert all(q[5] == resumed["run_id"] for q in queue)
    by_id = {t[0]: t for t in worked}
    assert sorted(by_id) == sorted(q[3] for q in queue)  # one thought per problem, no more
    conflict = by_id[queue[0][3]]
    assert conflict[1] == nora and conflict[4] == pytest.approx(0.2)
    assert "low confidence 0.20" in conflict[2] and "heuristic" in conflict[2]
    assert {f"problem:{queue[0][0]}", f"memory:{a}", f"memory:{b}"} <= set(conflict[3])
    assert queue[1][0] == asked["problem_id"]
    assert by_id[queue[1][3]][3][0] == f"problem:{asked['problem_id']}"
    for t in drift:  # two distant RAPTOR nodes of nora's, and their blocks
        clusters = [s for s in t[3] if s.startswith("cluster:")]
        assert t[1] == nora and len(clusters) == 2 and t[4] == pytest.approx(0.2)
        assert any(s.startswith("block:") for s in t[3]) and "low confidence" in t[2]
    brief = Path(resumed["brief"]).read_text()
    assert "## Overnight thinking" in brief and queue[0][3] in brief

    # a re-run adds nothing twice: the problems are worked, the pairs already drifted
    again = NightCycle(settings, db_url).run(only_stage=10)
    with psycopg.connect(db_url) as conn:
        assert again["stages"]["10"]["worked"] == 0
        assert conn.execute("SELECT count(*) FROM problem_queue").fetchone() == (2,)
        assert _thoughts(conn, "overnight") == worked
        pairs = [tuple(sorted(s for s in t[3] if s.startswith("cluster:")))
                 for t in _thoughts(conn, "creative_drift")]
        assert len(pairs) == len(set(pairs)) >= len(drift)

    # the next session's handoff: nora's carries the overnight thought; bob's does not
    runtime = Runtime(settings)
    embedder = runtime.universal
    cont = runtime.continuity(default_counter().count)
    now = datetime.now(UTC)
    with psycopg.connect(db_url, autocommit=True) as conn:
        reaches = {}
        for who, user in (("nora", nora), ("bob", bob)):
            sid = make_session(conn, who)
            text = "Morning! What about the marathon date?"
            entry = _turn(conn, embedder, sid, user, text, now)
            reaches[who] = cont.turn(conn, session_id=sid, user_id=user, entry_id=entry,
                                     content=text, query_text=text)
        shown = conn.execute("SELECT thought_id::text, status FROM thoughts "
                             "WHERE kind IN ('overnight', 'creative_drift') "
                             "AND status = 'injected'").fetchall()
    items = reaches["nora"].metadata["handoff"]["items"]
    carried = [i for i in items if i["kind"] == "overnight"]
    assert carried and f"[memory:{carried[0]['id'].split(':', 1)[1]}]" in (
        reaches["nora"].handoff or "")
    assert {i["id"] for i in carried} == {f"thought:{t}" for t, _ in shown}
    bob_items = (reaches["bob"].metadata.get("handoff") or {}).get("items", [])
    assert not [i for i in bob_items if i["kind"] == "overnight"]


def test_cogd_problems_add_and_list_with_clear_errors(db_url: str, conn: Any) -> None:
    make_session(conn, "ada")
    env = cogd_env(COGD_DATABASE_URL=db_url)
    added = run("problems", "add", "Why do the nightly builds fail on Mondays?", "--user",
                "ada", "--json", env=env)
    assert added.returncode == 0, added.stderr
    pid = json.loads(added.stdout)["problem_id"]
    listed = run("problems", "--user", "ada", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    out = json.loads(listed.stdout)["problems"]
    assert [(p["problem_id"], p["kind"], p["status"]) for p in out] == [
        (pid, "user_submitted", "open")]
    plain = run("problems", "--user", "ada", env=env)
    assert "user_submitted [open]: Why do the nightly builds fail on Mondays?" in plain.stdout
    assert_clean_error(run("problems", "add", "why do the nightly builds  fail on mondays?",
                           "--user", "ada", env=env), f"already queued as {pid}")
    assert_clean_error(run("problems", "add", "   ", "--user", "ada", env=env),
                       "the problem is empty")
    assert_clean_error(run("problems", "add", "x", env=env), "give --user HANDLE")
