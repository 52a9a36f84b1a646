"""`cogd consolidate --once`, `cogd why`, proposals and goals as a user runs them (issue #5)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psycopg

from tests.acceptance.test_cli import COGD, assert_clean_error, run
from tests.acceptance.test_memory_cli import env_for
from tests.stubserver import StubServer, stub_server_fixture  # noqa: F401

INSIGHT = "Summer hiking in the Alps is a recurring favourite."

SESSIONS = {
    "monday": "Remember this: I love hiking in the Alps every summer.",
    "wednesday": "Remember this: hiking in the Swiss Alps is my favourite summer holiday.",
    "friday": "Remember this: every summer I go hiking in the Alps with my friends.",
}


def test_multi_session_chat_then_consolidate_and_why(db_url: str, tmp_path: Path,
                                                     stub_server: StubServer) -> None:
    # the consolidation role on a model (the stub answers INSIGHT): the heuristic
    # fallback forms no insight (tests/integration/test_consolidation.py)
    env = env_for(db_url, tmp_path, COGD_LLM__ROLES__CONSOLIDATION="openai",
                  COGD_LLM__PROFILES__OPENAI__BASE_URL=stub_server.openai_base_url,
                  COGD_LLM__PROFILES__OPENAI__MODEL="stub-chat",
                  OPENAI_API_KEY="sk-test-not-real", COGD_RETRY__MAX_RETRIES="0")
    stub_server.set_reply(INSIGHT)
    for session, line in SESSIONS.items():
        proc = subprocess.run([COGD, "chat", "--user", "sam", "--session", session],
                              input=f"{line}\nnice weather today\n", env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    first = run("consolidate", "--once", "--json", env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["changed"] and "merge" in report["operations"]
    insight = report["operations"]["merge"]["outputs"]["insights"][0]
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT m.content, m.status FROM memory_links l JOIN memories m ON "
            "m.memory_id = l.target_id WHERE l.source_id = %s AND l.link_type = 'supersedes'",
            (insight["insight"],)).fetchall()
        assert sorted(r[0] for r in rows) == sorted(SESSIONS.values())  # intact sources
        assert {r[1] for r in rows} == {"superseded"}
        logged = conn.execute("SELECT count(*) FROM consolidation_log WHERE operation = 'merge'"
                              ).fetchone()
        assert logged == (1,)
    traced = run("why", insight["insight"], env=env)
    assert traced.returncode == 0, traced.stderr
    for line in SESSIONS.values():
        assert line[:40] in traced.stdout
    assert traced.stdout.count("<- turn") == 3  # each source back to its day_table turn
    by_text = run("why", "hiking in the mountains in summer", "--json", env=env)
    assert by_text.returncode == 0 and json.loads(by_text.stdout)
    # a superseded source is still explained, and says which insight holds it now
    held = run("why", "Swiss Alps", env=env)
    assert held.returncode == 0, held.stderr
    assert "(superseded" in held.stdout
    assert f"held by insight {insight['insight']} (active): {INSIGHT}" in held.stdout
    second = run("consolidate", "--once", "--json", env=env, timeout=300)
    assert json.loads(second.stdout)["changed"] is False
    plain = run("consolidate", "--once", env=env, timeout=300)
    assert "nothing to do" in plain.stdout


def test_proposals_are_approved_or_rejected_by_a_person(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    with psycopg.connect(db_url, autocommit=True) as conn:
        ids = [conn.execute(
            "INSERT INTO proposals (target_layer, kind, payload) VALUES (0, 'new_value', "
            "%s::jsonb) RETURNING proposal_id::text",
            (json.dumps({"name": f"value_{n}", "description": f"honesty {n}",
                         "weight": 0.5}),)).fetchone()[0] for n in (1, 2)]
    listed = run("proposals", "--json", env=env)
    assert {p["id"] for p in json.loads(listed.stdout)} == set(ids)
    assert run("approve", ids[0], env=env).returncode == 0
    assert run("reject", ids[1], env=env).returncode == 0
    assert_clean_error(run("approve", ids[0], env=env), "already approved")
    assert_clean_error(run("approve", "not-an-id", env=env), "not a proposal id")
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT name, weight, source FROM identity WHERE source = "
                            "'proposal'").fetchall() == [("value_1", 0.5, "proposal")]
        actions = [r[0] for r in conn.execute("SELECT action FROM audit_log ORDER BY id")]
        assert "proposal_approved" in actions and "proposal_rejected" in actions
    assert "no pending proposals" in run("proposals", env=env).stdout


def test_goals_reset(db_url: str, tmp_path: Path) -> None:
    env = env_for(db_url, tmp_path)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("INSERT INTO goals (name, description, weight) VALUES "
                     "('cello', 'practise the cello', 0.92), ('run', 'run a marathon', 0.7)")
    assert "0.92  cello" in run("goals", env=env).stdout
    out = run("goals", "reset", "cello", env=env)
    assert out.returncode == 0 and "reset 1 goal(s) to 0.5" in out.stdout
    assert_clean_error(run("goals", "reset", "nope", env=env), "no active goal named 'nope'")
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT weight FROM goals WHERE name = 'cello'").fetchone() == (0.5,)
        assert conn.execute("SELECT reason FROM goals_history").fetchall() == [("manual reset",)]


HETZNER = [f"Remember this: Hetzner pricing is about three times cheaper than AWS, note {n}"
           for n in range(1, 9)]


def test_offline_consolidate_merges_near_duplicates_and_why_traces_them(
        db_url: str, tmp_path: Path) -> None:
    """issue 39: no model configured (every role on the heuristic profile): eight chat
    turns that differ only by a note number become one active extractive insight, which
    `cogd why` traces back to all eight turns; no contradiction is flagged among them."""
    env = env_for(db_url, tmp_path, COGD_LLM__ROLES__CONSOLIDATION="heuristic")
    proc = subprocess.run([COGD, "chat", "--user", "sam", "--session", "pricing"],
                          input="".join(f"{line}\n" for line in HETZNER), env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    first = run("consolidate", "--once", "--json", env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    ops = json.loads(first.stdout)["operations"]
    made = ops["merge"]["outputs"]["insights"]
    assert len(made) == 1 and len(made[0]["sources"]) == 8
    assert made[0]["content"] in HETZNER and "heuristic" in made[0]["heuristic"]
    assert not ops.get("contradictions", {}).get("outputs", {}).get("contradictions")
    with psycopg.connect(db_url) as conn:
        active = conn.execute("SELECT memory_id::text FROM memories WHERE status = 'active' "
                              "AND content LIKE '%Hetzner%'").fetchall()
        assert active == [(made[0]["insight"],)]
        assert conn.execute("SELECT count(*) FROM memories WHERE metadata ? 'flag'"
                            ).fetchone() == (0,)
    traced = run("why", made[0]["insight"], env=env)
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout.count("<- turn") == 8
    for line in HETZNER:
        assert line in traced.stdout
